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

INTRO = (
    "session-inspector shows where a Gemini CLI session's context goes and where its "
    "compaction would split it. Rows above the divider would be summarised; rows below are kept. "
    "• marks a user prompt the split may move to ([ ]), ◆ a model turn it may move to (agentic split: { }). "
    "S switches the strategy (reference / staged), C compares both."
)


class HelpScreen(ModalScreen[None]):
    """A table of keys: key, what it does, the binding id a keymap can use."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q,question_mark,f1", "dismiss", "Close", id="help.close", tooltip="close the help"),
    ]

    def __init__(self, rows: list[tuple[str, str, str, str, str]]) -> None:
        super().__init__()
        self.rows = rows  # (where, keys, description, tooltip, id)

    def compose(self) -> ComposeResult:
        table = Table(expand=True, show_edge=False, header_style="bold")
        table.add_column("where", style="dim", no_wrap=True)
        table.add_column("key", style="bold cyan", no_wrap=True)
        table.add_column("does")
        table.add_column("binding id", style="dim", no_wrap=True)
        for where, keys, description, tooltip, ident in self.rows:
            does = Text(description)
            if tooltip and tooltip.lower() != description.lower():
                does.append(f" - {tooltip}", style="dim")
            table.add_row(Text(where), Text(keys), does, Text(ident))
        with VerticalScroll(id="help-box"):
            yield Static(Text("Keys", style="bold"), markup=False)
            yield Static(Text(INTRO, style="dim"), markup=False)
            yield Static(table, id="help-table", markup=False)
            yield Static(Text("Ctrl+P opens the command palette: every action by name. Esc closes.", style="dim"),
                         markup=False)
