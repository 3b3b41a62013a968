"""The session view: header figures, the turn table with its split, the turn in full.

Loading runs in a thread worker (progress shown, Esc cancels); every figure
comes from the core's Analysis.  ``[`` / ``]`` step the split through the
candidates (``Analysis.step``), ``{`` / ``}`` through the agentic ones (before
a model turn, marked ◆), ``=`` returns to the reference's split.  ``S``
switches the compaction strategy, ``C`` compares both side by side.
"""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.widgets import Label, ProgressBar, Static
from textual.worker import Worker, WorkerState, get_current_worker

from inspector.catalog.listing import subagent_files
from inspector.format import visible
from inspector.tui.loading import Cancelled, Loaded, read_session
from inspector.tui.long_lived import keep_long_lived
from inspector.tui.messages import AgenticFound, LoadProgress, SessionLoaded, ShowTurn, TableColumns, TurnSelected
from inspector.tui.screens.context_view import open_context_view
from inspector.tui.screens.export import SessionExport
from inspector.tui.screens.session_actions import SessionActions
from inspector.tui.screens.session_live import SessionLive
from inspector.tui.screens.session_navigation import AGENTIC_GROUP, SessionNavigation, cli_agentic_split
from inspector.tui.screens.warnings import WarningsScreen
from inspector.tui.turn_set import TurnSet
from inspector.tui.widgets.context_header import ContextHeader
from inspector.tui.widgets.fitting_footer import FittingFooter
from inspector.tui.widgets.status_line import StatusLine
from inspector.tui.widgets.turn_detail import TurnDetail
from inspector.tui.widgets.turn_table import TurnTable, header_text

SESSION_ACTIONS = frozenset({
    "split", "agentic", "split_reference", "goto_split", "largest_turn", "compact", "compact_focus", "compare",
    "apply", "revert", "timeline", "show_preview", "detail", "strategy", "reload", "agentic_point", "split_here",
    "goto_turn", "search", "search_next", "filter", "order", "warnings", "figures", "provider", "export", "copy",
})
SPLIT_KEYS = Binding.Group("Split", compact=True)
AGENTIC_KEYS = Binding.Group("Agentic", compact=True)
LOAD_GROUP = "load"


class SessionScreen(SessionNavigation, SessionActions, SessionLive, SessionExport):
    """One session: where its tokens go and where the split falls."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("left_square_bracket", "split(-1)", "Previous split", id="split.previous", key_display="[",
                tooltip="move the split to the previous candidate turn", group=SPLIT_KEYS),
        Binding("right_square_bracket", "split(1)", "Next split", id="split.next", key_display="]",
                tooltip="move the split to the next candidate turn", group=SPLIT_KEYS),
        Binding("left_curly_bracket", "agentic(-1)", "Previous agentic split", id="split.agentic-previous",
                key_display="{", tooltip="move the split to the previous agentic candidate (a model turn, ◆)",
                group=AGENTIC_KEYS),
        Binding("right_curly_bracket", "agentic(1)", "Next agentic split", id="split.agentic-next",
                key_display="}", tooltip="move the split to the next agentic candidate (a model turn, ◆)",
                group=AGENTIC_KEYS),
        Binding("equals_sign", "split_reference", "Reference split", show=False, id="split.reference",
                key_display="=", tooltip="return to the split Gemini CLI would choose"),
        Binding("A", "agentic_point", "Agentic split (like --agentic)", show=False, id="split.agentic",
                key_display="A", tooltip="move the split where compact --agentic puts it: 70% of the weight, "
                "before a model turn"),
        Binding("h", "split_here", "Split here", show=False, id="split.here",
                tooltip="start the kept part at the turn under the cursor"),
        Binding("colon", "goto_turn", "Go to turn", show=False, id="table.goto-turn", key_display=":",
                tooltip="move the cursor to turn N"),
        Binding("slash", "search", "Search", show=False, id="table.search", key_display="/",
                tooltip="find the turns whose text holds some words"),
        Binding("n", "search_next(1)", "Next match", show=False, id="table.search-next",
                tooltip="the next turn the search found"),
        Binding("N", "search_next(-1)", "Previous match", show=False, id="table.search-previous",
                key_display="N", tooltip="the previous turn the search found"),
        Binding("F", "filter", "Filter", show=False, id="table.filter", key_display="F",
                tooltip="show only some turns: a kind, a tool, user or model, >1000 tokens"),
        Binding("o", "order", "Order", show=False, id="table.order",
                tooltip="turn order <-> largest turns first"),
        Binding("c", "compact", "Compact", id="compaction.run",
                tooltip="preview the compaction of the turns above the split"),
        Binding("f", "compact_focus", "Compact with focus", show=False, id="compaction.run-focus",
                tooltip="type what the summary should keep, pick the strategy and target, then compact"),
        Binding("S", "strategy", "Strategy", show=False, id="compaction.strategy", key_display="S",
                tooltip="switch the compaction strategy: reference <-> staged"),
        Binding("C", "compare", "Compare", show=False, id="compaction.compare", key_display="C",
                tooltip="run both strategies on the same history and split, side by side"),
        Binding("p", "show_preview", "Preview", show=False, id="compaction.preview",
                tooltip="open the last compaction preview again"),
        Binding("p", "unavailable('show_preview')", show=False),  # (each: says why, when the key is off)
        Binding("P", "provider", "Summariser", show=False, id="compaction.provider", key_display="P",
                tooltip="who writes the snapshot: offline -> Gemini -> auto (shown before anything is sent)"),
        Binding("a", "apply", "Apply", id="compaction.apply", tooltip="write the previewed compaction to the file"),
        Binding("a", "unavailable('apply')", show=False),
        Binding("u", "revert", "Undo", id="compaction.revert",
                tooltip="undo the newest applied compaction, byte for byte"),
        Binding("u", "unavailable('revert')", show=False),
        Binding("t", "timeline", "Timeline", show=False, id="compaction.timeline",
                tooltip="the compactions applied to this file"),
        Binding("i", "figures", "Figures", show=False, id="session.figures",
                tooltip="which figure decides whether Gemini CLI compresses, why, and every total on screen"),
        Binding("v", "context_view", "Where the context goes", show=False, id="session.context-view",
                tooltip="the estimate by kind, tool, file and model, as bars; Enter lists a group's turns"),
        Binding("w", "warnings", "Warnings", show=False, id="session.warnings",
                tooltip="what was skipped while reading the file (the header counts them)"),
        Binding("r", "reload", "Reload", show=False, id="session.reload", tooltip="read the file again"),
        Binding("b", "subagents", "Subagents", id="session.subagents",
                tooltip="the subagent sessions this session started: list them, open one"),
        Binding("b", "unavailable('subagents')", show=False),
        Binding("x", "export", "Export", show=False, id="session.export",
                tooltip="write the session (and the previewed compaction) as Markdown or HTML"),
        Binding("y", "copy", "Copy turn", show=False, id="session.copy",
                tooltip="copy the turn at the cursor to the clipboard, as Markdown"),
        Binding("d,enter", "detail", "Detail", id="session.detail", key_display="d",
                tooltip="the selected turn in full (in place of the table on a small terminal)"),
        Binding("escape", "close_detail", "Table", id="session.close-detail",
                tooltip="back to the table (on a small terminal the turn is shown in its place)"),
        Binding("escape", "back", "Back", show=False, id="session.back",
                tooltip="close the turn shown in full, back to the preview a line or fact led from, cancel "
                        "loading, or go to the session list"),
    ]

    DEFAULT_CLASSES = "-loading"
    # Side by side from 150 columns; below that the detail pane goes under the table,
    # or, when the terminal is short as well, takes the table's place on ``d`` / Enter.
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (150, "-wide")]  # noqa: RUF012 - typed as Textual declares it
    VERTICAL_BREAKPOINTS = [(0, "-short"), (36, "-tall")]  # noqa: RUF012 - typed as Textual declares it

    def __init__(self, path: Path, *, model: str | None = None, threshold: float | None = None,
                 start_turn: int | None = None) -> None:
        super().__init__()
        self.path = Path(path)
        self.start_turn = start_turn  # where the cursor starts (a search hit), else at the split
        self.model = model
        self.threshold = threshold
        self.loaded: Loaded | None = None
        self.split = 0
        self.split_chosen = False  # the user moved the split; until then it follows Gemini CLI's own
        self._appends = []  # appended lines waiting to extend what is shown (SessionLive.next_extension)
        self._retired = []  # versions no longer shown, let go in a worker (SessionLive.settle)
        self.failed: str | None = None
        self.earlier_model: str | None = None  # the model the file named before a compaction dropped it

    # -- layout -----------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        yield ContextHeader(Text(visible(str(self.path), one_line=True), style="bold"), id="context")
        with Horizontal(id="body"):
            with Vertical(id="turns"):
                yield Static(Text(header_text(), style="bold"), id="turns-header", markup=False)
                yield TurnTable(id="turn-table")
            yield TurnDetail(id="detail")
        with Vertical(id="loading"):
            yield Label(Text(f"Opening {visible(self.path.name, one_line=True)}…"), id="loading-label")
            yield ProgressBar(id="loading-bar", total=None, show_eta=False)
        yield StatusLine(id="status")
        # At 80 columns the keys give way in this order, so "? Help" stays in view (help and ^p list them all)
        yield FittingFooter(compact=True, give_way=("detail", "agentic", "quit", "split", "subagents"))

    @property
    def detail(self) -> TurnDetail:
        return self.query_one(TurnDetail)

    def on_mount(self) -> None:
        self.sub_title = visible(str(self.path), one_line=True)
        self.load_session()

    # -- loading ------------------------------------------------------------------------
    @work(thread=True, exclusive=True, exit_on_error=False, group=LOAD_GROUP, description="reading the session")
    def load_session(self, reason: str = "open") -> Loaded:
        worker = get_current_worker()

        def progress(phase: str, done: int, total: int) -> None:
            self.post_message(LoadProgress(phase, done, total))

        loaded = read_session(
            self.path, model=self.model, threshold=self.threshold,
            progress=progress, cancelled=lambda: worker.is_cancelled,
        )
        keep_long_lived()  # tui/long_lived.py
        self.post_message(SessionLoaded(loaded, reason))
        return loaded

    def on_load_progress(self, message: LoadProgress) -> None:
        if self.loaded is not None:
            self.status.set("load", f"{message.phase}…")
            return
        if self.failed is not None:
            return
        bar = self.query_one("#loading-bar", ProgressBar)
        label = self.query_one("#loading-label", Label)
        if message.total:
            bar.update(total=message.total, progress=message.done)
            label.update(Text(f"{message.phase.capitalize()} {visible(self.path.name, one_line=True)}: "
                              f"{message.done / 1e6:,.0f} / {message.total / 1e6:,.0f} MB"))
        else:
            bar.update(total=None)
            label.update(Text(f"{message.phase.capitalize()} {visible(self.path.name, one_line=True)}…"))

    def on_session_loaded(self, message: SessionLoaded) -> None:
        previous = self.loaded
        loaded = message.loaded
        self.loaded = loaded
        if previous is None or loaded.changed_from is None:
            self.refresh_bindings()  # the footer shows the split and compaction keys as enabled now
        analysis = loaded.analysis
        if analysis.model or previous is None:
            self.earlier_model = None
        else:
            self.earlier_model = previous.analysis.model or self.earlier_model
        split = self.split
        self.split = self.split_after_load(previous, loaded)
        if loaded.changed_from is None:
            self.check_undo()  # (an append does not change the journal: an apply rewrites the file)
        if previous is None:
            # never shown again (a reload reports in the status line); an indeterminate bar
            # redraws itself 15 times a second even while hidden, so it goes
            self.query_one("#loading-bar", ProgressBar).remove()
        self.remove_class("-loading")
        self.status.set("load", "")
        self.table.set_analysis(analysis, self.split, follow=message.reason == "live", agentic=loaded.agentic_set,
                                same_before=loaded.changed_from or 0)
        if self.turn_filter is not None or self.by_tokens:
            self.apply_view()  # the filter and order, on the turns as read now
        self.search_again(loaded)
        self.refresh_figures()
        if previous is None:
            self.show_strategy()
            self.show_provider()
            self.table.focus()
            start = self.start_turn if self.start_turn is not None else self.split
            self.table.move_to(min(max(start, 0), len(analysis.turns) - 1))
            self.call_after_refresh(self.table.scroll_to_cursor)  # the table has its size only after this refresh
        cursor = self.table.cursor
        if loaded.changed_from is None or cursor >= loaded.changed_from or (cursor < split) != (cursor < self.split):
            self.show_detail(cursor)  # (after an append, only when the turn shown changed: it keeps its scroll)
        if previous is None:
            self.tell_skipped(analysis.warnings)
            if loaded.session.transcript is not None:  # Antigravity's: read only, its compactions under t
                from inspector.tui.screens.checkpoints import STATUS

                self.status.set("antigravity", STATUS)
        self.after_load(previous, loaded, message.reason)
        self.agentic_point = None
        if loaded.changed_from is None and loaded.agentic is None:
            self.find_agentic(loaded)  # the candidates (◆) are not known yet
        # compact --agentic's split reads every turn's content (minutes on a 170,000-turn run): after a
        # full read it is looked for once masking and cost are shown (SessionLive.after_notes); after a
        # live append (the candidates came extended) when asked for (A), not per append.

    def split_after_load(self, previous: Loaded | None, loaded: Loaded) -> int:
        """Where the split is after a (re)load: Gemini CLI's own split point, unless the user
        moved it and that turn can still start the kept part."""
        analysis = loaded.analysis
        if previous is None or not self.split_chosen or self.split == analysis.compress_split_point:
            self.split_chosen = False
            return analysis.compress_split_point
        was_agentic = self.split in previous.agentic_set
        if self.split in TurnSet(analysis.candidates) or (was_agentic and self.split < len(analysis.turns)):
            return self.split
        self.notify(f"Turn {self.split:,} can no longer start the kept part; the split is back at "
                    f"Gemini CLI's own, turn {analysis.compress_split_point:,}.", severity="warning", timeout=6)
        self.split_chosen = False
        return analysis.compress_split_point

    @work(thread=True, exclusive=True, exit_on_error=False, group=AGENTIC_GROUP,
          description="finding agentic split candidates")
    def find_agentic(self, loaded: Loaded) -> None:
        if loaded.agentic is None:
            loaded.find_agentic()
            self.post_message(AgenticFound(loaded))  # the ◆ marks first; the --agentic split takes longer
        point = cli_agentic_split(loaded.analysis)  # builds every turn's content, kept with the turn
        keep_long_lived()
        self.post_message(AgenticFound(loaded, point))

    def on_agentic_found(self, message: AgenticFound) -> None:
        loaded = message.loaded
        if loaded is not self.loaded:
            return  # a newer load replaced it
        if message.point is not None:
            self.agentic_point = message.point
        if self.split not in loaded.analysis.candidates and self.split not in loaded.agentic_set:
            self.notify(f"Turn {self.split:,} can no longer start the kept part; the split is back at "
                        f"Gemini CLI's own, turn {loaded.analysis.compress_split_point:,}.", severity="warning")
            self.split = loaded.analysis.compress_split_point
            self.split_chosen = False
        self.table.set_analysis(loaded.analysis, self.split, agentic=loaded.agentic_set)
        self.refresh_figures()

    def reports_failure(self, worker: Worker[object]) -> bool:
        return worker.group == LOAD_GROUP and self.loaded is not None  # a read again: SessionLive.read_failed

    def worker_changed(self, worker: Worker[object], state: WorkerState) -> None:
        self.compaction_worker_changed(worker, state)
        if worker.group != LOAD_GROUP or state != WorkerState.ERROR:
            return
        if isinstance(worker.error, Cancelled):
            return
        if self.loaded is not None:
            self.read_failed(worker.error or RuntimeError("the read failed"))
            return
        self.failed = visible(str(worker.error))
        self.query_one("#loading-label", Label).update(
            Text.assemble(("Cannot open this file\n", "bold red"), self.failed, ("\n\nEsc: back", "dim"))
        )
        self.query_one("#loading-bar", ProgressBar).remove()  # (hidden, it would still redraw)
        self.refresh_bindings()  # the footer drops the keys that need a session

    # -- figures ----------------------------------------------------------------------------
    def refresh_figures(self) -> None:
        if self.loaded is None:
            return
        self.query_one(ContextHeader).show(self.loaded, self.split, len(self.shown_warnings(self.loaded)),
                                           self.earlier_model)

    def notes_shown(self, loaded: Loaded) -> None:
        """Masking and cost were worked out: the table's marks and cost column, the detail pane."""
        self.table.notes_changed()
        self.show_detail(self.table.cursor)
        self.refresh_figures()

    def show_detail(self, index: int) -> None:
        if self.loaded is not None:
            self.detail.show(self.loaded.analysis, index, self.split, self.search_text)

    def on_turn_selected(self, message: TurnSelected) -> None:
        self.show_detail(message.index)

    def on_show_turn(self, message: ShowTurn) -> None:
        """Go to a turn a snapshot line or a lost fact came from."""
        if self.loaded is not None and 0 <= message.index < len(self.loaded.analysis.turns):
            self.table.move_to(message.index)
            self.show_detail(message.index)
            self.table.focus()
            self.back_to_preview = self.preview is not None  # Esc returns to it, as from a link

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
            return False if self.failed is not None else None
        if action == "revert":
            return self.can_undo  # u is offered only while an apply can be undone
        return not (action in ("apply", "show_preview") and self.preview is None)

    def action_unavailable(self, action: str) -> None:
        """A key whose own binding is off just now (``check_action``: not shown in the footer) says why."""
        if self.loaded is None:
            self.notify("This file could not be opened; Esc goes back." if self.failed is not None
                        else "The session is still being read.", severity="warning", timeout=4)
        elif action == "apply":
            self.action_apply()  # it says there is no preview to apply
        elif action == "show_preview":
            self.action_show_preview()  # ... no preview to show
        elif action == "revert":
            self.action_revert()  # ... nothing to undo, or what is wrong with the journal
        elif action == "subagents":
            self.notify("No subagent sessions of this session are on disk (Gemini CLI keeps them in a folder "
                        "named after its id, beside it).", timeout=5)

    def set_split(self, split: int) -> None:
        """The user moves the split (it no longer follows Gemini CLI's own unless it is that one)."""
        if self.loaded is None:
            return
        self.split_chosen = split != self.loaded.analysis.compress_split_point
        if split == self.split:
            return
        self.split = split
        self.table.set_split(split)
        self.refresh_figures()
        self.split_changed()

    def split_changed(self) -> None:
        """Hook: the split moved."""

    def action_split(self, direction: int) -> None:
        if self.loaded is not None:
            self.set_split(self.loaded.analysis.step(self.split, direction))

    def action_agentic(self, direction: int) -> None:
        if self.loaded is None:
            return
        if self.loaded.agentic is None:
            self.notify("Still looking for agentic split candidates; try again in a moment.", timeout=3)
            return
        target = self.loaded.step_agentic(self.split, direction)
        if target == self.split:
            self.notify("No agentic split candidate that way." if self.loaded.agentic
                        else "This history has no agentic split candidate.", severity="warning", timeout=3)
            return
        self.set_split(target)

    def action_split_reference(self) -> None:
        if self.loaded is not None:
            self.set_split(self.loaded.analysis.compress_split_point)

    def action_goto_split(self) -> None:
        self.table.action_goto_split()

    def action_largest_turn(self) -> None:
        if self.loaded is not None and self.loaded.analysis.turns:
            quarters = self.loaded.analysis.quarters
            self.table.move_to(max(range(len(quarters)), key=quarters.__getitem__))

    def action_warnings(self) -> None:
        if self.loaded is None:
            return
        warnings = self.shown_warnings(self.loaded)
        if not warnings:
            self.notify("Nothing was skipped while reading this file.", timeout=3)
            return
        self.app.push_screen(WarningsScreen(self.path.name, warnings))

    def action_figures(self) -> None:
        from inspector.tui.screens.figures import FiguresScreen

        if self.loaded is not None:
            self.app.push_screen(FiguresScreen(self.loaded, self.split))

    def action_context_view(self) -> None:
        open_context_view(self)  # (tui/screens/context_view.py)

    def subagent_paths(self) -> list[Path]:
        return subagent_files(self.path, self.loaded.session.session_id if self.loaded is not None else None)

    def action_subagents(self) -> None:
        from inspector.tui.screens.subagents import SubagentsScreen, read_subagents

        entries = read_subagents(self.subagent_paths(), self.path.parent.parent.name)
        if entries:
            self.app.push_screen(SubagentsScreen(self.path.name, entries),
                                 lambda path: self.inspector.open_session(path) if path is not None else None)

    def cursor_turn(self) -> int | None:
        return self.table.cursor if self.loaded is not None and self.loaded.analysis.turns else None

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
        if self.clear_view():
            return
        if self.back_to_preview and self.preview is not None:
            self.action_show_preview()  # back to the line or fact that led here
            return
        if self.loaded is None and self.failed is None:
            self.workers.cancel_group(self, LOAD_GROUP)
        self.inspector.show_session_list(self)
