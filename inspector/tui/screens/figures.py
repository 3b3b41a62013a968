"""Why the header says what it says: the figure that decides, and every other total on screen.

The session view shows a recorded figure (the gauge, when Gemini CLI recorded
one) beside estimates (the table, the split, a compaction's "before").  This
screen (``i``) puts them in one place and says how each is made and why two of
them differ, from the same ``ContextFigures`` and ``Analysis`` the header uses.
"""

from __future__ import annotations

from typing import ClassVar

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from inspector.format import count_text, rounding_words, turn_span, visible
from inspector.tui.loading import Loaded


def figure_rows(loaded: Loaded, split: int) -> list[tuple[str, str, str]]:
    """(what, figure, how it is made) for every total the session view shows."""
    analysis = loaded.analysis
    context = analysis.context
    model = visible(analysis.model, one_line=True) if analysis.model else "the default model"
    figures = analysis.split_figures(split)
    summarised, kept = int(figures["summarised_tokens"]), int(figures["kept_tokens"])
    last = len(analysis.turns) - 1
    rows: list[tuple[str, str, str]] = []
    if context.recorded_prompt_tokens is not None:
        rows.append(("recorded prompt", count_text(context.recorded_prompt_tokens),
                     "the input tokens Gemini's API counted for the newest request since the last compaction "
                     "(system prompt and tool declarations included); it decides, as in Gemini CLI"))
    rows.append(("threshold", f"{context.threshold_tokens:,}",
                 f"{context.threshold_percent} of {context.token_limit:,}, {model}'s window "
                 f"(threshold from {visible(loaded.threshold.source, one_line=True)})"))
    history = (f"the table's total, Gemini CLI's own estimate from the characters of each turn: "
               f"{turn_span(0, split)} summarised {summarised:,} + {turn_span(split, last + 1)} kept {kept:,}"
               if split and analysis.turns else "the table's total: every turn's estimate")
    rounding = rounding_words(analysis.total_estimated_tokens, analysis.rows_total)
    rows.append(("history (estimate)", f"{analysis.total_estimated_tokens:,}",
                 f"{history}; {rounding}" if rounding else history))
    if context.environment_tokens:
        rows.append(("environment turn", f"{context.environment_tokens:,}",
                     "the <session_context> turn Gemini CLI sends before the history; not a row of the table"))
    rows.append(("estimate", f"{context.estimated_tokens:,}",
                 "environment turn + history: what a compaction preview calls 'before'"
                 if context.environment_tokens else "the history: what a compaction preview calls 'before'"))
    how = visible(loaded.configured.words, one_line=True)
    rows.append(("Gemini CLI's split", f"turn {analysis.compress_split_point:,}",
                 f"where 70% of the history's JSON comes before it (at a prompt, or after the last "
                 f"turn); {how}"))
    return rows


def verdict_text(loaded: Loaded) -> Text:
    analysis = loaded.analysis
    context = analysis.context
    decides = "the recorded prompt" if context.recorded_prompt_tokens is not None else "the estimate (nothing recorded)"
    text = Text.assemble(("Which figure decides: ", "bold"), decides, "\n", context.reason(), ": ")
    text.append(analysis.verdict.explained, style="bold")
    if not analysis.would_compress:
        text.append(" c compacts it anyway, at the split you choose.", style="bold")
    if context.recorded_prompt_tokens is not None and context.recorded_prompt_tokens != context.estimated_tokens:
        text.append("\nThe recorded prompt and the estimate differ: one is what the API counted for the whole "
                    "request, the other Gemini CLI's count from characters of the history alone.", style="dim")
    if analysis.compress_split_point != analysis.split_point:
        text.append(f"\nGemini CLI's split is turn {analysis.compress_split_point:,}: a compaction first lets the "
                    f"tool-output budget cut old outputs, and the history it leaves splits there (as it stands, "
                    f"the history would split at turn {analysis.split_point:,}).", style="dim")
    return text


class FiguresScreen(ModalScreen[None]):
    """The header's figures explained, in one place."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q,i", "dismiss", "Close", id="figures.close", tooltip="close the figures"),
    ]

    def __init__(self, loaded: Loaded, split: int) -> None:
        super().__init__()
        self.loaded = loaded
        self.split = split

    def compose(self) -> ComposeResult:
        table = Table(expand=True, show_edge=False, header_style="bold")
        table.add_column("figure", no_wrap=True)
        table.add_column("tokens", justify="right", no_wrap=True, style="bold")
        table.add_column("how it is made")
        for what, figure, how in figure_rows(self.loaded, self.split):
            table.add_row(what, figure, how)
        with VerticalScroll(id="figures-box"):
            yield Static(verdict_text(self.loaded), id="figures-verdict", markup=False)
            yield Static(table, id="figures-table", markup=False)
            yield Static(Text("Esc: close", style="dim"), markup=False)
