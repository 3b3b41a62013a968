"""Reading sessions for the app: the core's load and analyze, with progress.

Nothing here computes a figure: ``read_session`` calls ``session.parse`` and
``analysis.analyze`` exactly as ``session-inspector analyze`` does, and only
adds a progress report while the bytes come in and a way to stop between
steps.  Listing sessions reads each file with the same ``load``.
"""

from __future__ import annotations

import bisect
import contextlib
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from inspector.analysis import Analysis, analyze, project_temp_dir
from inspector.jsjson import js_to_string
from inspector.live import LiveState
from inspector.session import Session, SessionError, history, load, parse
from inspector.session.history import is_ignored_user_content
from inspector.session.loader import read_bytes
from inspector.settings import Threshold, gemini_home, resolve_threshold
from inspector.tui.session_notes import note_session
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
    agentic_set: frozenset[int] = field(default=frozenset(), init=False, repr=False)
    live: LiveState | None = None  # what an append extends (``inspector.live``); None until primed
    changed_from: int | None = None  # after an append: the first turn that is new or written again

    def __post_init__(self) -> None:
        found = getattr(self.analysis, "agentic_candidates", None)
        if self.agentic is None and found is not None:
            self.agentic = sorted(found)
        self.agentic_set = frozenset(self.agentic or ())

    def find_agentic(self) -> list[int]:
        """The agentic candidates, computed once from the turns (seconds on a 170k-turn session:
        the app does it in a worker after the table is on screen)."""
        if self.agentic is None:
            from inspector.compaction.agentic import agentic_candidates

            found = agentic_candidates([turn.content for turn in self.analysis.turns])
            self.agentic_set = frozenset(found)
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
    note_session(result, session)  # masking and cost, for the view (tui/session_notes.py)
    if cancelled():
        raise Cancelled
    return Loaded(session, result, chosen, state_of(path, data, inode, session.mtime_ns))


# -- the session list ---------------------------------------------------------------


@dataclass
class SessionInfo:
    """One row of the session list."""

    path: Path
    project: str
    size: int
    mtime: float
    messages: int | None = None
    prompt: str = ""
    format: str = ""
    error: str | None = None

    @property
    def search_text(self) -> str:
        return f"{self.project} {self.path.name} {self.prompt}".lower()


def chats_root() -> Path:
    """``~/.gemini/tmp`` (honouring GEMINI_CLI_HOME)."""
    return gemini_home() / ".gemini" / "tmp"


def _candidates(folder: Path | None) -> Iterator[Path]:
    if folder is not None:
        for pattern in ("*.jsonl", "*.json"):
            yield from folder.glob(pattern)
        return
    root = chats_root()
    for pattern in ("*/chats/*.jsonl", "*/chats/*.json", "*/chats/*/*.jsonl"):
        yield from root.glob(pattern)


def list_sessions(folder: Path | None = None) -> list[SessionInfo]:
    """The session files under ``folder`` (or every project's chats), newest first."""
    rows: list[SessionInfo] = []
    seen: set[Path] = set()
    for path in _candidates(folder):
        if path in seen or not path.is_file():
            continue
        seen.add(path)
        try:
            info = path.stat()
        except OSError:
            continue
        rows.append(SessionInfo(path, project_temp_dir(path).name, info.st_size, info.st_mtime))
    rows.sort(key=lambda row: (-row.mtime, row.path.name))
    return rows


def first_prompt(session: Session) -> str:
    """The first real prompt: the first user text turn of the history (context and snapshots skipped)."""
    for turn in history(session):
        if turn.role != "user" or turn.is_tool_result:
            continue
        if session.contents is not None and is_ignored_user_content(turn.parts):
            continue  # a checkpoint keeps its <session_context> turn
        texts = [js_to_string(p.get("text")) for p in turn.parts if isinstance(p, dict) and "text" in p]
        if texts and texts[0].lstrip().startswith("<state_snapshot>"):
            continue  # a compressed session starts with its summary, not a prompt
        if texts:
            return " ".join(" ".join(texts).split())
    return ""


def describe(info: SessionInfo) -> SessionInfo:
    """Fill in the message count and first prompt by reading the file."""
    try:
        session = load(info.path)
    except SessionError as exc:
        info.error = exc.message
        return info
    except (OSError, ValueError, RecursionError) as exc:  # defensive: never break the list
        info.error = str(exc) or type(exc).__name__
        return info
    info.format = session.format
    info.messages = len(session.contents) if session.contents is not None else len(session.messages)
    info.prompt = first_prompt(session)
    return info


def human_size(size: int) -> str:
    value = float(size)
    for unit in ("B", "kB", "MB", "GB"):
        if value < 1000 or unit == "GB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1000
    return f"{size} B"


def is_folder(path: Path) -> bool:
    return os.path.isdir(path)
