"""A part of the session view: a widget that draws nothing and owns some state and workers.

The screen mounts it, calls its methods (attributes down) and handles the
messages it posts (messages up).  Its workers' failures become notifications
through the screens' one handler; a part that says a failure in its own words
answers ``reports_failure``.
"""

from __future__ import annotations

from typing import ClassVar

from textual.widget import Widget
from textual.worker import Worker, WorkerState

from inspector.tui.screens.base import report_failure


class Part(Widget):
    """A non-visual piece of a screen with its own state, workers and timers."""

    DEFAULT_CSS: ClassVar[str] = "Part { display: none; }"
    can_focus = False

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if not self.reports_failure(event.worker):
            report_failure(self, event.worker, event.state)
        self.worker_changed(event.worker, event.state)

    def reports_failure(self, worker: Worker[object]) -> bool:
        """Whether this part tells of ``worker``'s failure itself (``worker_changed``)."""
        return False

    def worker_changed(self, worker: Worker[object], state: WorkerState) -> None:
        """Hook for a part that follows its workers' outcome."""
