"""``session-inspector history FILE``: the compactions applied to a session."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from inspector.commands.common import print_json
from inspector.commands.output import Fields, print_snapshot, say_error, terminal_console
from inspector.format import before_after, plural, visible, written_by

if TYPE_CHECKING:
    from inspector.store import JournalEntry


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", type=Path, help="a session file")
    parser.add_argument("--json", action="store_true", help="print the journal as JSON")
    parser.add_argument("--snapshots", action="store_true", help="print each applied snapshot in full")


def entry_fields(entry: JournalEntry) -> Fields:
    """One apply in the journal: on one line where the terminal is wide enough, else broken
    between its items (padded so that the entries line up on a wide one)."""
    info = entry.info
    tokens = before_after(info.tokens_before, info.tokens_after, unit=" tokens") or "tokens -"
    split = f"split {info.split_point:,}" if info.split_point is not None else "split -"
    who = written_by(info.provider, info.model)
    took = f"{info.duration_seconds:.1f} s" if info.duration_seconds is not None else "-"
    state = entry.state + (f" {entry.reverted_at}" if entry.reverted_at else "")
    items = (entry.id, entry.applied_at, f"{state:<9}", f"{info.status:<10}", f"{split:<9}", f"{tokens:<23}",
             f"turns {entry.turns_before:,} -> {entry.turns_after:,}", who, took, f"backup {entry.backup}")
    return Fields(*(visible(item, one_line=True) for item in items))  # the journal holds session text


def run(args: argparse.Namespace) -> int:
    from inspector.store import read_history
    from inspector.store.baseline import regular_file_problem

    name = visible(str(args.file), one_line=True)
    problem = regular_file_problem(args.file)
    if problem:
        say_error(f"{args.file}: {problem}")
        return 2
    journal = read_history(args.file)
    if args.json:
        print_json({"file": str(args.file), "journal": str(journal.path),
                    "entries": [e.to_json() for e in journal.entries], "events": journal.events})
        return 0
    if not journal.entries:
        print(f"{name}: no compaction was applied to this file")
        return 0
    count, can = len(journal.entries), len(journal.undoable())
    console = terminal_console()
    console.print(Fields(f"{name}: {plural(count, 'apply', 'applies')}, {can:,} can be undone",
                         f"(journal: {visible(str(journal.path), one_line=True)})", gap=1))
    for entry in journal.entries:
        console.print(entry_fields(entry))
        if args.snapshots and entry.info.snapshot:
            print_snapshot(console, entry.info.snapshot, margin=4)
    return 0
