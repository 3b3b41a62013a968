"""Write a compaction to disk from the command line (``compact --apply``)."""

from __future__ import annotations

import argparse
import shlex
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from inspector.format import plural, visible

if TYPE_CHECKING:
    from inspector.compaction.compress import CompressionResult
    from inspector.session.history import Turn
    from inspector.session.loader import Session
    from inspector.store import JournalEntry, WriteHook

EXIT_OK = 0
EXIT_REFUSED = 2


def describe_entry(entry: JournalEntry, session_path: Path) -> list[str]:
    """The lines that tell a person what an apply wrote and how to undo it."""
    from inspector.store import store_dir

    info = entry.info
    how = "appended a checkpoint to" if entry.format == "jsonl" else "rewrote"
    lines = [
        f"applied: {how} {entry.file} ({entry.format}): {plural(entry.turns_before, 'turn', 'turns')} -> "
        f"{entry.turns_after:,}; records: {entry.records_reused:,} kept as they were, {entry.records_adapted:,} "
        f"adapted, {entry.records_created:,} new",
    ]
    if info.tokens_before is not None and info.tokens_after is not None:
        lines.append(f"tokens (estimate): {info.tokens_before:,} -> {info.tokens_after:,}")
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
    lines.append(f"backup: {store_dir(session_path) / 'backups' / entry.backup}")
    lines.append(f"undo: session-inspector revert {shlex.quote(str(session_path))}")  # as typed in a shell
    return lines


def apply_from_cli(
    args: argparse.Namespace,
    session: Session,
    turns: Sequence[Turn],
    result: CompressionResult,
    *,
    hook: WriteHook | None = None,
) -> int:
    """Apply ``result`` to ``session``; prints what was written.  Exit 0, or 2 on refusal.

    ``hook`` reaches the store's writes (tests inject a full disk through it).
    """
    from inspector.store import StoreError, apply_compaction

    try:
        entry = apply_compaction(session, turns, result, hook=hook)
    except StoreError as exc:
        print(f"session-inspector: {visible(str(exc), one_line=True)}", file=sys.stderr)
        return EXIT_REFUSED
    out = sys.stderr if args.json else sys.stdout
    for line in describe_entry(entry, session.path):
        print(visible(line, one_line=True), file=out)
    return EXIT_OK
