"""The journal of one session: every apply and revert, append-only.

``<folder>/.session-inspector/<file name>/journal.jsonl`` holds one JSON
object a line.  An apply writes two events: ``apply`` before the session is
touched (what is about to be written, the backup, the figures) and
``applied`` once it is on disk (where it landed, the hashes after).  A revert
writes ``reverting`` (the bytes it is about to put back) before it touches
the file, and ``revert`` once they are there; a revert cut short in between
is settled from the file itself (``settle.settle``).  An ``apply`` without
its ``applied`` is shown as incomplete (revert still finds what it wrote by
content).

A journal survives a short write and a crash: a last line cut short (no
newline, not a whole JSON object) is an event that never finished, so it is
ignored on reading and cut off before the next event is written; a whole
event that only lacks its newline counts, and gets its newline then.  Any other line that is not a
well-formed event is damage: reading refuses with the line and what is
wrong, never skipping it silently.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Annotated, Any

import pydantic

from inspector.compaction.budget import TOOL_OUTPUTS_DIR
from inspector.compaction.saved_outputs import in_tool_outputs
from inspector.format import describe_os_error, plural
from inspector.store.errors import StoreError
from inspector.store.files import JOURNAL_NAME, SWAPPED_DIR, WriteHook, fsync_dir, read_own_file, write_all
from inspector.store.recording import CaughtUp

# Every figure a journal holds is what this project wrote: a count or size that is a string, a
# boolean, a float or below zero is damage, refused on reading (never read as the number it looks like).
Count = Annotated[int, pydantic.Field(strict=True, ge=0)]
Text = Annotated[str, pydantic.Field(strict=True)]
Digest = Annotated[str, pydantic.Field(strict=True, pattern=r"^[0-9a-f]{64}$")]


@dataclass(frozen=True)
class JournalInfo:
    """What the caller knows about the compaction being applied."""

    status: str = "COMPRESSED"
    split_point: int | None = None
    tokens_before: int | None = None
    tokens_after: int | None = None
    recorded_prompt_tokens: int | None = None
    provider: str | None = None
    model: str | None = None
    duration_seconds: float | None = None
    snapshot: str | None = None
    note: str | None = None


@dataclass(frozen=True)
class Region:
    """Bytes this project appended to a JSONL file: where, how many, which."""

    offset: Count
    length: Count
    sha256: Digest


@dataclass(frozen=True)
class RevertIntent:
    """A revert about to write: the file's first bytes before (``from_*``) and after, by hash."""

    sha256: str
    size: int
    from_sha256: str
    from_size: int


@dataclass(frozen=True)
class JournalEntry:
    """One apply, as the journal remembers it."""

    id: Text
    seq: Count
    applied_at: Text
    file: Text
    format: Text
    info: JournalInfo
    size_before: Count
    sha256_before: Digest
    backup: Text  # file name under the store folder's backups/
    size_after: Count | None = None
    sha256_after: Digest | None = None
    planned_sha256: Digest | None = None  # jsonl: of the appended bytes; else: of the new file
    planned_length: Count | None = None
    regions: tuple[Region, ...] = ()
    output_files: tuple[Text, ...] = ()
    outputs_new: tuple[Text, ...] = ()  # the output files this apply created (its revert removes them)
    outputs_new_sha256: tuple[Digest, ...] = ()  # what each held (revert removes only a file that still does)
    turns_before: Count = 0
    turns_after: Count = 0
    records_reused: Count = 0
    records_adapted: Count = 0
    records_created: Count = 0
    carried_lines: Count = 0
    lost_bytes: Count = 0  # what another writer appended during the swap and could not be copied after it
    lost_reason: Text = ""
    late_bytes: Count = 0  # what another writer wrote to the old file while it was swapped, copied to the session
    swapped_size: Count | None = None  # jsonl: the old file's size when last copied from (it is kept: swapped/)
    swap_note: Text = ""  # what else the swap's drain said (CaughtUp.note)
    housekeeping: tuple[Text, ...] = ()  # what the apply found and tidied first (late lines carried, leftovers)
    state: Text = "applied"  # applied | incomplete | failed | reverted
    reverted_at: Text | None = None
    revert_note: Text | None = None
    reverting: RevertIntent | None = None  # a revert began and did not say it finished
    revert_swapped_size: Count | None = None  # jsonl: as ``swapped_size``, for the revert's old file

    def notes(self) -> tuple[str, ...]:
        """What a person must know about this apply beyond its figures (both faces show these)."""
        notes = []
        if self.carried_lines:
            notes.append(f"{plural(self.carried_lines, 'line', 'lines')} another writer appended meanwhile "
                         f"{'was' if self.carried_lines == 1 else 'were'} repeated after the checkpoint")
        if self.late_bytes:
            notes.append(f"{plural(self.late_bytes, 'byte', 'bytes')} another program wrote to the file while it was "
                         "swapped (through the old file) were copied to the end of the session")
        if self.lost_bytes:
            kept = Path(SWAPPED_DIR) / f"{self.id}-apply-*" if self.swapped_size is not None else None
            notes.append(CaughtUp(0, self.lost_bytes, self.lost_reason, kept=kept).lost_note())
        if self.swap_note:
            notes.append(self.swap_note)
        notes.extend(self.housekeeping)
        return tuple(notes)

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["regions"] = [asdict(r) for r in self.regions]
        data["output_files"] = list(self.output_files)
        data["outputs_new"] = list(self.outputs_new)
        data["outputs_new_sha256"] = list(self.outputs_new_sha256)
        data["housekeeping"] = list(self.housekeeping)
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> JournalEntry:
        """Raises pydantic.ValidationError on a field of the wrong shape."""
        return _ENTRY.validate_python(data)


@dataclass
class Journal:
    path: Path
    entries: list[JournalEntry] = field(default_factory=list)
    events: list[dict[str, Any]] = field(default_factory=list)

    def undoable(self) -> list[JournalEntry]:
        """Applies that can still be reverted, newest first."""
        return [e for e in reversed(self.entries) if e.state in ("applied", "incomplete")]

    def next_seq(self) -> int:
        return max((e.seq for e in self.entries), default=0) + 1


class _Applied(pydantic.BaseModel):
    id: Text
    size_after: Count | None = None
    sha256_after: Digest | None = None
    regions: tuple[Region, ...] = ()
    carried_lines: Count = 0
    lost_bytes: Count = 0
    lost_reason: Text = ""
    late_bytes: Count = 0
    swapped_size: Count | None = None
    swap_note: Text = ""


class _Closed(pydantic.BaseModel):  # failed | revert
    id: Text
    error: Text | None = None
    at: Text | None = None
    note: Text | None = None
    swapped_size: Count | None = None


class _Reverting(pydantic.BaseModel):
    id: Text
    sha256: Digest
    size: Count
    from_sha256: Digest
    from_size: Count


_ENTRY = pydantic.TypeAdapter(JournalEntry)


def _damaged(path: Path, number: int, what: str) -> StoreError:
    return StoreError(
        path, f"line {number:,} is damaged ({what}); undo history cannot be trusted. Move the journal aside "
        "to start a new one (the backups stay in backups/)", "journal",
    )


def _first_error(exc: pydantic.ValidationError) -> str:
    error = exc.errors()[0]
    where = ".".join(str(x) for x in error["loc"])
    return f"{where}: {error['msg']}" if where else error["msg"]


def read_journal(folder: Path) -> Journal:
    """The journal in ``folder``; raises StoreError (``journal``) naming a damaged line."""
    path = folder / JOURNAL_NAME
    journal = Journal(path)
    try:
        data = read_own_file(path)
    except FileNotFoundError:
        return journal
    except OSError as exc:
        raise StoreError(path, f"cannot read the journal: {describe_os_error(exc)}", "journal") from None
    lines = data.split(b"\n")
    if lines[-1] and not _whole_event(lines[-1]):
        lines.pop()  # cut short by a crash or a full disk: an event that never finished
    by_id: dict[str, int] = {}  # an apply's id -> its place in journal.entries
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            event = json.loads(line)
        except (ValueError, RecursionError) as exc:
            raise _damaged(path, number, f"not JSON: {exc}") from None
        if not isinstance(event, dict) or not isinstance(event.get("event"), str):
            raise _damaged(path, number, "not an event")
        odd = _odd_number(event)
        if odd is not None:
            raise _damaged(path, number, odd)
        try:
            _apply_event(journal, by_id, event)
        except pydantic.ValidationError as exc:
            raise _damaged(path, number, _first_error(exc)) from None
        except KeyError as exc:
            raise _damaged(path, number, f"{exc.args[0]!r} names no apply before it") from None
        except ValueError as exc:
            raise _damaged(path, number, str(exc)) from None
        journal.events.append(event)
    return journal


def _odd_number(value: Any, where: str = "") -> str | None:
    """What is wrong with the first number in an event that this project never writes, with where it
    is: NaN or an infinity (it writes JSON without them), or one past the doubles' range (a session
    holding one is refused on reading, as JavaScript reads it as Infinity; only a hand-edited journal
    has one); None if every number is one it could write."""
    if isinstance(value, bool):
        return None
    if isinstance(value, float) and not math.isfinite(value):
        return f"{where.lstrip('.') or 'a value'}: {value} is not a number JSON holds"
    if isinstance(value, int):
        try:
            float(value)
        except OverflowError:
            return f"{where.lstrip('.') or 'a value'}: a number past any count, size or time"
        return None
    if isinstance(value, dict):
        items: Any = value.items()
    elif isinstance(value, list):
        items = enumerate(value)
    else:
        return None
    for key, item in items:
        found = _odd_number(item, f"{where}[{key}]" if isinstance(key, int) else f"{where}.{key}")
        if found is not None:
            return found
    return None


def _apply_event(journal: Journal, by_id: dict[str, int], event: dict[str, Any]) -> None:
    kind = event["event"]
    if kind == "apply":
        entry = replace(JournalEntry.from_json(event), state="incomplete")
        _check_paths(entry)
        if entry.id in by_id:  # (a journal joined from copies): which of the two would a revert undo?
            raise ValueError(f"apply {entry.id!r} is recorded a second time")
        by_id[entry.id] = len(journal.entries)
        journal.entries.append(entry)
        return
    if kind not in ("applied", "failed", "revert", "reverting"):
        return  # an event a later version writes: nothing this one acts on
    ident = event.get("id")
    if not isinstance(ident, str) or ident not in by_id:
        raise KeyError(ident)
    entry = journal.entries[by_id[ident]]
    if kind == "applied":
        done = _Applied.model_validate(event)
        update = replace(
            entry, state="applied", size_after=done.size_after, sha256_after=done.sha256_after,
            regions=done.regions, carried_lines=done.carried_lines, lost_bytes=done.lost_bytes,
            lost_reason=done.lost_reason, late_bytes=done.late_bytes, swapped_size=done.swapped_size,
            swap_note=done.swap_note,
        )
    elif kind == "reverting":
        intent = _Reverting.model_validate(event)
        update = replace(
            entry, reverting=RevertIntent(intent.sha256, intent.size, intent.from_sha256, intent.from_size)
        )
    elif kind == "failed":
        update = replace(entry, state="failed", revert_note=_Closed.model_validate(event).error, reverting=None)
    else:
        closed = _Closed.model_validate(event)
        update = replace(entry, state="reverted", reverted_at=closed.at, revert_note=closed.note, reverting=None,
                         revert_swapped_size=closed.swapped_size)
    journal.entries[by_id[ident]] = update  # (found by its place: looking it up was quadratic in the applies)


def _check_paths(entry: JournalEntry) -> None:
    """ValueError unless the paths an apply names are the kind it writes: its backup a file name in
    the store's backups/, and each output an absolute path inside a ``tool-outputs`` folder (a revert
    removes the outputs: a journal edited to name any other file must not have it deleted)."""
    name = entry.backup
    if not name or name in (".", "..") or "/" in name or "\\" in name or "\0" in name:
        raise ValueError(f"backup {name!r} is not a file name in backups/")
    for output in (*entry.outputs_new, *entry.output_files):
        if not in_tool_outputs(output):
            raise ValueError(f"output {output!r} is not a file in a {TOOL_OUTPUTS_DIR} folder")
    if len(entry.outputs_new_sha256) != len(entry.outputs_new):
        # a revert removes an output only while it holds what the apply wrote: one it cannot check stays
        raise ValueError(f"outputs_new names {plural(len(entry.outputs_new), 'file', 'files')} but "
                         f"outputs_new_sha256 holds {plural(len(entry.outputs_new_sha256), 'hash', 'hashes')}")


def append_event(folder: Path, event: dict[str, Any], hook: WriteHook | None = None) -> None:
    """One line, written whole and fsynced, or not at all (the journal is append-only).

    A last line left cut short by an earlier crash or full disk is cut off
    first (or ended, if it is a whole event that only lacks its newline), so
    this event never glues onto it.  A short write is taken back out.
    """
    path = folder / JOURNAL_NAME
    # stdlib json with ASCII escapes: a lone surrogate in session text (which
    # Gemini CLI resumes fine) is written as \\udXXX and read back the same.
    line = json.dumps(event, ensure_ascii=True, allow_nan=False, separators=(",", ":")).encode() + b"\n"
    fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    try:
        size = os.fstat(fd).st_size
        start = size
        if size:
            _mend_tail(fd, size)
            start = os.fstat(fd).st_size
        try:
            write_all(fd, line, hook, "journal-write")
            os.fsync(fd)
        except BaseException:
            with contextlib.suppress(OSError):
                os.ftruncate(fd, start)
                os.fsync(fd)
            raise
    finally:
        os.close(fd)
    if size == 0:
        fsync_dir(folder)


def _mend_tail(fd: int, size: int) -> None:
    """Cut off (or end) a last line that has no newline."""
    if os.pread(fd, 1, size - 1) == b"\n":
        return
    data = os.pread(fd, size, 0)
    fragment = data[data.rfind(b"\n") + 1 :]
    if _whole_event(fragment):
        os.write(fd, b"\n")
    else:
        os.ftruncate(fd, size - len(fragment))
    os.fsync(fd)


def _whole_event(line: bytes) -> bool:
    """A last line without its newline: the whole event (written but for the newline), or a torn one?

    Events are written compact, so no proper prefix of one is a JSON object:
    a line that reads as one is the event entire.  Reading and mending agree
    on this one rule, so an event never counts on one reading and not the next.
    """
    try:
        return isinstance(json.loads(line), dict)
    except (ValueError, RecursionError):
        return False
