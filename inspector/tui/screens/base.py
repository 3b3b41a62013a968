"""What every screen of the app shares: failures of its workers become notifications, and
notifications show their words literally (file names and session text are never markup).

Screens reach the app through ``Inspector``, a protocol of what they ask of it: the app
imports its screens, so a screen importing the app would close a circle."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from textual.dom import DOMNode
from textual.screen import Screen
from textual.worker import Worker, WorkerState

from inspector.compaction.request import CompactionRequest
from inspector.tui.loading import Cancelled


@runtime_checkable
class Inspector(Protocol):
    """What a screen asks of the app (``InspectorApp``): its options and where to go next."""

    live: bool  # follow the open session's file as it changes
    model: str | None  # --model: the model the window is taken from
    threshold: float | None  # --threshold
    request: CompactionRequest  # the default request every run derives from (what the command line said; P
    # changes its provider)

    def open_session(self, path: Path, turn: int | None = None) -> None: ...

    def show_session_list(self, current: Screen[Any] | None = None) -> None: ...


def inspector_of(node: DOMNode) -> Inspector:
    """The app ``node`` runs in, typed by what screens and their parts ask of it."""
    app = node.app
    assert isinstance(app, Inspector)
    return app


def report_failure(node: DOMNode, worker: Worker[object], state: WorkerState) -> None:
    """A worker's failure becomes a notification (never a traceback); a cancel says nothing."""
    if state != WorkerState.ERROR or isinstance(worker.error, Cancelled):
        return
    what = worker.description or worker.name or "background work"
    node.app.notify(str(worker.error) or type(worker.error).__name__, title=f"Failed: {what}",
                    severity="error", timeout=8)


class InspectorScreen(Screen[None]):
    """A screen whose workers report failures through one handler (``report_failure``)."""

    @property
    def inspector(self) -> Inspector:
        """The app, typed by what screens ask of it (its options: provider, live watching, ...)."""
        return inspector_of(self)

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if not self.reports_failure(event.worker):
            report_failure(self, event.worker, event.state)
        self.worker_changed(event.worker, event.state)

    def reports_failure(self, worker: Worker[object]) -> bool:
        """Whether this screen tells of ``worker``'s failure itself, in its own words (``worker_changed``)."""
        return False

    def worker_changed(self, worker: Worker[object], state: WorkerState) -> None:
        """Hook for screens that show a worker's progress or outcome."""


class TurnsScreen(InspectorScreen):
    """A screen that shows a history's turns and goes to one on ``ShowTurn`` (the session view): a
    preview's line or fact finds it below itself by this class, without importing the screen."""
