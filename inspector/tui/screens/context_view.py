"""Where the context goes (``v`` on a session): the estimate by kind, tool, file and model, as bars.

The figures are ``inspector.breakdown``'s, the ones ``analyze --by`` and
``analyze --json`` print.  Left/right (or k, t, f, m) switch the grouping;
Enter on a group lists the turns it is in; Enter on a turn closes the view
with the table's cursor on that turn.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import DataTable, Static

from inspector.breakdown import Breakdown, Dimension, Group, session_breakdown
from inspector.breakdown_text import cut_name, split_words
from inspector.format import percent, plural, share_bar, visible
from inspector.tui.widgets.steady_footer import SteadyFooter

if TYPE_CHECKING:
    from inspector.tui.loading import Loaded

DIMENSIONS = tuple(Dimension)
_FIGURE_COLUMNS = (("tokens", 10), ("share", 6), ("turns", 5), ("kept", 9))
_FRAME = 2 + 2 + 2  # border, padding, the table's scrollbar
_CELL_PADDING = 2  # a DataTable cell has one column of padding a side


class ContextViewScreen(ModalScreen[int | None]):
    """The groups of one grouping, largest first; a group's turns on Enter."""

    DEFAULT_CSS = """
    ContextViewScreen { align: center middle; }
    ContextViewScreen #context-box {
        width: 120; max-width: 100%; height: 100%;
        border: thick $primary; background: $surface; padding: 0 1;
    }
    ContextViewScreen #context-groups { height: 1fr; }
    ContextViewScreen #context-tabs { height: 1; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q", "back", "Back", id="context.back", tooltip="back to the groups, or to the session"),
        Binding("left", "switch(-1)", "Previous grouping", id="context.previous", key_display="←", priority=True),
        Binding("right", "switch(1)", "Next grouping", id="context.next", key_display="→", priority=True),
        Binding("k", "show('kind')", "Kind", show=False, id="context.kind"),
        Binding("t", "show('tool')", "Tool", show=False, id="context.tool"),
        Binding("f", "show('file')", "File", show=False, id="context.file"),
        Binding("m", "show('model')", "Model", show=False, id="context.model"),
    ]

    def __init__(self, loaded: Loaded, split: int) -> None:
        super().__init__()
        self.loaded = loaded
        self.split = split
        self.found: Breakdown | None = None
        self.dimension = Dimension.KIND
        self.opened: Group | None = None  # the group whose turns are listed

    def compose(self) -> ComposeResult:
        with Vertical(id="context-box"):
            yield Static(Text("Measuring every part of every turn…", style="dim"), id="context-title", markup=False)
            yield Static("", id="context-tabs", markup=False)
            yield DataTable(id="context-groups", cursor_type="row", zebra_stripes=True)
            yield Static("", id="context-foot", markup=False)
        yield SteadyFooter()

    def on_mount(self) -> None:
        self.measure()

    @work(thread=True, exclusive=True, group="context-view", description="grouping the estimate")
    def measure(self) -> None:
        found = session_breakdown(self.loaded.session, self.loaded.analysis, self.split)
        self.app.call_from_thread(self.measured, found)

    def measured(self, found: Breakdown) -> None:
        self.found = found
        self.query_one("#context-title", Static).update(Text.assemble(
            ("Where the context goes: ", "bold"), f"{found.total_tokens:,} tokens estimated over ",
            plural(found.turn_count, "turn"), "; ", split_words(found)))
        self.show_groups()

    # -- what is listed ------------------------------------------------------------------------
    def table_width(self) -> int:
        return min(120, self.app.size.width) - _FRAME

    def name_width(self, groups: tuple[Group, ...], fixed: int) -> int:
        """As wide as the longest name, at most 40 columns and half of what the figures leave."""
        longest = max((len(visible(g.name, one_line=True)) for g in groups), default=0)
        return max(10, min(longest, 40, (self.table_width() - fixed) // 2))

    def show_groups(self) -> None:
        found = self.found
        if found is None:
            return
        self.opened = None
        groups = found.groups(self.dimension)
        tabs = Text()
        for dimension in DIMENSIONS:
            label = f" {dimension.value} "
            tabs.append(label, "reverse bold" if dimension is self.dimension else "dim")
            tabs.append(" ")
        tabs.append("←/→ switch", "dim")
        self.query_one("#context-tabs", Static).update(tabs)
        table = self.query_one("#context-groups", DataTable)
        table.clear(columns=True)
        fixed = sum(width + _CELL_PADDING for _, width in _FIGURE_COLUMNS)
        names = self.name_width(groups, fixed)
        bar = max(4, self.table_width() - fixed - names - 2 * _CELL_PADDING)
        table.add_column(self.dimension.value, width=names, key="name")
        for title, width in _FIGURE_COLUMNS:
            table.add_column(Text(title, justify="right"), width=width, key=title)
        table.add_column("", width=bar, key="bar")
        for group in groups:
            table.add_row(Text(cut_name(group.name, names, self.dimension is Dimension.FILE)),
                          *self._figures(group), Text(share_bar(group.share, bar), "bold"), key=group.name)
        self.query_one("#context-foot", Static).update(self._foot(found, groups))
        table.focus()

    def _figures(self, group: Group) -> list[Text]:
        return [Text(f"{group.tokens:,}", justify="right"), Text(percent(group.share), justify="right"),
                Text(f"{len(group.turns):,}", justify="right"), Text(f"{group.kept_tokens:,}", justify="right")]

    def _foot(self, found: Breakdown, groups: tuple[Group, ...]) -> Text:
        covered = sum(g.tokens for g in groups)
        if not groups:
            said = f"No {self.dimension.value} in this history."
        elif self.dimension is Dimension.KIND:
            said = f"The kinds add up to {covered:,} tokens, the whole estimate."
        else:
            said = f"{covered:,} of {found.total_tokens:,} tokens."
        return Text(f"{said}  kept: what the split keeps.  Enter: the group's turns  Esc: back", style="dim")

    def show_turns(self, group: Group) -> None:
        analysis = self.loaded.analysis
        self.opened = group
        self.query_one("#context-tabs", Static).update(Text.assemble(
            (visible(group.name, one_line=True), "bold"), f": {group.tokens:,} tokens in ",
            plural(len(group.turns), "turn")))
        table = self.query_one("#context-groups", DataTable)
        table.clear(columns=True)
        for title, width in (("turn", 8), ("role", 6), ("kind", 22), ("turn tokens", 12), ("split", 10)):
            table.add_column(title, width=width, key=title)
        for turn in group.turns:
            table.add_row(Text(f"{turn:,}", justify="right"), analysis.turns[turn].role, analysis.kinds[turn],
                          Text(f"{analysis.turn_tokens(turn):,}", justify="right"),
                          "summarised" if turn < self.split else "kept", key=str(turn))
        self.query_one("#context-foot", Static).update(
            Text("Enter: go to the turn in the table  Esc: back to the groups", style="dim"))
        table.focus()

    # -- keys ----------------------------------------------------------------------------------
    @on(DataTable.RowSelected, "#context-groups")
    def picked(self, event: DataTable.RowSelected) -> None:
        key = event.row_key.value
        if key is None or self.found is None:
            return
        if self.opened is not None:
            self.dismiss(int(key))
            return
        group = next((g for g in self.found.groups(self.dimension) if g.name == key), None)
        if group is not None:
            self.show_turns(group)

    def action_switch(self, step: int) -> None:
        self.dimension = DIMENSIONS[(DIMENSIONS.index(self.dimension) + step) % len(DIMENSIONS)]
        self.show_groups()

    def action_show(self, name: str) -> None:
        self.dimension = Dimension(name)
        self.show_groups()

    def action_back(self) -> None:
        if self.opened is not None:
            self.show_groups()
        else:
            self.dismiss(None)
