"""Rendering for ``compact --compare`` (the stage table both faces draw is ``stage_words.stage_table``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.table import Table
from rich.text import Text

from inspector.commands.output import Fields, terminal_console
from inspector.compaction.stage_words import how_compacted
from inspector.format import visible

if TYPE_CHECKING:
    from inspector.compaction.strategies import Comparison
    from inspector.context import ContextFigures
    from inspector.session import Session


def print_comparison(session: Session, comparison: Comparison, context: ContextFigures | None = None) -> None:
    """The strategies side by side: one column each, one row per figure (fits 80 columns; a
    figure that does not fit its cell goes on to the next line, never cut); ``context``: the
    session's, to say why "tokens before" is not the history's total, as the app's comparison does."""
    console = terminal_console()
    console.print(Fields(Text(visible(session.path.name, one_line=True), "bold"), session.format,
                         "- both strategies, same history"))
    table = Table(show_edge=False, header_style="bold")
    table.add_column("", style="bold", overflow="fold")
    for name in comparison.results:
        table.add_column(name, justify="right", overflow="fold")
    rows: list[tuple[str, list[Text | str]]] = [
        ("status", []), ("tokens before", []), ("after", []), ("saved", []), ("stages / split", []),
        ("fact recall", []), ("snapshot", []),
    ]
    for name, result in comparison.results.items():
        before, after = result.original_token_count, result.new_token_count
        how = how_compacted(result.stages, result.split_point, result.split_kind)
        recall = comparison.recall[name]
        cells: list[Text | str] = [
            Text(result.status.value, "red" if result.status.failed else "green"), f"{before:,}", f"{after:,}",
            f"{before - after:,}", how, f"{recall:.1%}" if recall is not None else "-",
            f"{len(result.snapshot):,} chars" if result.snapshot else "-",
        ]
        for (_, row), cell in zip(rows, cells, strict=True):
            row.append(cell)
    for label, row in rows:
        table.add_row(label, *row)
    console.print(table)
    befores = {result.original_token_count for result in comparison.results.values()}
    if context is not None and len(befores) == 1 and (note := context.before_note(befores.pop())):
        console.print(Fields(Text(note, "dim")))
    console.print(Fields(Text("fact recall: the facts of the whole history found in the whole new history, "
                              "measured the same way for both", "dim")))
    for name, result in comparison.results.items():
        if result.message:
            console.print(Fields(Text(visible(f"{name}: {result.message}"), "dim")))
    if any(result.apply_refusal() is None for result in comparison.results.values()):  # (none: nothing to apply)
        console.print(Fields("apply one with:", "session-inspector compact FILE --strategy NAME [same options] --apply",
                             gap=1))
