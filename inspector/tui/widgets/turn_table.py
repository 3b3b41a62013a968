"""The turn table: one row per history turn, rendered line by line on demand.

A ``ScrollView`` with the Line API: only the rows on screen are turned into
strips, straight from the Analysis arrays, so a 170k-turn session costs the
same to show as a short one.  A divider row sits at the split; rows above it
(the turns to be summarised) are dimmed.  Moving the split only repaints.
The first cell marks where a split may fall: ``•`` before a user prompt (the
reference's candidates), ``◆`` before a model turn (agentic candidates).
"""

from __future__ import annotations

import bisect
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from typing import ClassVar

from rich.segment import Segment
from rich.style import Style
from textual.binding import Binding, BindingType
from textual.cache import LRUCache
from textual.events import Click, Resize
from textual.geometry import Region, Size
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip

from inspector.analysis import Analysis
from inspector.compaction.split import split_kind
from inspector.format import USAGE_HEADER, percent, share_bar, usage_text, visible
from inspector.session.history import is_environment_content
from inspector.tui.cost_lines import cost_cell, has_cost
from inspector.tui.masking_marks import masking_cell
from inspector.tui.messages import TableColumns, TableDrawn, TurnSelected, ViewCleared
from inspector.tui.turn_set import TurnSet

PROMPT_MARK = "•"  # a reference split candidate: the kept part may start at this user prompt
AGENTIC_MARK = "◆"  # an agentic split candidate: the kept part may start at this model turn
ENVIRONMENT_KIND = "session context"  # the kind column of the <session_context> turn


@dataclass(frozen=True)
class Column:
    """A column of the table: ``drop`` orders what goes first when the table is narrow
    (0: never dropped); ``flex``: the column takes the width left over, down to ``width``."""

    key: str
    title: str
    width: int
    right: bool = False
    drop: int = 0
    flex: int = 0  # the widest it grows to (0: fixed)


COLUMNS = (
    Column("mark", "", 1),
    Column("index", "#", 3, right=True),
    Column("role", "role", 5, drop=4),
    Column("kind", "kind", 10, flex=24),
    Column("mask", "", 1),  # ■ masked already, □ masked next turn (tui/masking_marks.py)
    Column("tokens", "est. tok", 9, right=True),
    Column("usage", USAGE_HEADER, 22, right=True, drop=3),  # "1.2M/9.9k/1.1M/9.9k" whole, and its header
    Column("cost", "cost", 7, right=True, drop=2),  # what the turn cost (tui/cost_lines.py); only when priced
    Column("share", "share", 6, right=True, drop=4),
    Column("bar", "vs largest", 10, drop=1),  # the share again, drawn: the first to go
)


KIND_FLOOR = 10  # the kind column is never narrower (longer kinds end in an ellipsis then)


def layout(width: int, turn_count: int, without: frozenset[str] = frozenset(),
           kind_width: int = KIND_FLOOR) -> tuple[tuple[Column, int], ...]:
    """The columns that fit ``width`` cells and each one's width (``without``: columns with
    nothing to show; ``kind_width``: the longest kind to show, which goes whole before the
    least needed columns stay): the least needed columns drop first, then the kind column
    grows into what is left (or, on a very narrow table, shrinks down to ``KIND_FLOOR``)."""
    index_width = max(3, len(f"{max(0, turn_count - 1):,}"))
    kind = max(KIND_FLOOR, min(kind_width, next(c.flex for c in COLUMNS if c.key == "kind")))
    sized = [(c, index_width if c.key == "index" else kind if c.key == "kind" else c.width)
             for c in COLUMNS if c.key not in without]

    def need(cols: list[tuple[Column, int]]) -> int:
        return sum(w for _, w in cols) + len(cols) - 1

    for drop in sorted({c.drop for c in COLUMNS if c.drop}):
        if need(sized) <= width:
            break
        sized = [(c, w) for c, w in sized if c.drop != drop]
    over = need(sized) - width
    if over > 0:
        sized = [(c, max(KIND_FLOOR, w - over) if c.key == "kind" else w) for c, w in sized]
    spare = max(0, width - need(sized))
    return tuple((c, min(c.flex, w + spare) if c.flex else w) for c, w in sized)


def header_text(columns: tuple[tuple[Column, int], ...] | None = None) -> str:
    """The titles of ``columns`` (default: every column at its narrowest), aligned like the rows."""
    columns = columns or tuple((c, c.width) for c in COLUMNS)
    return " ".join(f"{c.title:>{w}}" if c.right else f"{c.title:<{w}}" for c, w in columns).rstrip()


def fit(text: str, width: int, right: bool = False) -> str:
    """``text`` in ``width`` cells: padded, or cut with an ellipsis (never silently)."""
    if len(text) > width:
        text = text[: max(0, width - 1)] + "…"
    return f"{text:>{width}}" if right else f"{text:<{width}}"


class TurnTable(ScrollView, can_focus=True):
    """Every turn of an Analysis, with the split shown as a divider row."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "turn-table--summarised",
        "turn-table--kept",
        "turn-table--divider",
        "turn-table--cursor",
        "turn-table--user",
        "turn-table--model",
        "turn-table--candidate",
        "turn-table--agentic",
    }

    DEFAULT_CSS = """
    TurnTable {
        background: $surface;
        scrollbar-gutter: stable;
    }
    TurnTable > .turn-table--summarised { color: $text-muted; background: $primary 12%; }
    TurnTable > .turn-table--kept { color: $text; }
    TurnTable > .turn-table--divider { color: $warning; text-style: bold; }
    TurnTable > .turn-table--cursor { background: $accent 40%; }
    TurnTable:focus > .turn-table--cursor { background: $accent 80%; }
    TurnTable > .turn-table--user { color: $primary-lighten-3; }
    TurnTable > .turn-table--model { color: $success; }
    TurnTable > .turn-table--candidate { color: $warning; }
    TurnTable > .turn-table--agentic { color: $secondary-lighten-2; text-style: bold; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("up,k", "cursor(-1)", "Up", show=False, id="table.up", tooltip="previous turn"),
        Binding("down,j", "cursor(1)", "Down", show=False, id="table.down", tooltip="next turn"),
        Binding("pageup", "page(-1)", "Page up", show=False, id="table.page-up", tooltip="one screen up"),
        Binding("pagedown", "page(1)", "Page down", show=False, id="table.page-down", tooltip="one screen down"),
        Binding("home,g", "first", "First turn", show=False, id="table.first", tooltip="the first turn"),
        Binding("end,G", "last", "Last turn", show=False, id="table.last", tooltip="the last turn"),
        Binding("s", "goto_split", "Go to split", show=False, id="table.goto-split",
                tooltip="move the cursor to the first kept turn"),
    ]

    cursor: reactive[int] = reactive(0, always_update=True)

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.analysis: Analysis | None = None
        self.split = 0
        self.reference_split = 0
        self.agentic: AbstractSet[int] = frozenset()
        self._candidates: AbstractSet[int] = frozenset()
        self._max_quarters = 1
        self._max_at = -1  # the turn that has them
        self._header = ""  # the column titles last told to the screen
        self._undrawn = False  # an analysis was given and no row of it drawn yet
        self._lines: LRUCache[tuple[int, int, bool, bool], Strip] = LRUCache(1024)
        self.shown: list[int] | None = None  # the turns on screen, in order (None: every turn, in turn order)
        self.by_tokens = False  # ``shown`` is ordered by size: no divider then
        self._where: dict[int, int] = {}  # turn -> its position in ``shown``
        self.columns: tuple[tuple[Column, int], ...] = layout(80, 0)

    # -- data -----------------------------------------------------------------------
    @property
    def turn_count(self) -> int:
        return len(self.analysis.turns) if self.analysis else 0

    @property
    def shown_count(self) -> int:
        return len(self.shown) if self.shown is not None else self.turn_count

    @property
    def divider_row(self) -> int | None:
        """The row of the split divider (None when the rows are not in turn order)."""
        if self.shown is None:
            return self.split
        return None if self.by_tokens else bisect.bisect_left(self.shown, self.split)

    @property
    def row_count(self) -> int:
        if self.analysis is None:
            return 0
        return self.shown_count + (0 if self.divider_row is None else 1)

    def set_view(self, shown: list[int] | None, *, by_tokens: bool = False) -> None:
        """Show only ``shown`` (a filter), in that order (``by_tokens``: largest first); None: every turn."""
        self.shown = shown
        self.by_tokens = by_tokens and shown is not None
        self._where = {turn: pos for pos, turn in enumerate(shown)} if shown is not None else {}
        self._lines.clear()
        self.virtual_size = Size(self.content_width, self.row_count)
        if self.shown_count and self.position_of(self.cursor) is None:
            self.cursor = self.turn_at_position(0)
        self.refresh()
        self.scroll_to_cursor()

    def position_of(self, turn: int) -> int | None:
        """Where ``turn`` is among the rows shown (None: filtered out)."""
        if self.shown is None:
            return turn if 0 <= turn < self.turn_count else None
        return self._where.get(turn)

    def turn_at_position(self, position: int) -> int:
        return self.shown[position] if self.shown is not None else position

    def set_analysis(self, analysis: Analysis, split: int, *, follow: bool = False,
                     agentic: AbstractSet[int] = frozenset(), same_before: int = 0) -> None:
        """Show a (new) analysis; ``follow`` keeps the last row in view (live append);
        ``agentic``: the model turns an agentic split may start at (marked ◆); ``same_before``:
        the turns before it are those of the analysis shown until now (a live append)."""
        at_bottom = self.scroll_y >= self.max_scroll_y
        if analysis is not self.analysis:  # a new reading: the screen applies its filter again
            self.shown, self.by_tokens, self._where = None, False, {}
        self._largest(analysis, same_before if self.analysis is not None else 0)
        self.analysis = analysis
        self._undrawn = True
        self.agentic = agentic
        self._candidates = TurnSet(analysis.candidates)
        self.split = split
        self.reference_split = analysis.compress_split_point
        self._lines.clear()
        self.fit_columns()
        self.virtual_size = Size(self.content_width, self.row_count)
        if self.cursor >= self.turn_count:
            self.cursor = max(0, self.turn_count - 1)
        self.refresh()
        if follow and at_bottom:
            bottom = max(0, self.row_count - self.scrollable_content_region.height)
            self.scroll_to(y=bottom, animate=False, force=True, immediate=True)

    def _largest(self, analysis: Analysis, same_before: int) -> None:
        """The largest turn's size (the bars are relative to it): after a live append, from the new
        turns and the largest one before them, when it is still there."""
        quarters = analysis.quarters
        if same_before > 0 and self._max_at < same_before:
            best, at = (self._max_quarters, self._max_at) if self._max_at >= 0 else (0, -1)
            for i in range(same_before, len(quarters)):
                if quarters[i] > best:
                    best, at = quarters[i], i
        else:
            best = max(quarters, default=0)
            at = quarters.index(best) if quarters else -1
        self._max_quarters, self._max_at = best or 1, at

    def notes_changed(self) -> None:
        """Masking and cost were worked out for the analysis shown: marks and the cost column."""
        self._lines.clear()
        self.fit_columns()
        self.refresh()

    def set_split(self, split: int) -> None:
        if split == self.split:
            return
        self.split = split
        self._lines.clear()
        self.virtual_size = Size(self.content_width, self.row_count)
        self.refresh()
        if self.divider_row is not None:
            self.scroll_to_region(Region(0, self.divider_row, 1, 1), animate=False, immediate=True)

    # -- columns ----------------------------------------------------------------------
    @property
    def content_width(self) -> int:
        return sum(w for _, w in self.columns) + len(self.columns) - 1

    def fit_columns(self) -> None:
        """Choose the columns for the width on screen; tell the screen when they change."""
        width = self.scrollable_content_region.width or self.size.width
        without = frozenset() if self.analysis is not None and has_cost(self.analysis) else frozenset({"cost"})
        columns = layout(width or 80, self.turn_count, without, self.widest_kind())
        if columns != self.columns:
            self.columns = columns
            self._lines.clear()
            self.virtual_size = Size(self.content_width, self.row_count)
            self.refresh()
        header = header_text(self.columns)
        if header != self._header:
            self._header = header
            self.post_message(TableColumns(header))

    _widest: tuple[int, int, int] = (0, 0, KIND_FLOOR)  # (id of the kinds list, kinds seen, the longest)

    def widest_kind(self) -> int:
        """The longest kind any turn shows (the kinds seen before are not read again after an append)."""
        if self.analysis is None:
            return KIND_FLOOR
        kinds = self.analysis.kinds
        seen_list, seen, widest = self._widest
        if seen_list != id(kinds) or seen > len(kinds):
            seen, widest = 0, KIND_FLOOR
        if len(kinds) > seen:
            widest = max(widest, max(len(kind) for kind in set(kinds[seen:])))
        if self.turn_count and self.environment(0):
            widest = max(widest, len(ENVIRONMENT_KIND))
        self._widest = (id(kinds), len(kinds), widest)
        return widest

    def environment(self, index: int) -> bool:
        """The <session_context> turn Gemini CLI puts first (a /chat save keeps it in the history)."""
        assert self.analysis is not None
        turn = self.analysis.turns[index]
        return turn.role == "user" and not turn.is_tool_result and is_environment_content(turn.parts)

    def on_resize(self, event: Resize) -> None:
        self.fit_columns()
        self.scroll_to_cursor()  # on open the table has no size until now

    def scroll_to_cursor(self) -> None:
        """Bring the cursor's row to the middle of the view (the turns before and after it in sight)."""
        if self.turn_count and self.size.height:
            self.scroll_to_region(Region(0, self.row_of(self.cursor), 1, 1), animate=False, immediate=True,
                                  center=True)

    # -- geometry: turn index <-> row -----------------------------------------------
    def row_of(self, turn: int) -> int:
        """The row of ``turn`` (of where it would be, when the filter hides it)."""
        position = self.position_of(turn)
        if position is None:
            position = 0 if self.shown is None or self.by_tokens else bisect.bisect_left(self.shown, turn)
        divider = self.divider_row
        return position + 1 if divider is not None and position >= divider else position

    def turn_at(self, row: int) -> int | None:
        """The turn shown on a row, or None for the divider."""
        divider = self.divider_row
        if divider is not None:
            if row == divider:
                return None
            if row > divider:
                row -= 1
        return self.turn_at_position(row) if 0 <= row < self.shown_count else None

    # -- rendering ------------------------------------------------------------------
    def render_line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        row = y + scroll_y
        width = max(self.scrollable_content_region.width, self.content_width)
        if self.analysis is None or row >= self.row_count:
            return Strip.blank(width, self.rich_style)
        if self._undrawn:
            self._undrawn = False
            self.post_message(TableDrawn())  # the screen does deferred work once it is drawn
        turn = self.turn_at(row)
        key = (row, width, turn == self.cursor, self.has_focus)
        strip = self._lines.get(key)
        if strip is None:
            strip = self._divider(width) if turn is None else self._row(turn, width)
            self._lines[key] = strip
        return strip.crop(scroll_x, scroll_x + width)

    def _style(self, name: str) -> Style:
        return self.get_component_rich_style(name)

    def _row(self, index: int, width: int) -> Strip:
        assert self.analysis is not None
        analysis = self.analysis
        turn = analysis.turns[index]
        tokens = analysis.turn_tokens(index)
        share = analysis.turn_share(index)  # as analyze's share column gives it
        relative = analysis.quarters[index] / self._max_quarters
        base = self._style("turn-table--summarised" if index < self.split else "turn-table--kept")
        role_style = self._style("turn-table--user" if turn.role == "user" else "turn-table--model")
        kind = ENVIRONMENT_KIND if self.environment(index) else analysis.kinds[index]
        if index in self.agentic:
            mark: tuple[str, Style | None] = (AGENTIC_MARK, self._style("turn-table--agentic"))
        elif index in self._candidates and index:
            mark = (PROMPT_MARK, self._style("turn-table--candidate"))
        else:
            mark = (" ", None)
        texts = {
            "index": f"{index:,}",
            "role": visible(turn.role, one_line=True),
            "kind": visible(kind, one_line=True),
            "tokens": f"{tokens:,}",
            "usage": usage_text(analysis.recorded[index]),
            "share": percent(share),
            "cost": cost_cell(analysis, index),
        }
        extras = {"role": role_style if index >= self.split else None, "bar": role_style}
        cells: list[tuple[str, Style | None]] = []
        for column, cells_wide in self.columns:
            if column.key == "mark":
                cells.append(mark)
            elif column.key == "mask":
                cells.append(masking_cell(analysis, index))
            elif column.key == "bar":
                cells.append((share_bar(relative, cells_wide), extras["bar"]))
            else:
                cells.append((fit(texts[column.key], cells_wide, column.right), extras.get(column.key)))
            cells.append((" ", None))
        cells.pop()
        if index == self.cursor:
            cursor = self._style("turn-table--cursor")
            segments = [Segment(text, base + extra + cursor if extra else base + cursor) for text, extra in cells]
            return Strip(segments).adjust_cell_length(width, base + cursor)
        segments = [Segment(text, base + extra if extra else base) for text, extra in cells]
        return Strip(segments).adjust_cell_length(width, base)

    def _divider(self, width: int) -> Strip:
        """The split row: the longest wording that fits the width."""
        assert self.analysis is not None
        figures = self.analysis.split_figures(self.split)
        split = self.split
        label = short_label = split_kind(split, self.reference_split, split in self.agentic)
        if short_label != "reference":
            label = f"{short_label}; reference {self.reference_split:,}"
        summarised_tokens = f"{figures['summarised_tokens']:,} tok"
        kept_tokens = f"{figures['kept_tokens']:,} tok"
        kept_share = percent(float(figures["kept_share"]))
        summarised = f"summarise 0-{split - 1:,}" if split else "summarise nothing"
        kept = f"keep {split:,}-{self.turn_count - 1:,}" if split < self.turn_count else "keep nothing"
        sides = f"summarise {summarised_tokens} ── keep {kept_tokens}"
        wordings = (
            f"── split {split:,} ({label}) ── {summarised}: {summarised_tokens} ── {kept}: {kept_tokens} "
            f"({kept_share}) ",
            f"── split {split:,} ({label}) ── {sides} ({kept_share}) ",
            f"── split {split:,} ({short_label}) ── {sides} ({kept_share}) ",
            f"── split {split:,} ── {sides} ",
            f"── split {split:,} ",
        )
        text = next((w for w in wordings if len(w) <= width), wordings[-1])
        text = text.ljust(width, "─")
        return Strip([Segment(text, self._style("turn-table--divider"))])

    # -- cursor ---------------------------------------------------------------------
    def watch_cursor(self, cursor: int) -> None:
        self.refresh()
        if self.analysis is not None and self.turn_count:
            self.scroll_to_region(Region(0, self.row_of(cursor), 1, 1), animate=False, immediate=True)
            self.post_message(TurnSelected(cursor))

    def move_to(self, turn: int) -> None:
        """Put the cursor on ``turn``; a turn the filter hides brings every turn back first."""
        if not self.turn_count:
            return
        turn = max(0, min(self.turn_count - 1, turn))
        if self.position_of(turn) is None:
            self.notify(f"Turn {turn:,} was hidden by the filter: every turn is shown again.", timeout=4)
            self.set_view(None)
            self.post_message(ViewCleared())
        self.cursor = turn

    def move_by(self, delta: int) -> None:
        """Move the cursor ``delta`` rows among the turns shown."""
        if not self.shown_count:
            return
        position = self.position_of(self.cursor) or 0
        self.cursor = self.turn_at_position(max(0, min(self.shown_count - 1, position + delta)))

    def action_cursor(self, delta: int) -> None:
        self.move_by(delta)

    def action_page(self, direction: int) -> None:
        self.move_by(direction * max(1, self.size.height - 1))

    def action_first(self) -> None:
        self.move_by(-self.shown_count)

    def action_last(self) -> None:
        self.move_by(self.shown_count)

    def action_goto_split(self) -> None:
        self.move_to(self.split)

    def on_click(self, event: Click) -> None:
        offset = event.get_content_offset(self)
        if offset is None:
            return
        turn = self.turn_at(offset.y + self.scroll_offset.y)
        if turn is not None:
            self.move_to(turn)

    def on_focus(self) -> None:
        self.refresh()

    def on_blur(self) -> None:
        self.refresh()
