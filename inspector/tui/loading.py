"""Reading sessions for the app: the core's load and analyze, with progress.

Nothing here computes a figure: ``read_session`` reads the file through the
same reader as ``session-inspector analyze`` (``session.loader.read_open``:
a big recording block by block, in two processes) and calls
``analysis.analyze``; it only passes on the reader's progress and a way to
stop it between blocks.  Masking and cost are worked out after the table is
on screen (``tui/session_notes.py``).  Finding and listing sessions is
``inspector.catalog.listing``.

With ``show_tail``, a file bigger than ``session.tail.TAIL_BYTES`` has its end
read first, from the same descriptor, and handed over before the whole read
starts (its newest turns go on screen at once).
"""

from __future__ import annotations

import bisect
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from inspector.analysis import Analysis
from inspector.compaction.split import split_kind
from inspector.configured import analyse_configured
from inspector.live.extend import LiveState
from inspector.live.shared import shared_columns
from inspector.live.watch import CHECK_BYTES, FileState, state_of
from inspector.session import Session
from inspector.session.errors import ReadCancelled
from inspector.session.loader import open_session_file, paused_gc, read_open
from inspector.session.reader import ReadWatch, read_at
from inspector.session.records import MessageList
from inspector.session.release import give_back_free_memory
from inspector.session.tail import TailRead, read_tail
from inspector.settings import ConfiguredModel, Threshold
from inspector.tui.long_lived import keep_long_lived
from inspector.tui.turn_set import TurnSet

Progress = Callable[[str, int, int], None]

Cancelled = ReadCancelled  # loading was stopped (Esc, or a newer load replaced it)


def now_and_then(seconds: float) -> Callable[[Progress], Progress]:
    """A progress report passed on at most every ``seconds`` within a phase (each phase's first
    report, and its last, ``done == total``, always)."""

    def throttled(progress: Progress) -> Progress:
        said, when = "", 0.0  # the phase last passed on, and when

        def report(phase: str, done: int, total: int) -> None:
            nonlocal said, when
            now = time.monotonic()
            if phase == said and now - when < seconds and done < total:
                return
            said, when = phase, now
            progress(phase, done, total)

        return report

    return throttled


@dataclass
class Loaded:
    """A session as the app shows it: the file, its analysis, the threshold and the configured model used."""

    session: Session
    analysis: Analysis
    threshold: Threshold
    configured: ConfiguredModel  # decides how compression reads the history, so the split
    file_state: FileState | None = None  # what the watcher starts from: the bytes analysed
    agentic: list[int] | None = None  # agentic split candidates (model turns), sorted; None: not yet found
    agentic_set: TurnSet = field(default_factory=lambda: TurnSet(()), init=False, repr=False)
    live: LiveState | None = None  # what an append extends (``inspector.live.extend``); None until primed
    changed_from: int | None = None  # after an append: the first turn that is new or written again

    def __post_init__(self) -> None:
        if self.agentic is None:
            self.agentic = sorted(self.analysis.agentic_candidates)
        self.agentic_set = TurnSet(self.agentic)

    def find_agentic(self) -> list[int]:
        """The agentic candidates (the analysis found them from the reader's figures)."""
        assert self.agentic is not None  # set from the analysis when made
        return self.agentic

    def split_kind(self, split: int) -> str:
        """How ``split`` is named (``compaction.split.split_kind``)."""
        return split_kind(split, self.analysis.compress_split_point, split in self.agentic_set)

    def step_agentic(self, split: int, direction: int) -> int:
        """The next (+1) or previous (-1) agentic candidate from ``split`` (``split`` when there is none)."""
        found = self.agentic or []
        if direction > 0:
            pos = bisect.bisect_right(found, split)
            return found[pos] if pos < len(found) else split
        pos = bisect.bisect_left(found, split) - 1
        return found[pos] if pos >= 0 else split


def read_session(
    path: Path,
    *,
    model: str | None = None,
    threshold: float | None = None,
    progress: Progress = lambda phase, done, total: None,
    cancelled: Callable[[], bool] = lambda: False,
    show_tail: Callable[[TailRead], None] | None = None,
) -> Loaded:
    """``load`` + ``analyze`` with progress; raises SessionError or Cancelled.  ``show_tail``: given
    the file's tail (``session.tail.read_tail``) before the whole read, when the file has one."""
    progress("reading", 0, 0)
    # The collector stays paused from the read to the analysis, and what they built is frozen before it
    # runs again (tui/long_lived.py): its first pass would otherwise walk every object just made
    # (0.3 s on the 107 MB bench session, between the read and the analysis).
    with paused_gc():
        fd = open_session_file(path)
        try:
            if show_tail is not None:
                _show_tail(path, fd, show_tail)
            session = read_open(path, fd, ReadWatch(progress, cancelled))
            file_state = _file_state(path, fd, session)
        finally:
            os.close(fd)
        if cancelled():
            raise Cancelled
        progress("analysing", 0, 0)
        configured = analyse_configured(session, model, threshold, project_dir=Path.cwd())
        if cancelled():
            raise Cancelled
        keep_long_lived()
    analysis, chosen_threshold, chosen = configured.analysis, configured.threshold, configured.model
    del configured
    session, analysis = shared_columns(session, analysis)  # (the read's lists let go of)
    give_back_free_memory()  # what the read built and let go of (session/release.py)
    return Loaded(session, analysis, chosen_threshold, chosen, file_state)


def _show_tail(path: Path, fd: int, show: Callable[[TailRead], None]) -> None:
    """The file's tail to ``show``, when it has one (a tail that cannot be read is not shown: the whole
    read says why)."""
    try:
        tail = read_tail(path, fd)
    except OSError:
        return
    if tail is not None:
        show(tail)


def _file_state(path: Path, fd: int, session: Session) -> FileState:
    """What the watcher starts from: the bytes just read (``watch.state_of``), from the same
    descriptor; for a recording read block by block, from its end and the reader's line count."""
    size = session.size
    streamed = isinstance(session.messages, MessageList) and session.messages.reads_file
    tail = read_at(fd, max(size - CHECK_BYTES, 0), min(size, CHECK_BYTES))
    end = tail.rfind(b"\n") + 1
    if not streamed or len(tail) != min(size, CHECK_BYTES) or (end == 0 and len(tail) < size):
        return state_of(path, read_at(fd, 0, size), session.inode, session.mtime_ns)  # small, or a long last line
    newlines = session.line_count - (0 if session.ends_with_newline else 1)  # no CR in a streamed file
    return FileState(path, True, session.inode, size, newlines, tail[end:], tail, session.mtime_ns)
