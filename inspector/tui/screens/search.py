"""Search the text of every session: type words, Enter; each hit names its session and turn; Enter opens it there.

A thread worker brings the on-disk index up to date first (``inspector.search.index``:
only new or changed files are read), showing how far it is; a search typed
meanwhile runs as soon as the index is ready.  Searching runs in a worker too.
"""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.events import Resize
from textual.widgets import DataTable, Input, Static
from textual.worker import Worker, WorkerState, get_current_worker

from inspector.catalog.candidate import Candidate
from inspector.catalog.listing import find_files, searched_where
from inspector.format import plural, visible
from inspector.search.index import Hit, IndexReport, SearchError, opened_index, query_words, unreadable_words
from inspector.tui.screens.base import InspectorScreen
from inspector.tui.widgets.session_line import named_in_full
from inspector.tui.widgets.steady_footer import SteadyFooter
from inspector.tui.widgets.text_field import TextField
from inspector.user_cache import HomeUnknown

INDEX_GROUP = "search-index"
QUERY_GROUP = "search-query"
FIXED = (("session", 10), ("turn", 7), ("role", 5))


class SearchScreen(InspectorScreen):
    """Find the turns, in every session, that hold some words."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "back", "Back", id="search.back", tooltip="back to the session list"),
        Binding("slash", "edit", "New search", id="search.edit", key_display="/",
                tooltip="type other words to search for"),
    ]

    def __init__(self, folder: Path | None = None, index_path: Path | None = None) -> None:
        super().__init__()
        self.folder = folder
        self.index_path = index_path
        self.candidates: list[Candidate] = []
        self.report: IndexReport | None = None  # set once the index is up to date
        self.pending = ""  # a search typed while the index was being brought up to date
        self.hits: list[Hit] = []
        self.query_text = ""

    def compose(self) -> ComposeResult:
        where = searched_where(self.folder)
        yield Static(Text.assemble(("Search the sessions in ", "bold"), visible(where, one_line=True)),
                     id="search-title", markup=False)
        yield TextField(placeholder="words to find in prompts, replies and tool calls; Enter searches", id="query")
        yield Static("", id="search-status", markup=False)
        yield DataTable(id="hits", cursor_type="row", zebra_stripes=True)
        yield Static("", id="hit-row", markup=False)
        yield SteadyFooter()

    @property
    def table(self) -> DataTable[Text]:
        return self.query_one("#hits", DataTable)

    @property
    def status(self) -> Static:
        return self.query_one("#search-status", Static)

    def on_mount(self) -> None:
        self.table.display = False
        self.query_one("#query", Input).focus()
        try:
            self.candidates = find_files(self.folder)
        except HomeUnknown as exc:  # no folder of Gemini CLI's to search (a container's user with no home)
            self.status.update(Text(str(exc), style="red"))
            return
        self.status.update(Text(f"Indexing {plural(len(self.candidates), 'session file')}…", style="dim"))
        self.build_index(self.candidates)

    def on_resize(self, event: Resize) -> None:
        if self.hits:
            self.show_hits(self.hits)

    # -- the index ------------------------------------------------------------------------------
    @work(thread=True, exclusive=True, exit_on_error=False, group=INDEX_GROUP, description="indexing sessions")
    def build_index(self, candidates: list[Candidate]) -> IndexReport:
        worker = get_current_worker()

        def progress(done: int, total: int) -> None:
            if done % 25 == 0 or done == total:
                self.app.call_from_thread(self.show_progress, done, total)

        with opened_index(self.index_path) as index:
            return index.update(candidates, progress, cancelled=lambda: worker.is_cancelled)

    def show_progress(self, done: int, total: int) -> None:
        if self.report is None:
            self.status.update(Text(f"Indexing: {done:,} of {plural(total, 'session file')} read…", style="dim"))

    @work(thread=True, exclusive=True, exit_on_error=False, group=QUERY_GROUP, description="searching sessions")
    def run_query(self, text: str) -> list[Hit]:
        with opened_index(self.index_path) as index:
            return index.search(text, self.candidates)

    def worker_changed(self, worker: Worker[object], state: WorkerState) -> None:
        if state != WorkerState.SUCCESS:
            return
        if worker.group == INDEX_GROUP and isinstance(worker.result, IndexReport):
            self.report = worker.result
            unsearched = unreadable_words(self.report)
            failed = f"; {visible(unsearched, one_line=True)}" if unsearched else ""
            self.status.update(Text(f"{plural(self.report.files, 'session file')} indexed{failed}. "
                                    "Type words and press Enter.", style="dim"))
            if self.pending:
                self.search(self.pending)
        elif worker.group == QUERY_GROUP and isinstance(worker.result, list):
            self.show_hits(worker.result)

    # -- searching -----------------------------------------------------------------------------
    @on(Input.Submitted, "#query")
    def submitted(self, event: Input.Submitted) -> None:
        self.search(event.value)

    def search(self, text: str) -> None:
        try:
            query_words(text)
        except SearchError as exc:
            self.status.update(Text(str(exc), style="red"))
            return
        self.query_text = text
        if self.report is None:
            self.pending = text
            self.status.update(Text("The index is being brought up to date; the search runs when it is ready.",
                                    style="dim"))
            return
        self.pending = ""
        self.status.update(Text(f"Searching for {visible(text, one_line=True)!r}…", style="dim"))
        self.run_query(text)

    def show_hits(self, hits: list[Hit]) -> None:
        self.hits = hits
        table = self.table
        table.clear(columns=True)
        snippet_width = max(self.size.width - 2 - sum(w + 2 for _, w in FIXED) - 2, 20)
        for name, width in (*FIXED, ("found", snippet_width)):
            table.add_column(name, width=width, key=name)
        for position, hit in enumerate(hits):
            name = hit.session_id[:8] if hit.session_id else hit.path.stem
            found = Text(visible(hit.snippet, one_line=True))
            found.truncate(snippet_width, overflow="ellipsis")
            table.add_row(Text(visible(name, one_line=True)), Text(f"{hit.turn:,}", justify="right"),
                          Text(hit.role), found, key=str(position))
        sessions = len({hit.path for hit in hits})
        query = visible(self.query_text, one_line=True)
        self.status.update(Text(f"{plural(len(hits), 'turn')} in {plural(sessions, 'session')} hold {query!r}. "
                                "Enter opens the session at that turn." if hits else
                                f"No turn holds {query!r}.", style="dim"))
        table.display = bool(hits)
        if hits:
            table.move_cursor(row=0)
            table.focus()
        self.show_selected()

    @on(DataTable.RowHighlighted, "#hits")
    def show_selected(self) -> None:
        """The highlighted hit's session named in full below the table (its column cuts names alike)."""
        line = self.query_one("#hit-row", Static)
        hit = self.selected()
        line.display = hit is not None
        if hit is not None:
            line.update(named_in_full(hit.path.name, hit.session_id, hit.title, self.size.width - 2))

    def selected(self) -> Hit | None:
        table = self.table
        if not table.display or not 0 <= table.cursor_row < len(self.hits):
            return None
        return self.hits[table.cursor_row]

    @on(DataTable.RowSelected, "#hits")
    def open_hit(self, event: DataTable.RowSelected) -> None:
        hit = self.selected()
        if hit is not None:
            self.inspector.open_session(hit.path, hit.turn)

    def action_edit(self) -> None:
        self.query_one("#query", Input).focus()

    def action_back(self) -> None:
        self.workers.cancel_group(self, INDEX_GROUP)
        self.dismiss()
