"""Write a compaction to disk from the command line (``compact --apply``)."""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from inspector.commands.output import say_error
from inspector.format import before_after, plural, visible

if TYPE_CHECKING:
    from inspector.compaction.compress import CompressionResult
    from inspector.session.history import Turn
    from inspector.session.loader import Session
    from inspector.store import JournalEntry, WriteHook

EXIT_OK = 0
EXIT_REFUSED = 2


def describe_entry(entry: JournalEntry, session_path: Path) -> list[str]:
    """The lines that tell a person what an apply wrote and how to undo it."""
    from inspector.store import backups_dir

    info = entry.info
    how = "appended a checkpoint to" if entry.format == "jsonl" else "rewrote"
    lines = [
        f"applied: {how} {entry.file} ({entry.format}): {plural(entry.turns_before, 'turn', 'turns')} -> "
        f"{entry.turns_after:,}; records: {entry.records_reused:,} kept as they were, {entry.records_adapted:,} "
        f"adapted, {entry.records_created:,} new",
    ]
    tokens = before_after(info.tokens_before, info.tokens_after)
    if tokens:
        lines.append(f"tokens (estimate): {tokens}")
    if entry.output_files:
        files = [Path(f) for f in entry.output_files]
        if len(files) <= 3:
            lines.append(f"full tool outputs saved: {', '.join(map(str, files))}")
        else:
            folders = sorted({str(f.parent) for f in files})
            where = folders[0] if len(folders) == 1 else f"{len(folders):,} folders"
            lines.append(f"full tool outputs saved: {len(files):,} files in {where} "
                         f"({files[0].name} ... {files[-1].name}; listed in `session-inspector history --json`)")
    lines.extend(f"note: {note}" for note in entry.notes())
    lines.append(f"backup: {backups_dir(session_path) / entry.backup}")
    lines.append(f"undo: {shlex.join(undo_command(session_path))}")  # as typed in a shell
    return lines


def undo_command(session_path: Path) -> list[str]:
    """The command that undoes the last apply to ``session_path``, as arguments."""
    return ["session-inspector", "revert", str(session_path)]


@dataclass(frozen=True)
class Applied:
    """What ``compact --apply`` did: the journal entry of what it wrote, or why it wrote nothing."""

    entry: JournalEntry | None
    refusal: str | None = None  # one line (None when written)
    code: int = EXIT_OK  # the exit code it calls for

    def to_json(self, session_path: Path) -> dict[str, Any]:
        """``compact --apply --json``'s ``applied``: what ``describe_entry`` says, as fields."""
        if self.entry is None:
            return {"written": False, "refusal": self.refusal}
        from inspector.store import backups_dir

        return {"written": True, **self.entry.to_json(), "notes": list(self.entry.notes()),
                "backup_path": str(backups_dir(session_path) / self.entry.backup), "undo": undo_command(session_path)}


def apply_to_disk(session: Session, turns: Sequence[Turn], result: CompressionResult, *,
                  hook: WriteHook | None = None) -> Applied:
    """Apply ``result`` to ``session`` (``hook`` reaches the store's writes: tests inject a full disk
    through it); a store refusal comes back as an ``Applied`` without an entry."""
    from inspector.antigravity import read_only_refusal
    from inspector.store import StoreError, apply_compaction

    if (read_only := read_only_refusal(session)) is not None:
        return Applied(None, f"{session.path}: nothing was written: {read_only}", EXIT_REFUSED)
    try:
        return Applied(apply_compaction(session, turns, result, hook=hook))
    except StoreError as exc:
        return Applied(None, str(exc), EXIT_REFUSED)


def apply_from_cli(session: Session, turns: Sequence[Turn], result: CompressionResult, *,
                   hook: WriteHook | None = None) -> int:
    """Apply ``result`` to ``session`` and print what was written, or the one-line refusal on
    stderr.  Exit 0, or 2 on refusal."""
    applied = apply_to_disk(session, turns, result, hook=hook)
    if applied.entry is None:
        say_error(applied.refusal or "")
        return applied.code
    for line in describe_entry(applied.entry, session.path):
        print(visible(line, one_line=True))
    return applied.code
