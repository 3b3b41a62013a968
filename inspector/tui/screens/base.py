"""What every screen of the app shares: failures of its workers become notifications."""

from __future__ import annotations

from textual.screen import Screen
from textual.worker import Worker, WorkerState


class InspectorScreen(Screen[None]):
    """A screen whose workers report failures through the app's one handler."""

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        report = getattr(self.app, "report_worker", None)
        if report is not None:
            report(event.worker, event.state)
        self.worker_changed(event.worker, event.state)

    def worker_changed(self, worker: Worker[object], state: WorkerState) -> None:
        """Hook for screens that show a worker's progress or outcome."""
