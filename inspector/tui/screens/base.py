"""What every screen of the app shares: failures of its workers become notifications, and
notifications show their words literally (file names and session text are never markup)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.screen import Screen
from textual.worker import Worker, WorkerState

if TYPE_CHECKING:
    from inspector.tui.app import InspectorApp


class InspectorScreen(Screen[None]):
    """A screen whose workers report failures through the app's one handler."""

    @property
    def inspector(self) -> InspectorApp:
        """The app, typed (its options: provider, live watching, ...)."""
        from inspector.tui.app import InspectorApp

        app = self.app
        assert isinstance(app, InspectorApp)
        return app

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if not self.reports_failure(event.worker):
            self.inspector.report_worker(event.worker, event.state)
        self.worker_changed(event.worker, event.state)

    def reports_failure(self, worker: Worker[object]) -> bool:
        """Whether this screen tells of ``worker``'s failure itself, in its own words (``worker_changed``)."""
        return False

    def worker_changed(self, worker: Worker[object], state: WorkerState) -> None:
        """Hook for screens that show a worker's progress or outcome."""
