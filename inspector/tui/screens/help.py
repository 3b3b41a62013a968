"""Help: every key of the screen below, as bound right now (a keymap's changes included)."""

from __future__ import annotations

from typing import ClassVar

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from inspector.tui.widgets.steady_footer import SteadyFooter

SESSION_INTRO = (
    "session-inspector shows where a Gemini CLI session's context goes and where its "
    "compaction would split it. i says which figure decides and what each total on screen is. "
    "Rows above the divider would be summarised; rows below are kept. "
    "• marks a user prompt the split may move to ([ ]), ◆ a model turn it may move to (agentic split: { }; "
    "A puts it where compact --agentic would, h at the cursor). "
    "Getting around: : goes to turn N, / searches the turns' text (n / N: next and previous match), "
    "F filters the table, o orders it largest first, Esc shows every turn again. "
    "S switches the strategy (reference / staged), C compares both."
)
LIST_INTRO = (
    "The sessions /resume would list, newest first, each subagent under the session that started it. "
    "The line below the table names the highlighted one in full. Enter opens it; / filters the list by "
    "id, file, project or title; s searches the text of every session."
)
SEARCH_INTRO = "Type to search the prompts, replies and tool calls of every session; Enter opens a hit at its turn."
OTHER_INTRO = "The keys of this screen, as bound now."


class HelpScreen(ModalScreen[None]):
    """A table of keys: key, what it does, the binding id a keymap can use."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q,question_mark,f1", "dismiss", "Close", id="help.close", tooltip="close the help"),
    ]

    # Below 110 columns the help fills the screen in two columns: "where" becomes a heading over the
    # keys of each part of the screen, and the binding id follows what the key does.
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (110, "-wide")]  # noqa: RUF012 - typed as Textual declares it

    def __init__(self, rows: list[tuple[str, str, str, str, str]], intro: str = OTHER_INTRO) -> None:
        super().__init__()
        self.rows = rows  # (where, keys, description, tooltip, id)
        self.intro = intro  # what the screen below is for

    def key_table(self, narrow: bool) -> Table:
        table = Table(expand=True, show_edge=False, header_style="bold")
        if not narrow:
            table.add_column("where", style="dim", no_wrap=True)
        table.add_column("key", style="bold cyan", no_wrap=True)
        table.add_column("does")
        if not narrow:
            table.add_column("binding id", style="dim", no_wrap=True)
        heading = None
        for where, keys, description, tooltip, ident in self.rows:
            does = Text(description)
            if tooltip and tooltip.lower() != description.lower():
                does.append(f": {tooltip}", style="dim")
            if not narrow:
                table.add_row(Text(where), Text(keys), does, Text(ident))
                continue
            if where != heading:  # the same key may do something else in another part of the screen
                table.add_row(Text(""), Text(f"in the {where}", style="bold dim"))
                heading = where
            if ident:
                does.append(f"  ({ident})", style="dim")
            table.add_row(Text(keys), does)
        return table

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="help-box"):
            yield Static(Text("Keys", style="bold"), markup=False)
            yield Static(Text(self.intro, style="dim"), markup=False)
            yield Static(self.key_table(self.app.size.width < 110), id="help-table", markup=False)
            yield Static(Text("Ctrl+P opens the command palette: every action by name. Esc closes.", style="dim"),
                         markup=False)
        yield SteadyFooter()  # its own keys, not those of the screen below, which do nothing here

    def on_resize(self) -> None:
        self.query_one("#help-table", Static).update(self.key_table(self.app.size.width < 110))
