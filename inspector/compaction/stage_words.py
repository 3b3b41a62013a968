"""The staged strategy's stages and a comparison's cell, as both faces write them.

Kept beside the strategy (not in ``inspector.format``) so that the formatting helpers import no
domain code.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from inspector.compaction.staged import StageReport, stages_used

if TYPE_CHECKING:  # Rich is imported only where a renderable is drawn
    from rich.table import Table


def how_compacted(stages: Iterable[StageReport] | None, split: int | None, kind: str | None) -> str:
    """What a compaction did, in a comparison's cell, as both faces say it: the stages that ran
    (staged; "none") or the split and its kind (reference: "split 31 (reference)")."""
    if stages is not None:
        return ", ".join(stages_used(stages)) or "none"
    if split is None:
        return "-"
    return f"split {split:,}" + (f" ({kind})" if kind else "")



def stages_sum(stages: Sequence[StageReport]) -> str:
    """The staged strategy's stages in one line, under their table on both faces: the history's tokens
    before the first and after the last, and what the stages that ran saved ("" when none ran)."""
    if not stages:
        return ""
    saved = sum(stage.saved for stage in stages if stage.applied)
    return (f"stages: {stages[0].tokens_before:,} -> {stages[-1].tokens_after:,} tokens, {saved:,} saved by the "
            "stages that ran (the history alone, before the environment turn is added)")


def stage_table(stages: Iterable[StageReport], *, expand: bool = False) -> Table:
    """The staged strategy's stages, as both faces show them: ran or skipped, tokens before and
    after, saved, and what the stage did.  A figure that does not fit its cell goes on to the next
    line, never cut."""
    from rich.table import Table
    from rich.text import Text

    table = Table(show_edge=False, expand=expand, header_style="bold")
    for name, justify in (("stage", "left"), ("ran", "left"), ("before", "right"), ("after", "right"),
                          ("saved", "right"), ("detail", "left")):
        table.add_column(name, justify=justify, overflow="fold")  # type: ignore[arg-type]
    for stage in stages:
        ran = Text("ran", style="bold green") if stage.applied else Text("skipped", style="dim")
        table.add_row(Text(stage.name, style="bold" if stage.applied else "dim"), ran, f"{stage.tokens_before:,}",
                      f"{stage.tokens_after:,}", f"{stage.saved:,}", Text(stage.detail),
                      style=None if stage.applied else "dim")
    return table
