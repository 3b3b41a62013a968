"""``session-inspector diff A B``: two ``<state_snapshot>``s, section by section.

A and B are files holding snapshot text (a model's answer, a saved snapshot)
or session files, in which case the newest snapshot in the session's history
is used.  ``--json`` prints one object.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from inspector.commands.common import print_json
from inspector.commands.output import Fields, terminal_console
from inspector.format import diff_counts, plural, visible

if TYPE_CHECKING:
    from rich.console import Console

    from inspector.compaction.snapshot import SnapshotDiff

EXIT_BAD_INPUT = 2


class SnapshotSourceError(Exception):
    """A file that holds no usable snapshot; one line naming the file."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("a", type=Path, help="the older snapshot: a text file or a session file")
    parser.add_argument("b", type=Path, help="the newer snapshot: a text file or a session file")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of coloured text")


def snapshot_from_file(path: Path) -> str:
    """The snapshot text in ``path`` (plain text, or the newest one in a session file)."""
    from inspector.compaction.snapshot import OPEN, find_snapshot_text
    from inspector.session.errors import SessionError
    from inspector.session.loader import read_bytes

    try:
        data = read_bytes(path)
    except SessionError as exc:
        raise SnapshotSourceError(str(exc)) from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SnapshotSourceError(f"{path}: not UTF-8 text (byte {exc.start})") from None
    if text.lstrip().startswith(("{", "[")):
        found = _from_session(path)
        if found is not None:
            return found
    snapshot = find_snapshot_text(text)
    if snapshot is None or OPEN not in text:
        raise SnapshotSourceError(f"{path}: no <state_snapshot> found")
    return snapshot


def _from_session(path: Path) -> str | None:
    from inspector.compaction.compress import _has_snapshot
    from inspector.compaction.snapshot import find_snapshot_text
    from inspector.session import SessionError, history, load

    try:
        session = load(path)
    except SessionError:
        return None
    text = _has_snapshot([t.content for t in history(session)])
    if text is None:
        raise SnapshotSourceError(f"{path}: the session's history holds no <state_snapshot>")
    return find_snapshot_text(text)


def render_diff(console: Console, result: SnapshotDiff, *, old_label: str = "old", new_label: str = "new") -> None:
    """Print a ``SnapshotDiff``: changed sections with + / - lines, unchanged ones folded."""
    from rich.cells import cell_len
    from rich.text import Text

    counts = result.counts()
    added, removed, unchanged = diff_counts(counts["added"], counts["removed"], counts["unchanged"])
    console.print(Text.assemble((f"{old_label} -> {new_label}: ", "bold"), (added, "green"), " ", (removed, "red"),
                                " ", (unchanged, "dim")))
    fitting = Text()  # what fits the terminal, printed together (one print a line took 11 s for 40,000 lines)

    def flush() -> None:
        nonlocal fitting
        if fitting:
            console.print(fitting, end="")
            fitting = Text()

    for section in result.sections:
        style = {"added": "green", "removed": "red", "changed": "yellow", "unchanged": "dim"}[section.status]
        header = Text.assemble((visible(f"<{section.name}>", one_line=True), f"bold {style}"),
                               (f"  {section.status}", style))
        if section.status == "unchanged":
            header.append(f" ({plural(len(section.unchanged), 'line')})", "dim")
        if cell_len(header.plain) <= console.width:
            fitting.append_text(header)
            fitting.append("\n")
        else:
            flush()
            console.print(header)
        if section.status == "unchanged":
            continue
        for change in section.changes:
            mark, colour = _MARKS.get(change.op, ("  ", "dim"))
            line = mark + visible(change.text, one_line=True)
            if cell_len(line) + 2 <= console.width:
                fitting.append(f"  {line}\n", colour)
                continue
            flush()
            # a line too long for the terminal goes on under its text, clear of the + / - column
            console.print(Fields(Text(line, colour), margin=2, indent=4))
    flush()


_MARKS = {"added": ("+ ", "green"), "removed": ("- ", "red")}


def run(args: argparse.Namespace) -> int:
    from inspector.compaction.snapshot import diff

    try:
        old = snapshot_from_file(args.a)
        new = snapshot_from_file(args.b)
    except SnapshotSourceError as exc:
        print(visible(f"session-inspector: {exc}", one_line=True), file=sys.stderr)
        return EXIT_BAD_INPUT
    result = diff(old, new)
    if args.json:
        print_json({"a": str(args.a), "b": str(args.b), **result.to_json()})
        return 0
    render_diff(terminal_console(), result, old_label=visible(str(args.a), one_line=True),
                new_label=visible(str(args.b), one_line=True))
    return 0
