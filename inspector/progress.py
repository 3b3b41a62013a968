"""Progress and cancellation for long core work, as plain typed values.

The core reports what it is doing through a ``Reporter`` and checks it for
cancellation between units of work; the faces decide how to show it (the app
draws a bar with the stage and the turns done, the CLI stays quiet).  Nothing
here knows about threads or Textual.  A long read of a session file is said
on the CLI's stderr (``ReadShown``, ``load_showing_progress``).

    reporter = Reporter(on_progress=show, is_cancelled=lambda: worker.is_cancelled)
    for i, turn in enumerate(turns):
        reporter.check()                   # raises Cancelled when asked to stop
        reporter.report("summary draft", i, len(turns))
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, TextIO

if TYPE_CHECKING:
    from inspector.session.loader import Session


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


class ReadShown:
    """How far a long read of a file got, said on the CLI's stderr once it has run longer than
    ``after`` seconds, when stderr is a terminal: one line rewritten in place, erased at the end
    (so an error said after it is still the one line on screen).  Elsewhere (a log, a pipe, a
    script reading stderr) it says nothing.  Called as a ``ReadWatch`` progress: ``(phase, bytes
    done, bytes in all)``; the read's two phases (reading, parsing) are each half of it."""

    def __init__(self, label: str, stream: TextIO, *, after: float = 1.0,
                 clock: Callable[[], float] | None = None) -> None:
        self.label, self.stream, self.after = label, stream, after
        self.clock = clock if clock is not None else time.monotonic
        self.began = self.clock()
        self.terminal = stream.isatty()
        self.said = -1  # the last percentage said
        self.width = 0  # what the terminal's line holds

    def __call__(self, phase: str, done: int, total: int) -> None:
        if not self.terminal or total <= 0 or self.clock() - self.began < self.after:
            return
        percent = min(100, (50 if phase != "reading" else 0) + done * 50 // total)
        if percent != self.said:
            line = f"{self.label}: {percent}% ({phase})"
            self.stream.write("\r" + line.ljust(self.width))
            self.stream.flush()
            self.width = max(self.width, len(line))
            self.said = percent

    def close(self) -> None:
        """Erase the terminal's line, if one was written."""
        if self.width:
            self.stream.write("\r" + " " * self.width + "\r")
            self.stream.flush()
            self.width = 0


def load_showing_progress(path: str | os.PathLike[str]) -> Session:
    """``session.load(path)`` for the command line: a read longer than a second says how far it got
    on stderr (``ReadShown``)."""
    from inspector.format import visible
    from inspector.session.loader import load
    from inspector.session.reader import ReadWatch

    shown = ReadShown(f"session-inspector: reading {visible(os.fspath(path), one_line=True)}", sys.stderr)
    try:
        return load(path, ReadWatch(progress=shown))
    finally:
        shown.close()
