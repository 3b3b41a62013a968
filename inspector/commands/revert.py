"""``session-inspector revert FILE``: undo the last apply, byte for byte."""

from __future__ import annotations

import argparse
from pathlib import Path

from inspector.commands.common import number, print_json
from inspector.commands.output import say_error
from inspector.format import plural, visible

EXIT_REFUSED = 2


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", type=Path, help="the session file a compaction was applied to")
    parser.add_argument("--list", action="store_true", help="list the applies that can be undone, newest first")
    parser.add_argument("--steps", type=_positive, default=1, metavar="N", help="undo the last N applies (default 1)")
    parser.add_argument("--force", action="store_true",
                        help="restore the backup even if the file changed since the apply "
                             "(a copy of the file as it is now is kept first)")
    parser.add_argument("--json", action="store_true", help="print JSON")


_positive = number(int, lambda v: v >= 1, "must be 1 or more")


def run(args: argparse.Namespace) -> int:
    from inspector.antigravity import refuse_path
    from inspector.store import StoreError, revert, undoable
    from inspector.store.baseline import regular_file_problem
    from inspector.store.reverting import NEVER_REACHED

    if (read_only := refuse_path(args.file)) is not None:  # an Antigravity transcript: nothing was ever applied
        say_error(read_only)
        return EXIT_REFUSED
    name = visible(str(args.file), one_line=True)
    if args.list:
        problem = regular_file_problem(args.file)
        if problem:
            say_error(f"{args.file}: {problem}")
            return EXIT_REFUSED
        entries = undoable(args.file)
        if args.json:
            print_json([e.to_json() for e in entries])
        elif not entries:
            print(f"{name}: nothing to undo")
        else:
            from inspector.commands.history import entry_fields
            from inspector.commands.output import terminal_console

            console = terminal_console()
            for entry in entries:
                console.print(entry_fields(entry))
        return 0
    try:
        results = revert(args.file, steps=args.steps, force=args.force)
    except StoreError as exc:
        say_error(str(exc))
        return EXIT_REFUSED
    if args.json:
        print_json([
            {"id": r.entry.id, "applied_at": r.entry.applied_at, "size": r.size, "sha256": r.sha256,
             "kept_bytes": r.kept_bytes, "copy": str(r.copy) if r.copy else None, "note": r.note,
             "lost_note": r.lost_note or None, "late_bytes": r.late_bytes, "swap_note": r.swap_note or None,
             "housekeeping": list(r.housekeeping),
             "still_applied": [{"id": e.id, "applied_at": e.applied_at} for e in r.still_applied]}
            for r in results
        ])
        return 0
    for r in results:
        lines = [f"  note: {said}" for said in r.housekeeping]
        if r.note == NEVER_REACHED:
            lines.append(f"apply {r.entry.id} of {r.entry.applied_at} never reached {args.file} (it was cut short): "
                         "marked undone; the file was not changed")
        else:
            lines.append(f"reverted apply {r.entry.id} of {r.entry.applied_at}: {args.file} restored "
                         f"({r.size:,} bytes, sha256 {r.sha256[:12]})")
        if r.kept_bytes:
            lines.append(f"  kept {plural(r.kept_bytes, 'byte', 'bytes')} appended after the apply")
        if r.copy:
            lines.append(f"  the file as it was before this revert is kept in {r.copy}")
        if r.note and r.note not in ("forced", NEVER_REACHED) and not r.kept_bytes:
            lines.append(f"  note: {r.note}")
        if r.late_bytes:
            lines.append(f"  note: {plural(r.late_bytes, 'byte', 'bytes')} another program wrote to the file while "
                         "it was swapped (through the old file) were copied to the end of the session")
        if r.swap_note:
            lines.append(f"  note: {r.swap_note}")
        if r.lost_note:
            lines.append(f"  warning: {r.lost_note}")
        for entry in r.still_applied[:1]:
            more = len(r.still_applied) - 1
            lines.append(f"still in force: apply {entry.id} of {entry.applied_at}"
                         + (f" and {plural(more, 'older apply', 'older applies')}" if more else "")
                         + f"; undo it with: session-inspector revert {args.file}")
        for line in lines:
            print(visible(line, one_line=True))
    return 0
