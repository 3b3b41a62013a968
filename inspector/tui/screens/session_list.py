"""The session list: every Gemini CLI session under ~/.gemini/tmp/*/chats (or in a folder), newest first.

The files are found at once (a stat each); a thread worker then reads them one
by one for the message count and the first real prompt.  ``/`` filters.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import ClassVar

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.widgets import DataTable, Footer, Input, Static
from textual.worker import get_current_worker

from inspector.tui.loading import SessionInfo, chats_root, describe, human_size, list_sessions
from inspector.tui.messages import SessionListed
from inspector.tui.screens.base import InspectorScreen

COLUMNS = ("modified", "project", "size", "msgs", "format", "first prompt")


class SessionListScreen(InspectorScreen):
    """Pick a session to open."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("slash", "filter", "Filter", id="sessions.filter", key_display="/",
                tooltip="type to keep only matching sessions"),
        Binding("escape", "clear_filter", "Clear filter", show=False, id="sessions.clear-filter",
                tooltip="show every session again"),
        Binding("r", "rescan", "Rescan", show=False, id="sessions.rescan", tooltip="look for sessions again"),
    ]

    def __init__(self, folder: Path | None = None) -> None:
        super().__init__()
        self.folder = folder
        self.infos: list[SessionInfo] = []
        self.query_text = ""

    def compose(self) -> ComposeResult:
        where = str(self.folder) if self.folder is not None else f"{chats_root()}/*/chats"
        yield Static(Text.assemble(("Sessions in ", "bold"), where), id="list-title", markup=False)
        yield Input(placeholder="filter: project, file or prompt…", id="filter")
        yield DataTable(id="sessions", cursor_type="row", zebra_stripes=True)
        yield Static("", id="list-empty", markup=False)
        yield Footer()

    @property
    def table(self) -> DataTable[Text]:
        return self.query_one("#sessions", DataTable)

    def on_mount(self) -> None:
        self.query_one("#filter", Input).display = False
        for name in COLUMNS:
            self.table.add_column(name, key=name)
        self.action_rescan()

    def find_sessions(self) -> list[SessionInfo]:
        return list_sessions(self.folder)

    def action_rescan(self) -> None:
        self.infos = self.find_sessions()
        self.fill()
        self.table.focus()
        self.describe_all()

    @work(thread=True, exclusive=True, exit_on_error=False, group="list", description="reading sessions")
    def describe_all(self) -> None:
        worker = get_current_worker()
        for info in list(self.infos):
            if worker.is_cancelled:
                return
            self.post_message(SessionListed(describe(info)))

    # -- rows -------------------------------------------------------------------------
    def _cells(self, info: SessionInfo) -> list[Text]:
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(info.mtime))
        if info.error:
            prompt = Text(info.error, style="red")
        elif info.messages is None:
            prompt = Text("…", style="dim")
        else:
            prompt = Text(info.prompt[:100])
        messages = "" if info.messages is None else f"{info.messages:,}"
        return [Text(when), Text(info.project), Text(human_size(info.size), justify="right"),
                Text(messages, justify="right"), Text(info.format), prompt]

    def matching(self) -> list[SessionInfo]:
        words = self.query_text.lower().split()
        return [i for i in self.infos if all(w in i.search_text for w in words)]

    def fill(self) -> None:
        table = self.table
        table.clear()
        rows = self.matching()
        for info in rows:
            table.add_row(*self._cells(info), key=str(info.path))
        empty = self.query_one("#list-empty", Static)
        if not self.infos:
            empty.update(Text("No session files here. Open one with: session-inspector PATH", style="dim"))
        elif not rows:
            empty.update(Text(f"No session matches {self.query_text!r}.", style="dim"))
        else:
            empty.update("")
        empty.display = not rows
        table.display = bool(rows)  # the table would take the room the message needs

    def on_session_listed(self, message: SessionListed) -> None:
        key = str(message.info.path)
        if key not in self.table.rows:
            return
        for name, cell in zip(COLUMNS, self._cells(message.info), strict=True):
            self.table.update_cell(key, name, cell, update_width=True)

    # -- filter and open -------------------------------------------------------------------
    def action_filter(self) -> None:
        box = self.query_one("#filter", Input)
        box.display = True
        box.focus()

    def action_clear_filter(self) -> None:
        box = self.query_one("#filter", Input)
        if box.display or self.query_text:
            box.value = ""
            box.display = False
            self.query_text = ""
            self.fill()
            self.table.focus()

    @on(Input.Changed, "#filter")
    def filter_changed(self, event: Input.Changed) -> None:
        self.query_text = event.value
        self.fill()

    @on(Input.Submitted, "#filter")
    def filter_done(self) -> None:
        self.table.focus()

    @on(DataTable.RowSelected, "#sessions")
    def open_row(self, event: DataTable.RowSelected) -> None:
        if event.row_key.value is None:
            return
        opener = getattr(self.app, "open_session", None)
        if opener is not None:
            opener(Path(event.row_key.value))
