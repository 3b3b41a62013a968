"""The session browser: the sessions ``/resume`` would list, newest first, subagents under their parent.

Finding the files takes a stat each; a thread worker then reads them one by
one (``inspector.catalog.listing.describe``) and the list is arranged as ``/resume``
arranges it (``catalog.arrange``).  Files already read are not read again
unless their size or time changed, so coming back from a session (the list
is rescanned on every return) costs a stat per file.  ``/`` filters the rows,
``s`` searches the text of every session.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.events import Resize
from textual.widgets import DataTable, Input, Static
from textual.worker import Worker, WorkerState, get_current_worker

from inspector.catalog.listing import (
    Candidate,
    Catalog,
    CatalogRow,
    SessionEntry,
    arrange,
    describe,
    find_files,
    human_size,
    relative_time,
    searched_where,
    short_project,
)
from inspector.catalog.projects import ProjectNames, folder_label, read_registry, resume_command
from inspector.catalog.trash import Deletion, TrashError, move_aside, put_back
from inspector.format import plural, visible
from inspector.tui.messages import SessionListed
from inspector.tui.screens.base import InspectorScreen
from inspector.tui.widgets.session_line import named_in_full
from inspector.tui.widgets.steady_footer import SteadyFooter
from inspector.tui.widgets.text_field import TextField
from inspector.user_cache import HomeUnknown

LIST_GROUP = "list"
PADDING = 2  # a DataTable cell's padding, both sides
MIN_TITLE = 30  # below this the least needed columns (project, size, updated) make room
TITLE_KEPT = 60  # what the title keeps when the session and project columns grow to show whole names


@dataclass(frozen=True)
class ListColumn:
    key: str
    label: str
    width: int
    drop_order: int  # columns with the highest number go first when the terminal is narrow; 0 never
    right: bool = False


COLUMNS = (
    ListColumn("session", "session", 10, 0),
    ListColumn("updated", "updated", 12, 3),
    ListColumn("turns", "turns", 7, 1, right=True),
    ListColumn("size", "size", 8, 4, right=True),
    ListColumn("project", "project", 12, 5),
    ListColumn("title", "title", MIN_TITLE, 0),
)


def layout(width: int, wanted: dict[str, int] | None = None) -> list[tuple[ListColumn, int]]:
    """The columns that fit ``width`` cells and their widths (``wanted``: what the rows need, for
    the session and project columns): the lowest-priority ones drop, then the wanted widths
    shrink back, until the title has room; the title takes what is left."""
    if wanted:
        grown = [ListColumn(c.key, c.label, max(c.width, wanted.get(c.key, 0)), c.drop_order, c.right)
                 for c in COLUMNS]
        fits = layout(width)
        full = layout(width + 1000, None)
        if [c.key for c, _ in fits] == [c.key for c, _ in full]:  # nothing dropped: room to grow
            extra = width - sum(w + PADDING for c, w in fits if c.key != "title") - PADDING - TITLE_KEPT
            result = []
            for column, size in fits:
                if column.key != "title":
                    want = next(g.width for g in grown if g.key == column.key)
                    grow = min(max(want - size, 0), max(extra, 0))
                    extra -= grow
                    size += grow
                result.append((column, size))
            title = width - sum(w + PADDING for c, w in result if c.key != "title") - PADDING
            return [(c, title if c.key == "title" else w) for c, w in result]
    shown = list(COLUMNS)

    def fixed() -> int:
        return sum(c.width + PADDING for c in shown if c.key != "title") + PADDING

    while width - fixed() < MIN_TITLE and any(c.drop_order for c in shown):
        shown.remove(max(shown, key=lambda c: c.drop_order))
    title = max(width - fixed(), 8)
    return [(c, title if c.key == "title" else c.width) for c in shown]


def _key(candidate: Candidate) -> tuple[Path, int, int]:
    return (candidate.path, candidate.size, candidate.mtime_ns)


class SessionListScreen(InspectorScreen):
    """Pick a session to open."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("slash", "filter", "Filter", id="sessions.filter", key_display="/",
                tooltip="type to keep only matching sessions (id, file, project or title)"),
        Binding("s", "search", "Search text", id="sessions.search",
                tooltip="search the prompts, replies and tool calls of every session"),
        Binding("escape", "clear_filter", "Clear filter", id="sessions.clear-filter",
                tooltip="show every session again"),
        Binding("r", "rescan", "Rescan", show=False, id="sessions.rescan", tooltip="look for sessions again"),
        Binding("c", "copy_resume", "Copy resume command", id="sessions.copy-resume",
                tooltip="copy the command that resumes the selected session in Gemini CLI"),
        Binding("D", "delete", "Delete", id="sessions.delete", key_display="D",
                tooltip="move the selected session aside (into chats/.session-inspector/deleted); u puts it back"),
        Binding("u", "undelete", "Undo delete", id="sessions.undelete",
                tooltip="put the session deleted last back where it was"),
    ]

    def __init__(self, folder: Path | None = None) -> None:
        super().__init__()
        self.folder = folder
        self.candidates: list[Candidate] = []
        self.read: dict[tuple[Path, int, int], SessionEntry] = {}  # files already read, by path, size and time
        self.catalog: Catalog | None = None
        self.query_text = ""
        self.columns: list[tuple[ListColumn, int]] = []
        self.registry = ProjectNames()  # ~/.gemini/projects.json, read at each scan
        self.project_paths: dict[Path, str | None] = {}  # project folder by temp folder, found once a scan
        self.deleted: list[Deletion] = []  # what D moved aside, the newest last (u puts it back)
        self.cursor_placed = False  # the cursor went to the newest session once the list was arranged

    def compose(self) -> ComposeResult:
        yield Static(self.title_text(), id="list-title", markup=False)
        yield TextField(placeholder="filter: session id, file, project or title…", id="filter")
        yield DataTable(id="sessions", cursor_type="row", zebra_stripes=True)
        yield Static("", id="list-row", markup=False)
        yield Static("", id="list-empty", markup=False)
        yield SteadyFooter()

    @property
    def table(self) -> DataTable[Text]:
        return self.query_one("#sessions", DataTable)

    @property
    def where(self) -> str:
        return searched_where(self.folder)

    def title_text(self) -> Text:
        text = Text.assemble(("Sessions in ", "bold"), visible(self.where, one_line=True))
        if self.catalog is not None:
            shown = sum(1 for row in self.catalog.rows if row.depth == 0)
            text.append(f"  {plural(shown, 'session')}", style="dim")
            skipped = self.catalog.skipped_words() or (
                f"{self.catalog.hidden:,} other files" if self.catalog.hidden else "")
            if skipped:
                text.append(f"; not listed: {skipped}", style="dim")
        return text

    def on_mount(self) -> None:
        self.query_one("#filter", Input).display = False

    def on_screen_resume(self) -> None:
        self.action_rescan()  # the first show, and every return from a session (it may have changed)

    def on_resize(self, event: Resize) -> None:
        self.fill()

    # -- scanning ---------------------------------------------------------------------------
    def find_sessions(self) -> list[Candidate]:
        try:
            return find_files(self.folder)
        except HomeUnknown as exc:  # no folder of Gemini CLI's to list (a container's user with no home)
            self.notify(str(exc), title="No sessions to list", severity="error", timeout=10)
            return []

    def action_rescan(self) -> None:
        self.registry = read_registry()
        self.project_paths.clear()
        # newest first from the start (by file time, until each file's recorded time is read)
        self.candidates = sorted(self.find_sessions(), key=lambda c: (-c.mtime_ns, c.path.name))
        current = {_key(c) for c in self.candidates}
        self.read = {key: entry for key, entry in self.read.items() if key in current}
        if all(_key(c) in self.read for c in self.candidates):
            self.show_catalog(arrange(self.read[_key(c)] for c in self.candidates))
        else:
            self.catalog = None
            self.fill()
        if not self.query_one("#filter", Input).display:
            self.table.focus()  # (the filter box keeps the focus while it is open)
        self.describe_all(list(self.candidates))

    @work(thread=True, exclusive=True, exit_on_error=False, group=LIST_GROUP, description="reading sessions")
    def describe_all(self, candidates: list[Candidate]) -> Catalog | None:
        worker = get_current_worker()
        entries: list[SessionEntry] = []
        for candidate in candidates:
            if worker.is_cancelled:
                return None
            entry = self.read.get(_key(candidate))
            if entry is None:
                entry = describe(candidate)
                self.post_message(SessionListed(entry))
            entries.append(entry)
        return arrange(entries)

    def on_session_listed(self, message: SessionListed) -> None:
        entry = message.entry
        self.read[_key(entry.candidate)] = entry
        key = str(entry.path)
        if self.catalog is not None or key not in self.table.rows:
            return
        for (column, _), cell in zip(self.columns, self.cells(CatalogRow(entry)), strict=True):
            self.table.update_cell(key, column.key, cell)

    def worker_changed(self, worker: Worker[object], state: WorkerState) -> None:
        if worker.group == LIST_GROUP and state == WorkerState.SUCCESS and isinstance(worker.result, Catalog):
            self.show_catalog(worker.result)

    def show_catalog(self, catalog: Catalog) -> None:
        self.catalog = catalog
        self.query_one("#list-title", Static).update(self.title_text())
        self.fill()

    # -- rows ---------------------------------------------------------------------------------
    def rows(self) -> list[CatalogRow]:
        if self.catalog is not None:
            return list(self.catalog.rows)
        return [CatalogRow(self.read.get(_key(c)) or SessionEntry(c)) for c in self.candidates]

    def cells(self, row: CatalogRow) -> list[Text]:
        entry = row.entry
        described = _key(entry.candidate) in self.read
        name = self.name_of(row)
        if entry.error:
            title = Text(visible(entry.error, one_line=True), style="red")
        elif not described:
            title = Text("…", style="dim")
        else:
            title = Text(visible(entry.title, one_line=True) or "(no prompt)")
            if row.subagents:
                title = Text.assemble(title, (f"  +{plural(row.subagents, 'subagent')}", "dim"))
        turns = f"{entry.turns:,}" if described and entry.error is None else ""
        when = relative_time(entry.updated, self.now()) if described else ""
        texts = {
            "session": Text(visible(name, one_line=True), style="dim" if row.depth else ""),
            "updated": Text(when),
            "turns": Text(turns, justify="right"),
            "size": Text(human_size(entry.candidate.size), justify="right"),
            "project": Text(visible(short_project(self.project_name(entry), self.width_of("project")),
                                    one_line=True)),
            "title": title,
        }
        shown = []
        for column, width in self.columns:
            cell = texts[column.key]
            cell.truncate(width, overflow="ellipsis")
            shown.append(cell)
        return shown

    def now(self) -> float:
        """The time the "updated" column counts back from (pinned in tests and screenshots)."""
        return time.time()

    def project_path(self, entry: SessionEntry) -> str | None:
        """The project's own folder, where Gemini CLI's records say it (``inspector.catalog.projects``)."""
        chats = entry.path.parent if entry.candidate.parent_folder is None else entry.path.parent.parent
        temp = chats.parent if chats.name == "chats" else chats
        if temp not in self.project_paths:
            self.project_paths[temp] = self.registry.path_of(temp)
        return self.project_paths[temp] or (entry.directories[0] if entry.directories else None)

    def project_name(self, entry: SessionEntry) -> str:
        """The project column: its folder's name, else the temp folder's (a hash cut short)."""
        return folder_label(self.project_path(entry), entry.directories, entry.candidate.project)

    @staticmethod
    def name_of(row: CatalogRow) -> str:
        """The session column: the short session id (a subagent's marked under its parent), else the file name."""
        entry = row.entry
        name = entry.short_id if entry.session_id else entry.path.name
        return ("└ " if row.depth else "") + name

    def width_of(self, key: str) -> int:
        return next((width for column, width in self.columns if column.key == key), 12)

    def matching(self) -> list[CatalogRow]:
        words = self.query_text.lower().split()
        if not words:
            return self.rows()
        found = []
        for row in self.rows():
            entry = row.entry
            haystack = (f"{entry.candidate.project} {self.project_name(entry)} {entry.path.name} "
                        f"{entry.session_id or ''} {entry.title}").lower()
            if all(w in haystack for w in words):
                found.append(row)
        return found

    def fill(self) -> None:
        if not self.is_mounted:
            return
        table = self.table
        cursor_key = self.selected_path()
        rows = self.matching()
        wanted = {"session": max((len(self.name_of(row)) for row in rows), default=0),
                  "project": min(max((len(self.project_name(row.entry)) for row in rows), default=0), 24)}
        self.columns = layout(max(self.size.width - 2, 40), wanted)  # 2: the vertical scrollbar
        table.clear(columns=True)
        for column, width in self.columns:
            table.add_column(column.label, width=width, key=column.key)
        for row in rows:
            table.add_row(*self.cells(row), key=str(row.entry.path))
        if self.catalog is not None and not self.cursor_placed:
            self.cursor_placed = True  # once arranged, the newest session is the one selected
            table.move_cursor(row=0)
        elif cursor_key is not None and cursor_key in table.rows:
            table.move_cursor(row=table.get_row_index(cursor_key))
        empty = self.query_one("#list-empty", Static)
        if not self.candidates:
            empty.update(Text("No session files here. Open one with: session-inspector PATH", style="dim"))
        elif not rows and self.query_text:
            empty.update(Text(f"No session matches {visible(self.query_text, one_line=True)!r}.", style="dim"))
        elif not rows and self.catalog is not None:
            empty.update(Text("No conversation here: the files hold no prompt or reply. "
                              "Open one anyway with: session-inspector PATH", style="dim"))
        else:
            empty.update("")
        empty.display = not rows
        table.display = bool(rows)  # the table would take the room the message needs
        self.show_selected()

    @on(DataTable.RowHighlighted, "#sessions")
    def show_selected(self) -> None:
        """The highlighted row's file name and title in full, below the table (its columns cut them:
        every ``/chat save`` checkpoint begins ``checkpoint-``)."""
        line = self.query_one("#list-row", Static)
        key = self.selected_path()
        entry = next((row.entry for row in self.rows() if str(row.entry.path) == key), None) if key else None
        line.display = entry is not None
        if entry is not None:
            named = named_in_full(entry.path.name, entry.session_id, entry.title, self.size.width - 2)
            command = resume_command(entry.session_id, self.project_path(entry)) if not entry.is_subagent else None
            if command is not None:
                resume = Text.assemble(("resume: ", "dim"), visible(command, one_line=True), ("  (c copies)", "dim"))
                resume.truncate(max(self.size.width - 2, 1), overflow="ellipsis")
                named = Text("\n").join([named, resume])
            line.update(named)

    def selected_entry(self) -> SessionEntry | None:
        key = self.selected_path()
        return next((row.entry for row in self.rows() if str(row.entry.path) == key), None) if key else None

    def selected_path(self) -> str | None:
        table = self.table
        if not 0 <= table.cursor_row < table.row_count:
            return None
        return str(table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value)

    # -- filter, search and open ------------------------------------------------------------
    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """"esc Clear filter" is offered while there is a filter to clear."""
        if action == "clear_filter":
            return self.query_one("#filter", Input).display or bool(self.query_text)
        if action == "undelete":
            return bool(self.deleted)  # offered while there is a deletion to undo
        return True

    def action_filter(self) -> None:
        box = self.query_one("#filter", Input)
        box.display = True
        box.focus()
        self.refresh_bindings()

    def action_clear_filter(self) -> None:
        box = self.query_one("#filter", Input)
        if box.display or self.query_text:
            box.value = ""
            box.display = False
            self.query_text = ""
            self.fill()
            self.table.focus()
        self.refresh_bindings()

    @on(Input.Changed, "#filter")
    def filter_changed(self, event: Input.Changed) -> None:
        self.query_text = event.value
        self.fill()

    @on(Input.Submitted, "#filter")
    def filter_done(self) -> None:
        self.table.focus()

    def action_copy_resume(self) -> None:
        entry = self.selected_entry()
        command = resume_command(entry.session_id, self.project_path(entry)) if entry is not None else None
        if entry is None or command is None or entry.is_subagent:
            self.notify("This row has no session id to resume (a checkpoint, a subagent or an unreadable file).",
                        severity="warning", timeout=4)
            return
        self.app.copy_to_clipboard(command)
        self.notify(visible(command, one_line=True), title="Copied: run it in a terminal", timeout=4)

    def action_delete(self) -> None:
        from inspector.tui.screens.dialogs import ConfirmScreen

        entry = self.selected_entry()
        if entry is None:
            return
        body = Text.assemble("Move ", (visible(entry.path.name, one_line=True), "bold"),
                             " aside, into ", visible(str(entry.path.parent / ".session-inspector" / "deleted"),
                                                       one_line=True),
                             "? Nothing is erased; u puts it back.")
        self.app.push_screen(ConfirmScreen("Delete this session?", body),
                             lambda yes: self.delete(entry) if yes else None)

    def delete(self, entry: SessionEntry) -> None:
        from inspector.catalog.listing import folder_name_for

        subagents = entry.path.parent / folder_name_for(entry.session_id) if entry.session_id else None
        try:
            done = move_aside(entry.path, subagents if subagents is not None and subagents.is_dir() else None)
        except TrashError as exc:
            self.notify(visible(str(exc), one_line=True), title="Not deleted", severity="error", timeout=8)
            return
        self.deleted.append(done)
        self.refresh_bindings()
        self.notify(f"{visible(entry.path.name, one_line=True)} moved aside; u puts it back.", timeout=5)
        self.action_rescan()

    def action_undelete(self) -> None:
        if not self.deleted:
            self.notify("No session was deleted here to put back.", timeout=3)
            return
        try:
            put_back(self.deleted[-1])
        except TrashError as exc:
            self.notify(visible(str(exc), one_line=True), title="Not put back", severity="error", timeout=8)
            return
        done = self.deleted.pop()
        self.refresh_bindings()
        self.notify(f"{visible(done.session.name, one_line=True)} is back.", timeout=4)
        self.action_rescan()

    def action_search(self) -> None:
        from inspector.tui.screens.search import SearchScreen

        self.app.push_screen(SearchScreen(self.folder))

    @on(DataTable.RowSelected, "#sessions")
    def open_row(self, event: DataTable.RowSelected) -> None:
        if event.row_key.value is not None:
            self.inspector.open_session(Path(event.row_key.value))
