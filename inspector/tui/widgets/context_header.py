"""The header of the session view: the file, how full the context is and why, and the split.

Three lines at any width from 80 columns up.  Each line is a few parts, some
needed and some that fill the room there is (``fit``); the gauge grows into
what is left.  The gauge, the percentage and the verdict all follow the one
figure that decides (``ContextFigures.deciding_tokens``: the recorded prompt
when there is one, else the estimate), and the line names which one it is,
so the bar never reads 104% beside "below the threshold"; over the threshold
with nothing before the split, it says so ("nothing to summarise").

While a big file is read, the header shows what is known at once (the file,
its size, the model when ``--model`` names it) and ``reading…`` in place of
every figure that needs the whole history (``show_tail``).
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text
from textual import work
from textual.events import Resize

from inspector.analysis import Analysis
from inspector.catalog.listing import human_size
from inspector.context import ContextFigures, Verdict
from inspector.deciding import EstimateGap, estimate_gap, twice_held_quarters
from inspector.format import compact_number, count_text, noun_for, percent, plural, uncut_split_words, visible
from inspector.session.tail import TailRead
from inspector.session.turn_index import TurnIndex
from inspector.tokens import token_limit
from inspector.tui.loading import Loaded
from inspector.tui.widgets.fitted_lines import FittedLines

GAUGE_WIDTH = 48
MIN_GAUGE = 10
SEPARATOR = "  ·  "
WIDE = 120  # from this width on, parts are set apart more
READING = "reading…"  # in place of a figure the whole file is still being read for


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
    ``shorter``: what a needed part says, ever shorter, when the line is too narrow for ``text``."""

    text: Text
    rank: int = 0
    shorter: tuple[Text, ...] = ()

    def form(self, level: int) -> Text:
        """The part at ``level`` (0: in full; past its shortest form, the shortest)."""
        forms = (self.text, *self.shorter)
        return forms[min(level, len(forms) - 1)]


def separator_for(width: int) -> str:
    return SEPARATOR if width >= WIDE else " · "


def fit(parts: list[Part], width: int) -> Text:
    """The parts that fit ``width`` cells, in their own order: needed ones always (all in their
    longest forms that fit together), the others by rank while there is room; never wider
    than ``width`` (the last resort cuts with an ellipsis, so no header line ever wraps)."""
    separator = separator_for(width)
    chosen = {i for i, p in enumerate(parts) if p.rank == 0}
    levels = max((len(p.shorter) for p in parts), default=0)

    def texts_at(level: int) -> list[Text]:
        return [p.form(level) for p in parts]

    def length(texts: list[Text], indices: set[int]) -> int:
        return sum(texts[i].cell_len for i in indices) + len(separator) * max(0, len(indices) - 1)

    level = next((lv for lv in range(levels + 1) if length(texts_at(lv), chosen) <= width), levels)
    texts = texts_at(level)
    for i in sorted((i for i, p in enumerate(parts) if p.rank), key=lambda i: parts[i].rank):
        if length(texts, chosen | {i}) <= width:
            chosen.add(i)
    line = Text(separator, style="dim").join(texts[i] for i in sorted(chosen))
    line.truncate(width, overflow="ellipsis")
    return line


def tokens_short(count: int) -> str:
    """A token count for a narrow line: exact below 100,000, else 794k / 1.2M."""
    return f"{count:,}" if abs(count) < 100_000 else compact_number(count)


def elided(text: str, width: int) -> str:
    """``text`` in at most ``width`` characters, its middle replaced by an ellipsis."""
    if len(text) <= width:
        return text
    head = (width - 1) // 2
    return text[:head] + "…" + text[len(text) - (width - 1 - head):]


def model_text(model: str | None, earlier_model: str | None, window: int | None = None) -> Text:
    """The session's model; after a compaction the file names none (Gemini CLI's checkpoint drops
    the model of every turn it keeps), so the one it named before is shown, said to be that, and,
    where its window is not the ``window`` the figures use (theirs is the default, as ``analyze``'s:
    the file names no model), said so beside it."""
    if model:
        return Text(visible(model, one_line=True), style="bold cyan")
    if earlier_model:
        said = " (before the compaction)"
        if window is not None and token_limit(earlier_model) != window:
            said = (f" (before the compaction; the figures use a {window:,}-token window, not its "
                    f"{token_limit(earlier_model):,}: --model to choose)")
        return Text.assemble((visible(earlier_model, one_line=True), "cyan"), (said, "dim"))
    return Text("model not recorded", style="dim")


def file_line(loaded: Loaded, width: int, warnings: int, earlier_model: str | None = None) -> Text:
    """``warnings``: how many lines a whole read of the file skips now (``SessionLive.shown_warnings``)."""
    session, analysis = loaded.session, loaded.analysis
    name = visible(session.path.name, one_line=True)
    model = model_text(analysis.model, earlier_model, analysis.token_limit)
    bare = model_text(analysis.model, earlier_model)  # (without the window's note)
    parts = [  # the model is never dropped (it sets the window); a long file name gives way to it
        Part(Text(name, style="bold"), shorter=(Text(elided(name, 36), style="bold"),
                                                Text(elided(name, 24), style="bold"),
                                                Text(elided(name, 16), style="bold"))),
        Part(model, shorter=(model, bare, bare)),
        Part(Text(plural(len(analysis.turns), "turn"))),
        Part(Text(human_size(session.size)), 3),
        Part(Text(session.format), 4),
    ]
    if warnings:
        parts.append(Part(Text(f"{plural(warnings, 'warning')} (w)", style="yellow")))
    return fit(parts, width)


def context_line(context: ContextFigures, verdict: Verdict, width: int) -> Text:
    """``context ███┃░░ 525,821 / 1,048,576 (50.1%) recorded  ·  would compress (i)``: the figure
    that decides, named; ``i`` opens why, and what the other figures on screen are."""
    source = ("recorded" if context.recorded_prompt_tokens is not None else "estimated", "dim")
    share = f" ({context.share_percent}) "
    figures = Text.assemble((count_text(context.deciding_tokens), "bold"), f" / {context.token_limit:,}{share}", source)
    # narrower: the window goes first (the gauge ends at it), the deciding figure stays exact, and only
    # then is it rounded ("1.0M / 1.0M (95.4%)" would read as a full window)
    exact = Text.assemble((count_text(context.deciding_tokens), "bold"), share, source)
    short = Text.assemble((tokens_short(context.deciding_tokens), "bold"),
                          f" / {tokens_short(context.token_limit)}{share}", source)
    said = Text(verdict.short, style="bold yellow" if verdict is Verdict.COMPRESS else "dim")
    said.append(" (i)", style="dim")
    tail = [Part(figures, shorter=(exact, short)), Part(said), Part(Text(context.reason(), style="dim"), 1)]
    if context.recorded_prompt_tokens is not None or context.environment_tokens:
        tail.append(Part(Text(context.estimate_note(), style="dim"), 2))
    label = "context "
    right = fit(tail, width - len(label) - MIN_GAUGE - 1)
    bar = max(MIN_GAUGE, min(GAUGE_WIDTH, width - len(label) - 1 - right.cell_len))
    return Text.assemble(label, gauge(context.deciding_tokens, context.token_limit, context.threshold, bar), " ",
                         right)


def split_line(loaded: Loaded, split: int, width: int) -> Text:
    """``split 145 (reference) · summarise 145 turns, 794,019 tok · keep 65 turns, 302,054 tok (27.6%)``,
    ever shorter as the width asks: words go first (the reference's turn, the summarised turns, which
    the split's number says, then the share), and only then are the token figures rounded (794k), so
    the header says the exact figures the divider row below it says wherever they fit; never a count
    that could read as a fraction."""
    analysis = loaded.analysis
    figures = analysis.split_figures(split)
    kind = loaded.split_kind(split)
    summarised_turns, summarised = int(figures["summarised_turns"]), int(figures["summarised_tokens"])
    kept_turns, kept = int(figures["kept_turns"]), int(figures["kept_tokens"])
    share = percent(float(figures["kept_share"]))
    number = ("split ", (f"{split:,}", "bold magenta"))
    label_style = "bold" if kind == "agentic" else ""
    named = Text.assemble(*number, " (", (kind, label_style), ")")
    full = named if kind == "reference" else Text.assemble(
        *number, " (", (f"{kind}; reference {analysis.compress_split_point:,}", label_style), ")")

    def summarise(tokens: str, turns: bool = False) -> Text:
        counted = (f"{summarised_turns:,}", "bold"), f" {noun_for(summarised_turns, 'turn')}, "
        return Text.assemble("summarise ", *(counted if turns else ()), (tokens, "bold"), " tok")

    def keep(tokens: str, with_share: bool) -> Text:
        return Text.assemble("keep ", (f"{kept_turns:,}", "bold"), f" {noun_for(kept_turns, 'turn')}, ",
                             (tokens, "bold"), f" tok ({share})" if with_share else " tok")

    exact = (f"{summarised:,}", f"{kept:,}")
    short = (tokens_short(summarised), tokens_short(kept))
    levels = [  # (split, summarise, keep), each level shorter than the one before
        (full, summarise(exact[0], True), keep(exact[1], True)),
        (named, summarise(exact[0], True), keep(exact[1], True)),
        (named, summarise(exact[0]), keep(exact[1], True)),
        (named, summarise(exact[0]), keep(exact[1], False)),
        (named, summarise(short[0]), keep(short[1], True)),
        (named, summarise(short[0]), keep(short[1], False)),
        (Text.assemble(*number), summarise(short[0]), keep(short[1], False)),
    ]
    parts = [Part(forms[0], shorter=tuple(forms[1:])) for forms in zip(*levels, strict=True)]
    if analysis.compress_split_point != analysis.split_point:
        parts.append(Part(Text(uncut_split_words(analysis.split_point), style="dim"), 1))
    return fit(parts, width)


def gap_line(gap: EstimateGap, width: int) -> Text:
    """Why the split's estimate and the recorded prompt the gauge shows differ, on one line
    (``deciding.EstimateGap``): the longest form that fits ``width``; ``i`` says more."""
    forms = [Text(gap.words(level) + " (i)", style="dim") for level in range(3)]
    return fit([Part(forms[0], shorter=tuple(forms[1:]))], width)


def header_lines(loaded: Loaded, split: int, warnings: int, width: int = 200,
                 earlier_model: str | None = None, gap: EstimateGap | None = None) -> Text:
    """The three lines, and a fourth that says why the estimate and the recorded prompt differ (``gap``)."""
    analysis = loaded.analysis
    lines = [
        file_line(loaded, width, warnings, earlier_model),
        context_line(analysis.context, analysis.verdict, width),
        split_line(loaded, split, width),
    ]
    if gap is not None:
        lines.append(gap_line(gap, width))
    return Text("\n").join(lines)


def tail_lines(tail: TailRead, model: str | None, width: int) -> Text:
    """The header while the whole file is read: ``model``: the one ``--model`` names (else the file's,
    still being read); every figure of the history ``reading…``."""
    name = visible(tail.path.name, one_line=True)
    reading = Text(READING, style="bold yellow")
    shown = Text.assemble(("model ", "dim"), reading) if model is None else model_text(model, None)
    first = fit([
        Part(Text(name, style="bold"), shorter=(Text(elided(name, 36), style="bold"),
                                                Text(elided(name, 24), style="bold"))),
        Part(shown),
        Part(Text.assemble("turns ", reading)),
        Part(Text(human_size(tail.size)), 3),
    ], width)
    rows = ("the newest turns, from the end of the file: their numbers, shares and masking follow"
            if tail.recording else "this format is read whole before its turns are shown")
    second = fit([Part(Text.assemble("context ", reading)),
                  Part(Text("the gauge, the total and whether Gemini CLI would compress need every turn", style="dim"),
                       1)], width)
    third = fit([Part(Text.assemble("split ", reading)), Part(Text(rows, style="dim"), 1)], width)
    return Text("\n").join([first, second, third])


class ContextHeader(FittedLines):
    """Three lines of figures about the open session; updated at every split step and resize."""

    DEFAULT_CSS = """
    ContextHeader { height: auto; padding: 0 1; background: $panel; }
    """

    # A longer history's results held twice (a pass over every turn, ~80 ms at 170,000 turns) are counted
    # in a worker once the header is shown, and said to be counting meanwhile.
    COUNT_AT_ONCE = 20_000

    _shown: tuple[Loaded, int, int, str | None] | None = None
    _gap: tuple[Analysis, EstimateGap | None] | None = None  # measured once per analysis
    _tail: tuple[TailRead, str | None] | None = None  # shown while the whole file is read

    def show_path(self, text: Text) -> None:
        """Only the file's name (no figures: it could not be read)."""
        self._shown = self._tail = None
        self.show_lines(text)

    def show_tail(self, tail: TailRead, model: str | None) -> None:
        """The file's tail is shown; its figures are still being read (``model``: ``--model``'s)."""
        self._tail = (tail, model)
        self._render_lines()

    def show(self, loaded: Loaded, split: int, warnings: int, earlier_model: str | None = None) -> None:
        """``warnings``: lines skipped reading the file as it is now; ``earlier_model``: the model the
        session named before a compaction dropped it."""
        self._shown = (loaded, split, warnings, earlier_model)
        self._tail = None
        self._render_lines()

    def on_resize(self, event: Resize) -> None:
        self._render_lines()

    @work(thread=True, exclusive=True, exit_on_error=False, group="count", description="counting results held twice")
    def count_twice(self, analysis: Analysis, index: TurnIndex | None) -> None:
        analysis.twice_held = twice_held_quarters(analysis, index)  # (an int set once: safe for other readers)
        self.app.call_from_thread(self._counted, analysis)

    def _counted(self, analysis: Analysis) -> None:
        if self._gap is not None and self._gap[0] is analysis:
            self._gap = None  # worked out again, with the count
            self._render_lines()

    def _render_lines(self) -> None:
        width = self.content_size.width or self.app.size.width - 2
        if self._tail is not None:
            self.show_lines(tail_lines(*self._tail, width))
            return
        if self._shown is None:
            return
        loaded, split, warnings, earlier_model = self._shown
        if self._gap is None or self._gap[0] is not loaded.analysis:
            analysis, index = loaded.analysis, loaded.session.turn_index
            at_once = analysis.twice_held is not None or len(analysis.turns) <= self.COUNT_AT_ONCE
            self._gap = (analysis, estimate_gap(analysis, index, count=at_once))
            if self._gap[1] is not None and self._gap[1].twice is None:
                self.count_twice(analysis, index)
        self.show_lines(header_lines(loaded, split, warnings, width, earlier_model, self._gap[1]))
        context = loaded.analysis.context
        self.tooltip = f"{context.reason()}\n{context.estimate_note()}"
