"""The subagent sessions a session started (``chats/<its id>/<id>.jsonl``): pick one to open it like any session."""

from __future__ import annotations

import time
from pathlib import Path
from typing import ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import DataTable, Static

from inspector.catalog.candidate import Candidate
from inspector.catalog.listing import SessionEntry, describe
from inspector.format import plural, visible
from inspector.tui.widgets.steady_footer import SteadyFooter

BOX_WIDTH = 96  # #subagents-box in app.tcss
SCROLLBAR = 2


def read_subagents(paths: list[Path], project: str) -> list[SessionEntry]:
    """Each subagent file read as the browser reads it, newest first."""
    entries = []
    for path in paths:
        try:
            info = path.stat()
        except OSError:
            continue
        entries.append(describe(Candidate(path, project, info.st_size, info.st_mtime_ns, path.parent.name)))
    return sorted(entries, key=lambda e: (-e.updated, e.path.name))


class SubagentsScreen(ModalScreen[Path | None]):
    """One row per subagent session; Enter opens it (the parent stays below, Esc returns to it)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q", "dismiss", "Close", id="subagents.close", tooltip="back to the session"),
    ]

    def __init__(self, parent_name: str, entries: list[SessionEntry]) -> None:
        super().__init__()
        self.parent_name = parent_name
        self.entries = entries

    def compose(self) -> ComposeResult:
        with Vertical(id="subagents-box"):
            yield Static(Text.assemble((plural(len(self.entries), "subagent session"), "bold"), " started by ",
                                       (visible(self.parent_name, one_line=True), "bold")), markup=False)
            yield DataTable(id="subagents", cursor_type="row", zebra_stripes=True)
            yield Static(Text("Enter: open   Esc: close", style="dim"), markup=False)
        yield SteadyFooter()  # its own keys, not the session's below, which do nothing here

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        fixed = (("session", 10), ("updated", 16), ("turns", 7))
        # the box is 96 columns at most, with a border and padding; each cell has 1 column of padding a side
        room = min(BOX_WIDTH, self.app.size.width) - 4 - sum(width + 2 for _, width in fixed) - 2 - SCROLLBAR
        title_width = max(12, min(50, room))
        for name, width in (*fixed, ("title", title_width)):
            table.add_column(name, width=width, key=name)
        for entry in self.entries:
            title = Text(visible(entry.error, one_line=True), style="red") if entry.error else \
                Text(visible(entry.title, one_line=True) or "(no prompt)")
            title.truncate(title_width, overflow="ellipsis")
            when = time.strftime("%Y-%m-%d %H:%M", time.localtime(entry.updated))
            table.add_row(Text(visible(entry.short_id, one_line=True)), Text(when),
                          Text("" if entry.error else f"{entry.turns:,}", justify="right"), title,
                          key=str(entry.path))
        table.focus()

    @on(DataTable.RowSelected, "#subagents")
    def picked(self, event: DataTable.RowSelected) -> None:
        if event.row_key.value is not None:
            self.dismiss(Path(event.row_key.value))
