"""The turn table: one row per history turn, rendered line by line on demand.

A ``ScrollView`` with the Line API: only the rows on screen are turned into
strips, straight from the Analysis arrays, so a 170k-turn session costs the
same to show as a short one.  A divider row sits at the split; rows above it
(the turns to be summarised) are dimmed.  Moving the split only repaints.
The first cell marks where a split may fall: ``•`` before a user prompt (the
reference's candidates), ``◆`` before a model turn (agentic candidates).

While a big file is read, the table shows the newest turns read from its end
(``show_tail``, ``session.tail``): each with its own figures (role, kind,
estimate, recorded usage), and ``…`` where a figure needs the whole history
(the turn's number, its share, the bar, masking); no divider, no marks.  After a
whole read, masking marks are ``…`` until they are worked out (``notes_pending``).
"""

from __future__ import annotations

import bisect
from collections import Counter
from collections.abc import Sequence
from collections.abc import Set as AbstractSet
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
from inspector.format import percent, share_bar, usage_text, visible
from inspector.session.history import Turn, is_environment_content
from inspector.session.tail import TailRead
from inspector.session.turn_index import listed
from inspector.tui.cost_lines import cost_cell, has_cost
from inspector.tui.masking_marks import masking_cell
from inspector.tui.messages import TableColumns, TableDrawn, TurnSelected, ViewCleared
from inspector.tui.turn_set import TurnSet
from inspector.tui.widgets.table_columns import COLUMNS, KIND_FLOOR, Column, fit, header_text, layout

PROMPT_MARK = "•"  # a reference split candidate: the kept part may start at this user prompt
AGENTIC_MARK = "◆"  # an agentic split candidate: the kept part may start at this model turn
ENVIRONMENT_KIND = "session context"  # the kind column of the <session_context> turn
PENDING = "…"  # a cell whose figure needs the whole history, still being read

__all__ = ["COLUMNS", "PENDING", "TurnTable", "header_text", "layout"]


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
        self.tail: TailRead | None = None  # the newest turns, shown until the whole file is read
        self.notes_pending = False  # masking is being worked out for the analysis shown (its marks: …)
        self.split = 0
        self.reference_split = 0
        self.agentic: AbstractSet[int] = frozenset()
        self._candidates: AbstractSet[int] = frozenset()
        self._max_quarters = 1
        self._max_at = -1  # the turn that has them
        self._counted_kinds: Sequence[str] | None = None  # the kinds ``_kind_lengths`` counts
        self._kind_lengths: Counter[int] = Counter()  # how many turns show a kind of each length
        self._header = ""  # the column titles last told to the screen
        self._undrawn = False  # an analysis was given and no row of it drawn yet
        self._lines: LRUCache[tuple[int, int, bool, bool], Strip] = LRUCache(1024)
        self.shown: list[int] | None = None  # the turns on screen, in order (None: every turn, in turn order)
        self.by_tokens = False  # ``shown`` is ordered by size: no divider then
        self._where: dict[int, int] = {}  # turn -> its position in ``shown``
        self.columns: tuple[tuple[Column, int], ...] = layout(80, 0)

    # -- data -----------------------------------------------------------------------
    @property
    def turns(self) -> Sequence[Turn]:
        """The turns shown: the analysis's, else the tail's (``show_tail``), else none."""
        return self.analysis.turns if self.analysis else self.tail.turns if self.tail else []

    @property
    def kinds(self) -> Sequence[str]:
        return self.analysis.kinds if self.analysis else self.tail.index.kinds if self.tail else []

    @property
    def turn_count(self) -> int:
        return len(self.turns)

    @property
    def shown_count(self) -> int:
        return len(self.shown) if self.shown is not None else self.turn_count

    @property
    def divider_row(self) -> int | None:
        """The row of the split divider (None when the rows are not in turn order, or no split is known)."""
        if self.analysis is None:
            return None
        if self.shown is None:
            return self.split
        return None if self.by_tokens else bisect.bisect_left(self.shown, self.split)

    @property
    def row_count(self) -> int:
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
        self.tail = None
        same = same_before if self.analysis is not None else 0
        self._largest(analysis, same)
        self._count_kinds(analysis.kinds, same)
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

    def show_tail(self, tail: TailRead) -> None:
        """Show the newest turns read from the end of the file while the rest is read."""
        self.analysis, self.tail = None, tail
        self._count_kinds(tail.index.kinds, 0)
        self.shown, self.by_tokens, self._where = None, False, {}
        self.agentic, self._candidates = frozenset(), frozenset()
        self._lines.clear()
        self.fit_columns()
        self.virtual_size = Size(self.content_width, self.row_count)
        self.cursor = max(0, self.turn_count - 1)
        self.refresh()

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
            values = listed(quarters)  # (a Column's chunks joined; then max and index in C, not item by item)
            best = max(values, default=0)
            at = values.index(best) if values else -1
        self._max_quarters, self._max_at = best or 1, at

    def notes_changed(self) -> None:
        """Masking and cost were worked out for the analysis shown: marks and the cost column."""
        self.notes_pending = False
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

    def _count_kinds(self, kinds: Sequence[str], same_before: int) -> None:
        """Count the lengths of the kinds shown: after a live append, less the turns written again and
        plus the new ones (``same_before``: the turns before it are those counted; the rest is not read again)."""
        counted = self._counted_kinds
        lengths = self._kind_lengths
        if counted is not None and 0 < same_before <= len(counted):
            for kind, turns in Counter(counted[same_before:]).items():
                lengths[len(kind)] -= turns
            start = same_before
        else:
            lengths.clear()
            start = 0
        for kind, turns in Counter(kinds[start:] if start else listed(kinds)).items():  # (a few kinds, many turns)
            lengths[len(kind)] += turns
        self._counted_kinds = kinds

    def widest_kind(self) -> int:
        """The longest kind any turn shows."""
        widest = max((length for length, turns in self._kind_lengths.items() if turns > 0), default=0)
        if self.turn_count and self.environment(0):
            widest = max(widest, len(ENVIRONMENT_KIND))
        return max(widest, KIND_FLOOR)

    def environment(self, index: int) -> bool:
        """The <session_context> turn Gemini CLI puts first (a /chat save keeps it in the history)."""
        turn = self.turns[index]
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
        if row >= self.row_count:
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
        if self.analysis is None:
            return self._tail_row(index, width)
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
        pending = (PENDING, self._style("turn-table--summarised"))
        special = {"mark": mark, "mask": pending if self.notes_pending else masking_cell(analysis, index)}
        return self._strip(index, width, base, texts, special, extras, relative)

    def _tail_row(self, index: int, width: int) -> Strip:
        """A turn of the tail: its own figures, ``…`` for those the whole history gives."""
        assert self.tail is not None
        tail = self.tail
        turn = tail.turns[index]
        role_style = self._style("turn-table--user" if turn.role == "user" else "turn-table--model")
        texts = {
            "index": PENDING,
            "role": visible(turn.role, one_line=True),
            "kind": visible(ENVIRONMENT_KIND if self.environment(index) else tail.index.kinds[index], one_line=True),
            "tokens": f"{tail.tokens(index):,}",
            "usage": usage_text(tail.index.usage[index]),
            "share": PENDING,
            "cost": "",
        }
        special = {"mark": (" ", None), "mask": (PENDING, self._style("turn-table--summarised"))}
        return self._strip(index, width, self._style("turn-table--kept"), texts, special, {"role": role_style}, None)

    def _strip(self, index: int, width: int, base: Style, texts: dict[str, str],
               special: dict[str, tuple[str, Style | None]], extras: dict[str, Style | None],
               relative: float | None) -> Strip:
        """A row's cells in the columns shown (``relative``: the bar's length; None: no bar yet)."""
        cells: list[tuple[str, Style | None]] = []
        for column, cells_wide in self.columns:
            if column.key in special:
                cells.append(special[column.key])
            elif column.key == "bar":
                bar = " " * cells_wide if relative is None else share_bar(relative, cells_wide)
                cells.append((bar, extras.get("bar")))
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
        if self.turn_count:
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
        if self.analysis is None:
            self.notify("The split is still being read.", severity="warning", timeout=3)
            return
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
