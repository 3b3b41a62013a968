"""Rendering for ``compact --compare`` and the staged strategy's stage table."""

from __future__ import annotations

from typing import Any

from rich.table import Table
from rich.text import Text

from inspector.commands.output import terminal_console
from inspector.format import visible


def stage_table(stages: list[Any]) -> Table:
    table = Table(title="stages", show_edge=False, header_style="bold", title_justify="left")
    for name, justify in (("stage", "left"), ("ran", "left"), ("before", "right"), ("after", "right"),
                          ("saved", "right"), ("", "left")):
        table.add_column(name, justify=justify)  # type: ignore[arg-type]
    for stage in stages:
        table.add_row(stage.name, "yes" if stage.applied else "skipped", f"{stage.tokens_before:,}",
                      f"{stage.tokens_after:,}", f"{stage.saved:,}", Text(stage.detail),
                      style=None if stage.applied else "dim")
    return table


def print_comparison(session: Any, comparison: Any) -> None:
    console = terminal_console()
    console.print(Text.assemble((visible(session.path.name, one_line=True), "bold"),
                                f"  {session.format}  - both strategies, same history"))
    table = Table(show_edge=False, header_style="bold")
    for name, justify in (("strategy", "left"), ("status", "left"), ("tokens before", "right"),
                          ("after", "right"), ("saved", "right"), ("stages / split", "left"),
                          ("fact recall", "right"), ("snapshot", "right")):
        table.add_column(name, justify=justify)  # type: ignore[arg-type]
    for name, result in comparison.results.items():
        before, after = result.original_token_count, result.new_token_count
        how = ", ".join(s.name for s in result.stages or [] if s.applied) if result.stages is not None \
            else (f"split {result.split_point:,}" if result.split_point is not None else "-")
        recall = comparison.recall[name]
        snapshot = f"{len(result.snapshot):,} chars" if result.snapshot else "-"
        table.add_row(name, Text(result.status.value, "red" if result.status.failed else "green"),
                      f"{before:,}", f"{after:,}", f"{before - after:,}", how,
                      f"{recall:.1%}" if recall is not None else "-", snapshot)
    console.print(table)
    console.print(Text("fact recall: the facts of the whole history found in the whole new history, "
                       "measured the same way for both", "dim"))
    for name, result in comparison.results.items():
        if result.message:
            console.print(Text(visible(f"{name}: {result.message}"), "dim"))
    console.print("apply one with: session-inspector compact FILE --strategy NAME [same options] --apply")
