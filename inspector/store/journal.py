"""The journal of one session: every apply and revert, append-only.

``<folder>/.session-inspector/<file name>/journal.jsonl`` holds one JSON
object a line.  An apply writes two events: ``apply`` before the session is
touched (what is about to be written, the backup, the figures) and
``applied`` once it is on disk (where it landed, the hashes after).  A revert
writes ``revert``.  A line cut short by a crash is skipped on reading, and an
``apply`` without its ``applied`` is shown as incomplete (revert still finds
what it wrote by content).
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import asdict, dataclass, field, fields, replace
from pathlib import Path
from typing import Any

import orjson

from inspector.store.files import fsync_dir

JOURNAL_NAME = "journal.jsonl"


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

    offset: int
    length: int
    sha256: str


@dataclass(frozen=True)
class JournalEntry:
    """One apply, as the journal remembers it."""

    id: str
    seq: int
    applied_at: str
    file: str
    format: str
    info: JournalInfo
    size_before: int
    sha256_before: str
    backup: str  # file name under the store folder's backups/
    size_after: int | None = None
    sha256_after: str | None = None
    planned_sha256: str | None = None  # jsonl: of the appended bytes; else: of the new file
    planned_length: int | None = None
    regions: tuple[Region, ...] = ()
    output_files: tuple[str, ...] = ()
    turns_before: int = 0
    turns_after: int = 0
    records_reused: int = 0
    records_adapted: int = 0
    records_created: int = 0
    carried_lines: int = 0
    state: str = "applied"  # applied | incomplete | failed | reverted
    reverted_at: str | None = None
    revert_note: str | None = None

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["regions"] = [asdict(r) for r in self.regions]
        data["output_files"] = list(self.output_files)
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> JournalEntry:
        names = {f.name for f in fields(cls)}
        values = {k: v for k, v in data.items() if k in names}
        info_names = {f.name for f in fields(JournalInfo)}
        values["info"] = JournalInfo(**{k: v for k, v in (data.get("info") or {}).items() if k in info_names})
        values["regions"] = tuple(Region(**r) for r in data.get("regions") or ())
        values["output_files"] = tuple(data.get("output_files") or ())
        return cls(**values)


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


def read_journal(folder: Path) -> Journal:
    path = folder / JOURNAL_NAME
    journal = Journal(path)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return journal
    by_id: dict[str, JournalEntry] = {}
    for line in data.splitlines():
        try:
            event = orjson.loads(line)
        except orjson.JSONDecodeError:
            continue  # a line cut short by a crash
        if not isinstance(event, dict):
            continue
        journal.events.append(event)
        kind, ident = event.get("event"), event.get("id")
        if kind == "apply":
            with contextlib.suppress(TypeError, ValueError):
                entry = replace(JournalEntry.from_json(event), state="incomplete")
                by_id[entry.id] = entry
                journal.entries.append(entry)
        elif kind in ("applied", "failed", "revert") and ident in by_id:
            entry = by_id[ident]
            if kind == "applied":
                update = replace(
                    entry,
                    state="applied",
                    size_after=event.get("size_after"),
                    sha256_after=event.get("sha256_after"),
                    regions=tuple(Region(**r) for r in event.get("regions") or ()),
                    carried_lines=int(event.get("carried_lines") or 0),
                )
            elif kind == "failed":
                update = replace(entry, state="failed", revert_note=event.get("error"))
            else:
                update = replace(entry, state="reverted", reverted_at=event.get("at"), revert_note=event.get("note"))
            by_id[ident] = update
            journal.entries[journal.entries.index(entry)] = update
    return journal


def append_event(folder: Path, event: dict[str, Any]) -> None:
    """One line, one write, fsynced (the journal is append-only)."""
    path = folder / JOURNAL_NAME
    created = not path.exists()
    line = orjson.dumps(event, option=orjson.OPT_NON_STR_KEYS) + b"\n"
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        os.write(fd, line)
        os.fsync(fd)
    finally:
        os.close(fd)
    if created:
        fsync_dir(folder)
