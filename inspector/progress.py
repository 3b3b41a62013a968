"""Progress and cancellation for long core work, as plain typed values.

The core reports what it is doing through a ``Reporter`` and checks it for
cancellation between units of work; the faces decide how to show it (the app
draws a bar with the stage and the turns done, the CLI stays quiet).  Nothing
here knows about threads or Textual.

    reporter = Reporter(on_progress=show, is_cancelled=lambda: worker.is_cancelled)
    for i, turn in enumerate(turns):
        reporter.check()                   # raises Cancelled when asked to stop
        reporter.report("summary draft", i, len(turns))
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass


class Cancelled(Exception):
    """The work was asked to stop (Esc in the app, or a newer run replaced it)."""


@dataclass(frozen=True)
class Progress:
    """One report: the stage running, and how many of its units are done."""

    stage: str  # what is running, in a few words ("summary draft", "verification", ...)
    done: int  # units of this stage done so far
    total: int  # units this stage has in all; 0 when not known

    @property
    def fraction(self) -> float | None:
        return min(1.0, self.done / self.total) if self.total > 0 else None


@dataclass(frozen=True)
class Reporter:
    """Where progress goes and where cancellation comes from; both optional."""

    on_progress: Callable[[Progress], None] | None = None
    is_cancelled: Callable[[], bool] | None = None

    def report(self, stage: str, done: int, total: int = 0) -> None:
        if self.on_progress is not None:
            self.on_progress(Progress(stage, done, total))

    def check(self) -> None:
        """Raise ``Cancelled`` if the work should stop now."""
        if self.is_cancelled is not None and self.is_cancelled():
            raise Cancelled


SILENT = Reporter()  # reports nowhere, never cancelled
