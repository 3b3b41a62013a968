"""The header of the session view: the file, how full the context is and why, and the split.

Three lines at any width from 80 columns up.  Each line is a few parts, some
needed and some that fill the room there is (``fit``); the gauge grows into
what is left.  The gauge, the percentage and the verdict all follow the one
figure that decides (``ContextFigures.deciding_tokens``: the recorded prompt
when there is one, else the estimate), and the line names which one it is,
so the bar never reads 104% beside "below the threshold".
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text
from textual.events import Resize
from textual.widgets import Static

from inspector.catalog import human_size
from inspector.context import ContextFigures
from inspector.format import compact_number, percent, plural, visible
from inspector.tui.loading import Loaded

GAUGE_WIDTH = 48
MIN_GAUGE = 10
SEPARATOR = "  ·  "
WIDE = 120  # from this width on, parts are set apart more


def gauge(used: int, limit: int, threshold: float, width: int = GAUGE_WIDTH) -> Text:
    """A bar of ``used / limit`` with the compression threshold marked by ┃."""
    share = used / limit if limit else 0.0
    filled = max(0, min(width, round(share * width)))
    mark = max(0, min(width - 1, int(threshold * width)))
    over = used >= threshold * limit
    text = Text()
    for i in range(width):
        if i == mark:
            text.append("┃", style="bold red" if over else "bold yellow")
        elif i < filled:
            text.append("█", style="red" if over and i >= mark else "green")
        else:
            text.append("░", style="dim")
    return text


@dataclass(frozen=True)
class Part:
    """A piece of a header line; ``rank`` orders who gets the room (0: always shown);
    ``short`` is what a needed part says when the line is too narrow for ``text``."""

    text: Text
    rank: int = 0
    short: Text | None = None


def separator_for(width: int) -> str:
    return SEPARATOR if width >= WIDE else " · "


def fit(parts: list[Part], width: int) -> Text:
    """The parts that fit ``width`` cells, in their own order: needed ones always (in their
    short form when the long ones do not fit), the others by rank while there is room."""
    separator = separator_for(width)
    texts = [p.text for p in parts]
    chosen = {i for i, p in enumerate(parts) if p.rank == 0}

    def length(indices: set[int]) -> int:
        return sum(texts[i].cell_len for i in indices) + len(separator) * max(0, len(indices) - 1)

    for i in sorted(chosen):
        short = parts[i].short
        if length(chosen) > width and short is not None:
            texts[i] = short
    for i in sorted((i for i, p in enumerate(parts) if p.rank), key=lambda i: parts[i].rank):
        if length(chosen | {i}) <= width:
            chosen.add(i)
    return Text(separator, style="dim").join(texts[i] for i in sorted(chosen))


def tokens_short(count: int) -> str:
    """A token count for a narrow line: exact below 100,000, else 794k / 1.2M."""
    return f"{count:,}" if abs(count) < 100_000 else compact_number(count)


def file_line(loaded: Loaded, width: int) -> Text:
    session, analysis = loaded.session, loaded.analysis
    parts = [
        Part(Text(visible(session.path.name, one_line=True), style="bold")),
        Part(Text(visible(analysis.model, one_line=True) if analysis.model else "model not recorded",
                  style="bold cyan" if analysis.model else "dim"), 1),
        Part(Text(plural(len(analysis.turns), "turn"))),
        Part(Text(human_size(session.size)), 3),
        Part(Text(session.format), 4),
    ]
    if analysis.warnings:
        parts.append(Part(Text(f"{plural(len(analysis.warnings), 'warning')} (w)", style="yellow")))
    return fit(parts, width)


def context_line(context: ContextFigures, would_compress: bool, width: int) -> Text:
    """``context ███┃░░ 525,821 / 1,048,576 (50.1%) recorded prompt  ·  would compress``."""
    figures = Text.assemble(
        (f"{context.deciding_tokens:,}", "bold"), f" / {context.token_limit:,} ({percent(context.share)}) ",
        ("recorded" if context.recorded_prompt_tokens is not None else "estimated", "dim"),
    )
    verdict = Text("would compress", style="bold yellow") if would_compress else Text("below threshold", style="dim")
    tail = [Part(figures), Part(verdict), Part(Text(context.reason(), style="dim"), 1)]
    if context.recorded_prompt_tokens is not None or context.environment_tokens:
        tail.append(Part(Text(context.estimate_note(), style="dim"), 2))
    label = "context "
    right = fit(tail, width - len(label) - MIN_GAUGE - 1)
    bar = max(MIN_GAUGE, min(GAUGE_WIDTH, width - len(label) - 1 - right.cell_len))
    return Text.assemble(label, gauge(context.deciding_tokens, context.token_limit, context.threshold, bar), " ",
                         right)


def split_line(loaded: Loaded, split: int, width: int) -> Text:
    analysis = loaded.analysis
    figures = analysis.split_figures(split)
    kind = loaded.split_kind(split)
    how = "reference" if kind == "reference" else f"{kind}; reference {analysis.split_point:,}"
    summarised_turns, summarised = int(figures["summarised_turns"]), int(figures["summarised_tokens"])
    kept_turns, kept = int(figures["kept_turns"]), int(figures["kept_tokens"])
    share = percent(float(figures["kept_share"]))
    parts = [
        Part(Text.assemble("split ", (f"{split:,}", "bold magenta"), " (", (how, "bold" if kind == "agentic" else ""),
                           ")")),
        Part(Text.assemble("summarise ", (f"{summarised_turns:,}", "bold"), " turns / ",
                           (f"{summarised:,}", "bold"), " tok"),
             short=Text.assemble("summarise ", (tokens_short(summarised), "bold"), " tok")),
        Part(Text.assemble("keep ", (f"{kept_turns:,}", "bold"), " turns / ", (f"{kept:,}", "bold"), f" tok ({share})"),
             short=Text.assemble("keep ", (f"{kept_turns:,}", "bold"), " / ", (tokens_short(kept), "bold"),
                                 f" tok ({share})")),
    ]
    if analysis.compress_split_point != analysis.split_point:
        parts.append(Part(Text(f"the tool-output budget moves Gemini CLI's split to "
                               f"{analysis.compress_split_point:,}", style="dim"), 1))
    return fit(parts, width)


def header_lines(loaded: Loaded, split: int, width: int = 200) -> Text:
    analysis = loaded.analysis
    return Text("\n").join([
        file_line(loaded, width),
        context_line(analysis.context, analysis.would_compress, width),
        split_line(loaded, split, width),
    ])


class ContextHeader(Static):
    """Three lines of figures about the open session; updated at every split step and resize."""

    DEFAULT_CSS = """
    ContextHeader { height: auto; padding: 0 1; background: $panel; }
    """

    _shown: tuple[Loaded, int] | None = None

    def show(self, loaded: Loaded, split: int) -> None:
        self._shown = (loaded, split)
        self._render_lines()

    def on_resize(self, event: Resize) -> None:
        self._render_lines()

    def _render_lines(self) -> None:
        if self._shown is None:
            return
        loaded, split = self._shown
        width = self.content_size.width or self.app.size.width - 2
        self.update(header_lines(loaded, split, width))
        context = loaded.analysis.context
        self.tooltip = f"{context.reason()}\n{context.estimate_note()}"
