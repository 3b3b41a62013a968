"""What was skipped while reading the session: every warning the header counts, in full."""

from __future__ import annotations

from typing import ClassVar

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from inspector.format import plural, visible
from inspector.session.errors import LoadWarning
from inspector.tui.widgets.steady_footer import SteadyFooter


class WarningsScreen(ModalScreen[None]):
    """One row per warning: the line of the file and what was wrong there."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q,w", "dismiss", "Close", id="warnings.close", tooltip="close the warnings"),
    ]

    def __init__(self, name: str, warnings: list[LoadWarning]) -> None:
        super().__init__()
        self.file_name = name
        self.warnings = warnings

    def compose(self) -> ComposeResult:
        table = Table(expand=True, show_edge=False, header_style="bold")
        table.add_column("line", justify="right", no_wrap=True, style="dim")
        table.add_column("what was skipped, and why")
        for warning in self.warnings:
            line = "" if warning.line is None else f"{warning.line:,}"
            table.add_row(Text(line), Text(visible(warning.message)))
        with VerticalScroll(id="warnings-box"):
            yield Static(Text.assemble((plural(len(self.warnings), "warning"), "bold"), " while reading ",
                                       (visible(self.file_name, one_line=True), "bold"),
                                       ": Gemini CLI skips these too."), markup=False)
            yield Static(table, id="warnings-table", markup=False)
            yield Static(Text("Esc: close", style="dim"), markup=False)
        yield SteadyFooter()  # its own keys, not the session's below, which do nothing here
