"""Reading sessions for the app: the core's load and analyze, with progress.

Nothing here computes a figure: ``read_session`` calls ``session.parse`` and
``analysis.analyze`` exactly as ``session-inspector analyze`` does, and only
adds a progress report while the bytes come in and a way to stop between
steps.  Masking and cost are worked out after the table is on screen
(``tui/session_notes.py``).  Finding and listing sessions is ``inspector.catalog``.
"""

from __future__ import annotations

import bisect
import contextlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from inspector.analysis import Analysis, analyze
from inspector.live import LiveState
from inspector.session import Session, parse
from inspector.session.loader import read_bytes
from inspector.settings import Threshold, resolve_threshold
from inspector.tui.turn_set import TurnSet
from inspector.watch import FileState, state_of

CHUNK = 4 << 20
Progress = Callable[[str, int, int], None]


class Cancelled(Exception):
    """Loading was stopped (Esc, or a newer load replaced it)."""


@dataclass
class Loaded:
    """A session as the app shows it: the file, its analysis and the threshold used."""

    session: Session
    analysis: Analysis
    threshold: Threshold
    file_state: FileState | None = None  # what the watcher starts from: the bytes analysed
    agentic: list[int] | None = None  # agentic split candidates (model turns), sorted; None: not yet found
    agentic_set: TurnSet = field(default_factory=lambda: TurnSet(()), init=False, repr=False)
    live: LiveState | None = None  # what an append extends (``inspector.live``); None until primed
    changed_from: int | None = None  # after an append: the first turn that is new or written again

    def __post_init__(self) -> None:
        found = getattr(self.analysis, "agentic_candidates", None)
        if self.agentic is None and found is not None:
            self.agentic = sorted(found)
        self.agentic_set = TurnSet(self.agentic or ())

    def find_agentic(self) -> list[int]:
        """The agentic candidates, computed once from the turns (seconds on a 170k-turn session:
        the app does it in a worker after the table is on screen)."""
        if self.agentic is None:
            from inspector.compaction.agentic import agentic_candidates

            found = agentic_candidates([turn.content for turn in self.analysis.turns])
            self.agentic_set = TurnSet(found)
            self.agentic = found
        return self.agentic

    def split_kind(self, split: int) -> str:
        """How ``split`` was chosen: "reference" (Gemini CLI's own), "agentic" (before a model
        turn) or "moved" (before another prompt)."""
        if split == self.analysis.split_point:
            return "reference"
        return "agentic" if split in self.agentic_set else "moved"

    def step_agentic(self, split: int, direction: int) -> int:
        """The next (+1) or previous (-1) agentic candidate from ``split`` (``split`` when there is none)."""
        found = self.agentic or []
        if direction > 0:
            pos = bisect.bisect_right(found, split)
            return found[pos] if pos < len(found) else split
        pos = bisect.bisect_left(found, split) - 1
        return found[pos] if pos >= 0 else split


def _read(path: Path, progress: Progress, cancelled: Callable[[], bool]) -> bytes:
    try:
        size = path.stat().st_size
        if size < CHUNK or not path.is_file():
            return read_bytes(path)
        chunks: list[bytes] = []
        done = 0
        with path.open("rb") as handle:
            while chunk := handle.read(CHUNK):
                if cancelled():
                    raise Cancelled
                chunks.append(chunk)
                done += len(chunk)
                progress("reading", done, size)
        return b"".join(chunks)
    except OSError:
        return read_bytes(path)  # raises the SessionError that says why


def read_session(
    path: Path,
    *,
    model: str | None = None,
    threshold: float | None = None,
    progress: Progress = lambda phase, done, total: None,
    cancelled: Callable[[], bool] = lambda: False,
) -> Loaded:
    """``load`` + ``analyze`` with progress; raises SessionError or Cancelled."""
    progress("reading", 0, 0)
    data = _read(path, progress, cancelled)
    if cancelled():
        raise Cancelled
    progress("parsing", 0, 0)
    session = parse(path, data)
    inode = None
    with contextlib.suppress(OSError):
        info = path.stat()
        session.mtime_ns, inode = info.st_mtime_ns, info.st_ino
    if cancelled():
        raise Cancelled
    progress("analysing", 0, 0)
    chosen = resolve_threshold(threshold, project_dir=Path.cwd())
    result = analyze(session, model=model, threshold=chosen.value)
    if cancelled():
        raise Cancelled
    return Loaded(session, result, chosen, state_of(path, data, inode, session.mtime_ns))
