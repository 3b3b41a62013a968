"""The readable report of ``analyze`` (rich), the same figures as ``--json``."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text

from inspector.analysis import Analysis, turn_kind
from inspector.commands.output import Fields, terminal_console
from inspector.compaction.masking import MaskingPlan
from inspector.deciding import estimate_gap
from inspector.format import (
    USAGE_HEADER,
    count_text,
    masking_words,
    percent,
    plural,
    rounding_words,
    share_bar,
    split_sides,
    uncut_split_words,
    usage_text,
    visible,
)
from inspector.pricing.cost import SessionCost, session_words
from inspector.session import Session
from inspector.settings import ConfiguredModel, Threshold

_LONG = 400


def _visible_rows(result: Analysis, show_all: bool) -> list[int]:
    count = len(result.turns)
    if show_all or count <= _LONG:
        return list(range(count))
    split = result.compress_split_point
    near = set(range(max(0, split - 5), min(count, split + 5)))
    largest = sorted(range(count), key=result.turn_tokens, reverse=True)[:20]
    ends = set(range(min(5, count))) | set(range(max(0, count - 5), count))
    return sorted(near | set(largest) | ends)


def marker(words: str) -> Text:
    """The split row's words, short enough for the kind column at 80 columns (the heading above the
    table names the split's kind), so the row stays one line; folded, never cut, when narrower."""
    return Text(words)


def print_analysis(session: Session, result: Analysis, threshold: Threshold, configured: ConfiguredModel,
                   show_all: bool = False, cost: SessionCost | None = None, masking: MaskingPlan | None = None) -> None:
    """The report; ``cost``: the session's (``cost.cost_of``), ``masking``: what the next turn masks
    (``compaction.masking.masking_of``), both said after the table as the app's detail pane says them."""
    console = terminal_console()
    total = result.total_estimated_tokens
    limit = result.token_limit
    console.print(Fields(
        Text(visible(session.path.name, one_line=True), "bold"),
        session.format,
        f"model: {visible(result.model or 'not recorded', one_line=True)}",
        f"session: {visible(session.session_id or '-', one_line=True)}",
    ))
    context = result.context
    console.print(Fields(
        Text.assemble("context: ", (count_text(context.deciding_tokens), "bold"),
                      f" / {limit:,} ({context.share_percent}, {context.source})"),
        Text(result.verdict.sentence, "yellow" if result.would_compress else "dim"),
        gap=3,
    ))
    console.print(Fields(f"{context.reason()}; threshold from {threshold.source}", margin=2, indent=0))
    console.print(Fields(context.estimate_note(), margin=2, indent=0))
    gap = estimate_gap(result, session.turn_index)
    if gap is not None:
        console.print(Fields(gap.words(), margin=2, indent=0))
    split = result.compress_split_point  # Gemini CLI's: of the history the tool-output budget leaves
    summarised, kept = split_sides(result.split_figures(split))
    console.print(Fields(f"turns: {len(result.turns):,}", f"split: {split:,} (reference)", f"summarise {summarised}",
                         f"keep {kept}", gap=3))
    if split != result.split_point:
        console.print(uncut_split_words(result.split_point))
    console.print(Fields(visible(configured.words, one_line=True), margin=2, indent=0))

    table = Table(show_edge=False, pad_edge=False, header_style="bold")
    for name, justify in (("#", "right"), ("role", "left"), ("kind", "left"), ("est. tok", "right"),
                          ("usage", "right"), ("share", "right"), ("", "left")):
        table.add_column(name, justify=justify, overflow="fold")  # type: ignore[arg-type]  # (a figure is never cut)
    rows = _visible_rows(result, show_all)
    previous = -1
    for i in rows:
        if previous != -1 and i != previous + 1:
            table.add_row("…", "", "", "", "", "", "", style="dim")
        if i == split:  # one line, never wrapped into a row of its own (the heading names the split's kind)
            table.add_row("──", "split", marker(f"keep {i:,}.."), "", "", "", "", style="bold magenta")
        turn = result.turns[i]
        share = result.turn_share(i)
        table.add_row(
            f"{i:,}",
            turn.role,
            turn_kind(turn.content),
            f"{result.turn_tokens(i):,}",
            usage_text(result.recorded[i]),
            percent(share),
            share_bar(share, 8),
            style="dim" if i < split else None,
        )
        previous = i
    if split == len(result.turns):
        table.add_row("──", "split", marker("summarise all"), "", "", "", "", style="bold magenta")
    console.print(table)
    console.print(Text(f"usage: {USAGE_HEADER} tokens as the API recorded them (thoughts where the model thought)",
                       style="dim"))
    rounding = rounding_words(total, result.rows_total)
    if rounding:
        console.print(Text(f"{total:,} tokens in all; {rounding}", style="dim"))
    if len(rows) < len(result.turns):
        hidden = plural(len(result.turns) - len(rows), "turn")
        console.print(Text(f"{hidden} not listed; --all lists every turn", style="dim"))
    if masking is not None and masking.parts:
        freed = masking_words(masking.masked_count, masking.tokens_saved)
        console.print(Fields(f"masking: the next turn masks old tool output: in all, {freed} (estimated; "
                             "analyze --json lists them)", margin=0, indent=2))
    said = session_words(cost) if cost is not None else None
    if said is not None:
        models = ", ".join(visible(model, one_line=True) for model in cost.models) if cost is not None else ""
        console.print(Fields(f"cost: {said} ({models}; from the recorded usage)", margin=0, indent=2))
        if cost is not None and cost.unpriced:
            console.print(Text(f"{plural(len(cost.unpriced), 'turn')} with recorded usage not priced (the price "
                               "table does not know its model, or its usage does not add up)", style="dim"))
    for warning in result.warnings:
        console.print(Text(visible(f"warning: {warning}"), style="yellow"))
