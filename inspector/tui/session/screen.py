"""The session view: header figures, the turn table with its split, the turn in full.

Loading runs in a thread worker (progress shown, Esc cancels); every figure
comes from the core's Analysis.  A big file's newest turns are shown first,
read from its end (``TailShown``, ``session.tail``), with ``reading…`` for every
figure that needs the whole history; a key that needs one says it is still
being read.  The whole table then replaces them, the cursor on the same turn.
``[`` / ``]`` step the split through the candidates (``Analysis.step``), ``{`` / ``}`` through the agentic ones (before
a model turn, marked ◆), ``=`` returns to the reference's split.  ``S``
switches the compaction strategy, ``C`` compares both side by side.

The screen owns what every part reads (the version shown, ``loaded``, and the
split) and the widgets that show them; its parts (``tui/session/``) own the
rest: it calls them, they post messages back.
"""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import Horizontal, Vertical
from textual.events import Key
from textual.widgets import Static
from textual.worker import Worker, WorkerState, get_current_worker

from inspector.catalog.listing import subagent_files
from inspector.format import visible
from inspector.session.tail import TailRead
from inspector.tui.loading import Cancelled, Loaded, now_and_then, read_session
from inspector.tui.long_lived import keep_long_lived
from inspector.tui.messages import (
    AgenticFound,
    LoadProgress,
    LoadRequested,
    NotesFinished,
    NotesShown,
    PreviewOutdated,
    SessionLoaded,
    ShowTurn,
    StoreDone,
    TableColumns,
    TableDrawn,
    TailShown,
    TurnSelected,
    ViewCleared,
    WarningsChanged,
)
from inspector.tui.preview import Preview
from inspector.tui.screens.context_view import ContextViewScreen
from inspector.tui.screens.warnings import WarningsScreen
from inspector.tui.session.compaction import CompactionController
from inspector.tui.session.export import Exporter
from inspector.tui.session.keys import SESSION_ACTIONS, SESSION_BINDINGS, TAIL_ACTIONS, pending_words
from inspector.tui.session.live import LiveFollower
from inspector.tui.session.live_words import skipped_notice
from inspector.tui.session.loading_pane import LoadingPane
from inspector.tui.session.navigation import Navigator
from inspector.tui.session.notes import NotesKeeper
from inspector.tui.session.split_keys import SplitKeys
from inspector.tui.session.splits import AgenticFinder, split_after_load, split_lost_words
from inspector.tui.widgets.context_header import ContextHeader
from inspector.tui.widgets.fitting_footer import FittingFooter
from inspector.tui.widgets.status_line import StatusLine
from inspector.tui.widgets.turn_detail import TurnDetail
from inspector.tui.widgets.turn_table import TurnTable, header_text

LOAD_GROUP = "load"


class SessionScreen(SplitKeys):
    """One session: where its tokens go and where the split falls."""

    BINDINGS: ClassVar[list[BindingType]] = SESSION_BINDINGS

    DEFAULT_CLASSES = "-loading"
    # Side by side from 150 columns; narrower, the detail pane goes under the table (short too: in its place on d)
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (150, "-wide")]  # noqa: RUF012 - typed as Textual declares it
    VERTICAL_BREAKPOINTS = [(0, "-short"), (36, "-tall")]  # noqa: RUF012 - typed as Textual declares it
    PROGRESS_EVERY = 0.25  # seconds between the read's progress reports on screen (each phase's first and last said)

    def __init__(self, path: Path, *, model: str | None = None, threshold: float | None = None,
                 start_turn: int | None = None) -> None:
        super().__init__()
        self.path = Path(path)
        self.start_turn = start_turn  # where the cursor starts (a search hit), else at the split
        self.model = model
        self.threshold = threshold
        self.loaded: Loaded | None = None
        self.tail: TailRead | None = None  # the file's newest turns, shown until the whole read is done
        self.tail_opened_on = -1  # the row of the tail the cursor was put on (moved since: the person chose)
        self.split = 0
        self.split_chosen = False  # the user moved the split; until then it follows Gemini CLI's own
        self.failed: str | None = None
        self.earlier_model: str | None = None  # the model the file named before a compaction dropped it
        self.table = TurnTable(id="turn-table")
        self.status = StatusLine(id="status")
        self.detail = TurnDetail(id="detail")
        # the parts (tui/session/): each owns its state and workers, and draws nothing
        self.follower = LiveFollower(self.path, self.status, model=model)
        self.notes = NotesKeeper()
        self.compaction = CompactionController(self.path, self.status)
        self.navigator = Navigator(self.table, self.status)
        self.exporter = Exporter(self.path)
        self.agentic = AgenticFinder()

    def compose(self) -> ComposeResult:
        yield ContextHeader(Text(visible(str(self.path), one_line=True), style="bold"), id="context")
        with Horizontal(id="body"):
            with Vertical(id="turns"):
                yield Static(Text(header_text(), style="bold"), id="turns-header", markup=False)
                yield self.table
            yield self.detail
        yield LoadingPane(self.path, id="loading")
        yield self.status
        # At 80 columns the keys give way in this order, so "? Help" stays in view (help and ^p list them all)
        yield FittingFooter(compact=True, give_way=("detail", "agentic", "quit", "split", "subagents"))
        yield from (self.follower, self.notes, self.compaction, self.navigator, self.exporter, self.agentic)

    def on_mount(self) -> None:
        self.sub_title = visible(str(self.path), one_line=True)
        self.load_session()

    @property
    def preview(self) -> Preview | None:
        """The last compaction preview (``a`` applies it)."""
        return self.compaction.preview

    @property
    def can_undo(self) -> bool:
        return self.compaction.can_undo

    @property
    def watch_ready(self) -> object:
        """Set once the file is watched (an ``asyncio.Event``)."""
        return self.follower.watch_ready

    # -- loading ------------------------------------------------------------------------
    @work(thread=True, exclusive=True, exit_on_error=False, group=LOAD_GROUP, description="reading the session")
    def load_session(self, reason: str = "open") -> None:
        worker = get_current_worker()

        @now_and_then(self.PROGRESS_EVERY)  # each report redraws the screen, on the thread the read shares
        def progress(phase: str, done: int, total: int) -> None:
            self.post_message(LoadProgress(phase, done, total))

        def show_tail(tail: TailRead) -> None:
            self.post_message(TailShown(tail))

        loaded = read_session(
            self.path, model=self.model, threshold=self.threshold,
            progress=progress, cancelled=lambda: worker.is_cancelled,
            show_tail=show_tail if reason == "open" else None,
        )
        keep_long_lived()  # tui/long_lived.py (this worker returns nothing: it would keep the version)
        self.post_message(SessionLoaded(loaded, reason))

    def on_load_requested(self, message: LoadRequested) -> None:
        self.load_session(message.reason)

    def on_tail_shown(self, message: TailShown) -> None:
        """The newest turns, read from the end of the file, while the rest is read."""
        if self.loaded is not None or self.failed is not None:
            return
        self.query_one(ContextHeader).show_tail(message.tail, self.model)
        if not message.tail.turns:  # a format read whole, or no whole line in the tail: the progress stays
            return
        if self.has_class("-loading"):  # the body is laid out first: the columns are fitted at its real width
            self.remove_class("-loading")
            self.call_after_refresh(self.on_tail_shown, message)
            return
        self.tail = message.tail
        self.query_one(LoadingPane).done()  # its bar, hidden behind the rows, would redraw all through the read
        self.table.show_tail(message.tail)
        self.tail_opened_on = self.table.cursor
        self.table.focus()
        self.call_after_refresh(self.table.scroll_to_cursor)
        self.show_detail(self.table.cursor)
        self.refresh_bindings()  # d shows a turn of the tail in full

    def on_load_progress(self, message: LoadProgress) -> None:
        if self.loaded is not None or self.tail is not None:
            done = f": {message.done / 1e6:,.0f} / {message.total / 1e6:,.0f} MB" if message.total else ""
            self.status.set("load", f"{message.phase} the whole file{done}…" if self.loaded is None
                            else f"{message.phase}…")
            return
        if self.failed is not None:
            return
        self.query_one(LoadingPane).show(message)

    def on_session_loaded(self, message: SessionLoaded) -> None:
        if self.loaded is None and self.has_class("-loading"):  # the body is laid out first, so that the table
            self.remove_class("-loading")  # fits its columns and scrolls to the split at its real size
            self.call_after_refresh(self.on_session_loaded, message)
            return
        previous = self.loaded
        loaded = message.loaded
        self.loaded = loaded
        tail, self.tail = self.tail, None
        tail_cursor = self.table.cursor  # (a turn of the tail, when one was shown)
        if previous is None or loaded.changed_from is None:
            self.refresh_bindings()  # the footer shows the split and compaction keys as enabled now
        analysis = loaded.analysis
        if analysis.model or previous is None:
            self.earlier_model = None
        else:
            self.earlier_model = previous.analysis.model or self.earlier_model
        split, chosen = self.split, self.split_chosen
        self.split, self.split_chosen = split_after_load(previous, loaded, split, chosen)
        if chosen and not self.split_chosen and split != self.split:
            self.notify(split_lost_words(split, loaded), severity="warning", timeout=6)
        self.compaction.loaded_shown(previous, loaded)  # a preview it no longer fits is stale
        if previous is None:
            self.query_one(LoadingPane).done()
        self.status.set("load", "")
        if loaded.changed_from is None:  # read whole: masking and cost are worked out next (NotesKeeper)
            self.table.notes_pending = True
        self.table.set_analysis(analysis, self.split, follow=message.reason == "live", agentic=loaded.agentic_set,
                                same_before=loaded.changed_from or 0)
        self.navigator.loaded_shown(loaded)  # the filter, the order and the search, on the turns as read now
        self.refresh_figures()
        if previous is None:
            self.compaction.show_strategy()
            self.compaction.show_provider()
            self.table.focus()
            start = self.start_turn if self.start_turn is not None else self.split
            if tail is not None and self.start_turn is None and tail_cursor != self.tail_opened_on:
                # the person moved among the newest turns: the whole table keeps the turn they are on (else
                # it opens at the split, as a file read at once does)
                found = tail.place_in(loaded.analysis.turns, tail_cursor)
                start = found if found is not None else len(loaded.analysis.turns) - 1
            self.table.move_to(min(max(start, 0), len(analysis.turns) - 1))
            self.call_after_refresh(self.table.scroll_to_cursor)  # the table has its size only after this refresh
        cursor = self.table.cursor
        if loaded.changed_from is None or cursor >= loaded.changed_from or (cursor < split) != (cursor < self.split):
            self.show_detail(cursor)  # (after an append, only when the turn shown changed: it keeps its scroll)
        if previous is None and (skipped := skipped_notice(self.path.name, analysis.warnings)) is not None:
            self.notify(skipped, title="Skipped while reading", severity="warning")
        self.follower.loaded_shown(previous, loaded, message.reason)
        self.notes.loaded_shown(loaded)
        self.agentic.loaded_shown(loaded)
        if previous is None and loaded.session.transcript is not None:  # Antigravity's: read only, its compactions
            from inspector.tui.screens.checkpoints import STATUS  # under t

            self.status.set("antigravity", STATUS)

    def on_agentic_found(self, message: AgenticFound) -> None:
        loaded = message.loaded
        if loaded is not self.loaded:
            return  # a newer load replaced it
        if self.split not in loaded.analysis.candidates and self.split not in loaded.agentic_set:
            self.notify(split_lost_words(self.split, loaded), severity="warning")
            self.split = loaded.analysis.compress_split_point
            self.split_chosen = False
        self.table.set_analysis(loaded.analysis, self.split, agentic=loaded.agentic_set)
        self.refresh_figures()

    def on_notes_finished(self, message: NotesFinished) -> None:
        self.agentic.notes_finished(message.loaded, self.loaded)

    def reports_failure(self, worker: Worker[object]) -> bool:
        return worker.group == LOAD_GROUP and self.loaded is not None  # a read again: the follower says it

    def worker_changed(self, worker: Worker[object], state: WorkerState) -> None:
        if worker.group != LOAD_GROUP or state != WorkerState.ERROR:
            return
        if isinstance(worker.error, Cancelled):
            return
        if self.loaded is not None:
            self.status.set("load", "")
            self.follower.read_failed(worker.error or RuntimeError("the read failed"))
            return
        self.failed = visible(str(worker.error))
        self.tail = None  # the newest turns shown, if any, go: the file cannot be read whole
        self.add_class("-loading")
        self.status.set("load", "")
        self.query_one(ContextHeader).show_path(Text(visible(str(self.path), one_line=True), style="bold"))
        self.query_one(LoadingPane).failed(self.failed)
        self.refresh_bindings()  # the footer drops the keys that need a session

    # -- what the parts tell -----------------------------------------------------------------
    def on_preview_outdated(self, message: PreviewOutdated) -> None:
        self.compaction.mark_stale(message.why)

    def on_store_done(self, message: StoreDone) -> None:
        self.follower.store_done(message.wrote)

    def on_warnings_changed(self, message: WarningsChanged) -> None:
        self.refresh_figures()

    def on_notes_shown(self, message: NotesShown) -> None:
        """Masking and cost were worked out: the table's marks and cost column, the detail pane."""
        self.table.notes_changed()
        self.show_detail(self.table.cursor)
        self.refresh_figures()

    def on_table_drawn(self, message: TableDrawn) -> None:
        self.follower.table_drawn()

    def on_view_cleared(self, message: ViewCleared) -> None:
        self.navigator.view_cleared()

    # -- figures ----------------------------------------------------------------------------
    def refresh_figures(self) -> None:
        if self.loaded is None:
            return
        self.query_one(ContextHeader).show(self.loaded, self.split, len(self.follower.shown_warnings(self.loaded)),
                                           self.earlier_model)

    def show_detail(self, index: int) -> None:
        if self.loaded is not None:
            self.detail.show(self.loaded.analysis, index, self.split, self.navigator.search_text,
                             notes_pending=self.table.notes_pending)
        elif self.tail is not None:
            self.detail.show_tail(self.tail, index)

    def on_turn_selected(self, message: TurnSelected) -> None:
        self.show_detail(message.index)

    def on_show_turn(self, message: ShowTurn) -> None:
        """Go to a turn a snapshot line or a lost fact came from."""
        if self.loaded is not None and 0 <= message.index < len(self.loaded.analysis.turns):
            self.table.move_to(message.index)
            self.show_detail(message.index)
            self.table.focus()
            self.compaction.back_to_preview = self.preview is not None  # Esc returns to it, as from a link

    def on_table_columns(self, message: TableColumns) -> None:
        self.query_one("#turns-header", Static).update(Text(message.header, style="bold"))

    @property
    def detail_swapped(self) -> bool:
        """The terminal is too small for both: the detail pane is shown instead of the table."""
        return self.has_class("-narrow") and self.has_class("-short")

    def action_detail(self) -> None:
        """Show the selected turn in full: in place of the table when the terminal is small,
        else move the focus between the table and the detail pane."""
        if self.detail_swapped:
            self.toggle_class("-detail")
            (self.detail if self.has_class("-detail") else self.table).focus()
            self.refresh_bindings()  # the footer offers "esc Table" while the turn is shown in its place
        elif self.detail.has_focus:
            self.table.focus()
        else:
            self.detail.focus()

    # -- actions -------------------------------------------------------------------------------
    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Keys that need a session are dimmed while it loads and hidden when it failed to load;
        apply is offered only once there is a preview to apply."""
        if action == "subagents":
            return bool(self.subagent_paths())  # offered only when there are some
        if action == "close_detail":  # only while the turn is shown in the table's place (Esc is "back" else)
            return self.detail_swapped and self.has_class("-detail")
        if action in SESSION_ACTIONS and self.loaded is None:
            if self.tail is not None and action in TAIL_ACTIONS:
                return True
            return False if self.failed is not None else None
        if action == "revert":
            return self.can_undo  # u is offered only while an apply can be undone
        if action == "apply":  # offered only for a preview that still fits the file (pressed, a says why not)
            return self.preview is not None and not self.preview.stale
        return not (action == "show_preview" and self.preview is None)

    def on_key(self, event: Key) -> None:
        """A key that needs the session while it is read (its binding dimmed until then) says which
        figure it waits for, rather than nothing."""
        if self.loaded is not None or self.failed is not None:
            return
        active = self.active_bindings.get(event.key)
        action = active.binding.action.partition("(")[0] if active is not None and not active.enabled else ""
        if action in SESSION_ACTIONS:
            self.notify(pending_words(action), severity="warning", timeout=4)

    def action_unavailable(self, action: str) -> None:
        """A key whose own binding is off just now (``check_action``: not shown in the footer) says why."""
        if self.loaded is None:
            self.notify("This file could not be opened; Esc goes back." if self.failed is not None
                        else "The session is still being read.", severity="warning", timeout=4)
        elif action == "apply":
            self.compaction.apply()  # it says there is no preview to apply
        elif action == "show_preview":
            self.compaction.show_preview()  # ... no preview to show
        elif action == "revert":
            self.compaction.revert()  # ... nothing to undo, or what is wrong with the journal
        elif action == "subagents":
            self.notify("No subagent sessions of this session are on disk (Gemini CLI keeps them in a folder "
                        "named after its id, beside it).", timeout=5)

    def action_warnings(self) -> None:
        if self.loaded is None:
            return
        warnings = self.follower.shown_warnings(self.loaded)
        if not warnings:
            self.notify("Nothing was skipped while reading this file.", timeout=3)
            return
        self.app.push_screen(WarningsScreen(self.path.name, warnings))

    def action_context_view(self) -> None:
        if self.loaded is not None:  # v: where the context goes; Enter on a turn moves the table there
            self.app.push_screen(ContextViewScreen(self.loaded, self.split),
                                 lambda turn: self.table.move_to(turn) if turn is not None else None)

    def action_figures(self) -> None:
        from inspector.tui.screens.figures import FiguresScreen

        if self.loaded is not None:
            self.app.push_screen(FiguresScreen(self.loaded, self.split))

    def subagent_paths(self) -> list[Path]:
        return subagent_files(self.path, self.loaded.session.session_id if self.loaded is not None else None)

    def action_subagents(self) -> None:
        from inspector.tui.screens.subagents import SubagentsScreen, read_subagents

        entries = read_subagents(self.subagent_paths(), self.path.parent.parent.name)
        if entries:
            self.app.push_screen(SubagentsScreen(self.path.name, entries),
                                 lambda path: self.inspector.open_session(path) if path is not None else None)

    def action_reload(self) -> None:
        self.load_session("reload")

    def action_close_detail(self) -> None:
        self.remove_class("-detail")
        self.table.focus()
        self.refresh_bindings()

    def action_back(self) -> None:
        if self.has_class("-detail"):
            self.action_close_detail()
            return
        if self.navigator.clear_view():
            return
        if self.compaction.back_to_preview and self.preview is not None:
            self.compaction.show_preview()  # back to the line or fact that led here
            return
        if self.loaded is None and self.failed is None:
            self.workers.cancel_group(self, LOAD_GROUP)
        self.inspector.show_session_list(self)

    # -- keys a part answers -----------------------------------------------------------------
    def action_compact(self) -> None:
        self.compaction.compact(self.split)

    def action_compact_focus(self) -> None:
        self.compaction.compact_focus(self.split)

    def action_compare(self) -> None:
        self.compaction.compare(self.split)

    def action_strategy(self) -> None:
        self.compaction.strategy()

    def action_provider(self) -> None:
        self.compaction.provider()

    def action_show_preview(self) -> None:
        self.compaction.show_preview()

    def action_apply(self) -> None:
        self.compaction.apply()

    def action_revert(self) -> None:
        self.compaction.revert()

    def action_timeline(self) -> None:
        self.compaction.timeline()

    def action_search(self) -> None:
        self.navigator.search()

    def action_search_next(self, direction: int) -> None:
        self.navigator.search_next(direction)

    def action_filter(self) -> None:
        self.navigator.filter()

    def action_order(self) -> None:
        self.navigator.order()

    def action_goto_turn(self) -> None:
        self.navigator.goto_turn()

    def action_largest_turn(self) -> None:
        self.navigator.largest_turn()

    def action_export(self) -> None:
        self.exporter.export(lambda: (self.loaded, self.preview))

    def action_copy(self) -> None:
        turns = self.loaded is not None and self.loaded.analysis.turns
        self.exporter.copy(self.loaded, self.table.cursor if turns else None)
