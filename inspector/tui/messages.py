"""Messages the app's workers and widgets post: small dataclasses, nothing more.

Workers never touch widgets; they post one of these and the screen that owns
them updates itself.  Frequent progress messages replace each other in the
queue (``can_replace``) so a fast loop never floods the app.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from textual.message import Message

if TYPE_CHECKING:
    from inspector.catalog.listing import SessionEntry
    from inspector.compaction.compress import CompressionResult
    from inspector.compaction.strategies import Comparison
    from inspector.live.watch import Appended
    from inspector.progress import Progress
    from inspector.session.errors import LoadWarning
    from inspector.session.tail import TailRead
    from inspector.store.journal import JournalEntry
    from inspector.store.reverting import RevertResult
    from inspector.tui.loading import Loaded


@dataclass
class LoadProgress(Message):
    """How far loading a session has gone (``total`` 0: no known total)."""

    phase: str
    done: int = 0
    total: int = 0

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, LoadProgress) and message.phase == self.phase  # each phase's latest arrives


@dataclass
class SessionLoaded(Message):
    """A session was read and analysed."""

    loaded: Loaded
    reason: str = "open"  # "open", "reload" or "live"


@dataclass
class TailShown(Message):
    """The newest turns of a big file, read from its end, while the whole file is read."""

    tail: TailRead


@dataclass
class NotesReady(Message):
    """Masking and cost were worked out for ``loaded`` (after the table was shown)."""

    loaded: Loaded
    read: int  # which full read of the file it descends from (the screen's count)


@dataclass
class SessionListed(Message):
    """One file of the session list, read in the background."""

    entry: SessionEntry


@dataclass
class TurnSelected(Message):
    """The cursor of the turn table moved to a turn."""

    index: int

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, TurnSelected)


@dataclass
class CompactionProgress(Message):
    """A step of a running compaction: a label to show, or the core's ``Progress`` (stage, done, total)."""

    text: str
    progress: Progress | None = None

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, CompactionProgress)


@dataclass
class CompactionFinished(Message):
    """A compaction preview is ready (``result`` is the core's result object)."""

    result: CompressionResult
    split: int
    focus: str
    source: Loaded | None = None  # the session and history it was computed from


@dataclass
class Applied(Message):
    """A compaction was written to disk."""

    path: Path
    backup: Path | None
    detail: JournalEntry


@dataclass
class Reverted(Message):
    """The newest apply was undone."""

    path: Path
    detail: RevertResult


@dataclass
class FileChanged(Message):
    """The open session file changed on disk (``kind``: appended, rewritten, truncated, deleted,
    unreadable)."""

    kind: str
    path: Path
    own: bool = False  # this process's own apply / revert
    appended: Appended | None = None  # the new lines, for an append (the view extends what it shows)
    reason: str = ""  # unreadable: what the system said
    unfinished: LoadWarning | None = None  # an append: what a whole read says of a last line without its newline


@dataclass
class CompareFinished(Message):
    """Both strategies ran on the same history (``comparison``: ``strategies.Comparison``)."""

    comparison: Comparison
    split: int


@dataclass
class AgenticFound(Message):
    """The agentic split candidates of ``loaded`` are known (``loaded.agentic``), and ``point``,
    the split ``compact --agentic`` takes (0: none; None: not computed yet)."""

    loaded: Loaded
    point: int | None = None


@dataclass
class TableColumns(Message):
    """The turn table chose its columns for the width on screen (``header``: their titles, aligned)."""

    header: str

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, TableColumns)


@dataclass
class TableDrawn(Message):
    """The turn table drew rows of the analysis it was last given."""


@dataclass
class SearchFound(Message):
    """The turns of ``loaded`` whose text holds ``query`` (case-insensitive), in order."""

    query: str
    matches: list[int]
    loaded: Loaded
    jump: bool = True  # move the cursor to the first match (False: the file was read again)


@dataclass
class ViewCleared(Message):
    """The turn table dropped its filter and order (to show a turn the filter hid)."""


@dataclass
class ViewReady(Message):
    """The turns of ``loaded`` a filter keeps, in the order chosen (``by_tokens``: largest first)."""

    shown: list[int] | None
    by_tokens: bool
    loaded: Loaded


@dataclass
class ShowTurn(Message):
    """Show this turn of the history in the session view (from a snapshot line or a lost fact)."""

    index: int


# -- the session view's parts tell the view (tui/session/): messages up, calls down ----------------
@dataclass
class LoadRequested(Message):
    """A part of the session view needs the file read whole again (``reason``: "reload" after an apply
    or an undo, "live" after a change on disk an append cannot extend)."""

    reason: str


@dataclass
class PreviewOutdated(Message):
    """The file changed on disk (``why``, in words): a preview computed before no longer fits it."""

    why: str


@dataclass
class WarningsChanged(Message):
    """What a whole read would skip changed (a last line still being written): the header counts it."""


@dataclass
class NotesShown(Message):
    """Masking and cost of ``loaded`` are ready (or carried over to it): the marks, cost and detail redraw."""

    loaded: Loaded


@dataclass
class NotesFinished(Message):
    """The pass working out masking and cost for ``loaded`` ended, done or failed: a next long pass may start."""

    loaded: Loaded


@dataclass
class WholeRead(Message):
    """The live view started (``started``) or ended a whole read of the file after a change on disk;
    ``waiting``: the appends seen meanwhile, held for it (extended from where it ends)."""

    started: bool
    waiting: int = 0


@dataclass
class StoreDone(Message):
    """This view's own apply or undo ended (``wrote``: it changed the file, and the view reads it again)."""

    wrote: bool
