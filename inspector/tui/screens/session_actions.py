"""What the session view does beyond showing: compaction, apply, revert, timeline.

A mixin of ``SessionScreen`` (kept apart so neither file grows past a screenful
of concerns).  Every step calls the core: ``compaction.compress``,
``store.apply_compaction`` / ``store.revert``; slow ones run in workers and
come back as messages.  Live updates are ``SessionLive`` (session_live.py).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from rich.text import Text
from textual import work
from textual.worker import Worker, WorkerState, get_current_worker

from inspector.context import Verdict
from inspector.format import before_after, turn_span
from inspector.quality.forgetting import forgetting
from inspector.tui.cost_lines import saving_text
from inspector.tui.loading import Loaded
from inspector.tui.messages import Applied, CompactionFinished, CompactionProgress, Reverted
from inspector.tui.preview import Preview
from inspector.tui.running import STRATEGIES, RunOptions, run_one, summariser_for, target_text
from inspector.tui.screens.base import InspectorScreen
from inspector.tui.screens.dialogs import ConfirmScreen, FocusScreen, ForgettingScreen, RunningScreen, forgetting_text
from inspector.tui.screens.snapshot import SnapshotScreen
from inspector.tui.screens.timeline import TimelineScreen
from inspector.tui.widgets.status_line import StatusLine

if TYPE_CHECKING:
    from inspector.compaction.compress import CompressionResult
    from inspector.compaction.summarisers import ProviderChoice
    from inspector.store import StoreError

COMPACT_GROUP = "compact"
STORE_GROUP = "store"


class SessionActions(InspectorScreen):
    """Compaction preview, apply / revert for the session view (SessionScreen)."""

    path: Path
    model: str | None
    split: int
    loaded: Loaded | None
    preview: Preview | None = None
    _running_dialog: RunningScreen | None = None
    _apply_dialog: ConfirmScreen | None = None  # "Apply?" while open: closed if its preview goes stale
    _last_focus: str = ""
    back_to_preview: bool = False  # the cursor came here from a preview's line or fact: Esc goes back to it
    _run_options: RunOptions = RunOptions()  # the strategy and target the next run uses (S, the f dialog)
    can_undo: bool = False  # an apply of this file can be undone (read from the journal at each load)

    @property
    def status(self) -> StatusLine:
        return self.query_one(StatusLine)

    def load_session(self, reason: str = "open") -> object:
        raise NotImplementedError  # SessionScreen's loading worker

    def refresh_figures(self) -> None:
        raise NotImplementedError  # SessionScreen redraws its header and table

    # -- compaction -----------------------------------------------------------------------
    def set_run_options(self, options: RunOptions) -> None:
        self._run_options = RunOptions(options.strategy, options.target)
        self.show_strategy()

    def show_strategy(self) -> None:
        options = self._run_options
        extra = f", {target_text(options.target)}" if options.strategy == "staged" else ""
        self.status.set("strategy", f"strategy {options.strategy}{extra} (S)")

    def action_strategy(self) -> None:
        """Toggle reference <-> staged (the target stays as chosen in the f dialog)."""
        current = self._run_options
        following = STRATEGIES[(STRATEGIES.index(current.strategy) + 1) % len(STRATEGIES)]
        self.set_run_options(RunOptions(following, current.target))
        self.notify(f"Compaction strategy: {following}", timeout=3)

    # -- who writes the snapshot ------------------------------------------------------------
    def provider_choice(self) -> ProviderChoice:
        """Which summariser the next run uses and why (the core's ``choose_provider``), before anything is sent."""
        from inspector.compaction.summarisers import choose_provider

        return choose_provider(self.inspector.provider_settings.provider)

    def provider_text(self) -> tuple[str, str]:
        """The status line's words for ``provider_choice`` (text, style)."""
        from inspector.compaction.summarisers import DEFAULT_MODEL

        choice = self.provider_choice()
        asked = "" if choice.requested == choice.provider else f"{choice.requested} -> "
        if choice.problem:
            missing = "no gemini on PATH" if choice.provider == "gemini-cli" else "no credentials found"
            return f"summariser {choice.requested}: {missing}, a run fails (P)", "red"
        if not choice.sends:
            return f"summariser {asked}offline: nothing leaves this machine (P)", ""
        model = (self.loaded.analysis.model if self.loaded is not None else None) or DEFAULT_MODEL
        return f"summariser {asked}{choice.label()} {model}: the turns are sent (P)", "yellow"

    def show_provider(self) -> None:
        text, style = self.provider_text()
        self.status.set("provider", text, style)

    def action_provider(self) -> None:
        """offline -> gemini -> gemini-cli -> auto -> offline; the notification says why that one runs."""
        order = ("offline", "gemini", "gemini-cli", "auto")
        app = self.inspector
        current = app.provider_settings.provider
        following = order[(order.index(current) + 1) % len(order)] if current in order else "offline"
        app.provider_settings = replace(app.provider_settings, provider=following)
        self.show_provider()
        choice = self.provider_choice()
        self.notify(choice.problem or choice.reason, title=f"Summariser: {following}",
                    severity="error" if choice.problem else "information", timeout=6)

    def action_compact(self) -> None:
        self.start_compaction(self._run_options)

    def action_compact_focus(self) -> None:
        if self.loaded is None:
            return

        def chosen(options: RunOptions | None) -> None:
            if options is not None:
                self._last_focus = options.focus
                self.set_run_options(options)
                self.start_compaction(options)

        offline = not self.provider_choice().sends
        self.app.push_screen(FocusScreen(self.split, self._last_focus, self._run_options, offline=offline),
                             callback=chosen)

    def start_compaction(self, options: RunOptions) -> None:
        if self.loaded is None:
            return
        what = f"{turn_span(0, self.split)} of {self.path.name}" if self.split else self.path.name
        said = self.loaded.analysis.verdict
        if said is not Verdict.COMPRESS:
            self.notify(f"{said.explained} c compacts it anyway, at the split shown.",
                        title=said.short.capitalize(), timeout=6)
        who = self.provider_text()[0].removesuffix(" (P)")
        label = f"Compacting {what} ({options.strategy} strategy; {who})"
        self._running_dialog = RunningScreen(label, cancel=self.cancel_compaction)
        self.app.push_screen(self._running_dialog)
        self._running_dialog.step("summarising" if options.strategy == "reference" else "running the stages")
        self.run_compaction(self.loaded, self.split, options)

    def cancel_compaction(self) -> None:
        self.workers.cancel_group(self, COMPACT_GROUP)
        self._running_dialog = None
        self.notify("Compaction cancelled.", severity="warning")

    @work(thread=True, exclusive=True, exit_on_error=False, group=COMPACT_GROUP, description="the compaction")
    def run_compaction(self, loaded: Loaded, split: int, options: RunOptions) -> CompressionResult:
        worker = get_current_worker()
        summariser = summariser_for(self.app, loaded,
                                    lambda text, progress: self.post_message(CompactionProgress(text, progress)))
        result = run_one(loaded, split, options, summariser, lambda: worker.is_cancelled)
        if not worker.is_cancelled:
            self.post_message(CompactionFinished(result, split, options.focus, loaded))
        return result

    def on_compaction_progress(self, message: CompactionProgress) -> None:
        if self._running_dialog is not None:
            if message.progress is not None:
                self._running_dialog.show(message.progress)
            else:
                self._running_dialog.step(message.text)

    def action_compare(self) -> None:
        from inspector.tui.screens.compare import CompareScreen

        if self.loaded is not None:
            self.app.push_screen(CompareScreen(self.loaded, self.split, self._run_options, self.open_preview))

    def open_preview(self, result: CompressionResult, split: int, source: Loaded, recall: float | None = None) -> None:
        """Make ``result`` (computed from ``source``) the preview - ``a`` applies it - and show it."""
        self.preview = self.make_preview(result, split, source, recall=recall)
        self.show_preview_status()
        self.action_show_preview()

    def make_preview(self, result: CompressionResult, split: int, source: Loaded, focus: str = "",
                     recall: float | None = None) -> Preview:
        """A preview of ``result``; stale at once when the file was read again since ``source``."""
        preview = Preview(result, self.path, split, focus, source=source, recall=recall)
        if self.loaded is not None and self.loaded.session.sha256 != source.session.sha256:
            preview.stale = "the file changed while it was computed"
        return preview

    def on_compaction_finished(self, message: CompactionFinished) -> None:
        self._close_running()
        assert self.loaded is not None
        self.preview = self.make_preview(message.result, message.split, message.source or self.loaded, message.focus)
        self.show_preview_status()
        if self.preview.status.startswith("COMPRESSION_FAILED"):
            self.notify(message.result.message or self.preview.status, title="Compaction failed", severity="warning")
        self.action_show_preview()

    def action_show_preview(self) -> None:
        self.back_to_preview = False
        if self.preview is None:
            self.notify("No preview yet: press c to run the compaction.", severity="warning")
            return
        self.app.push_screen(SnapshotScreen(self.preview, apply=self.action_apply))

    def show_preview_status(self) -> None:
        self.refresh_bindings()  # a is offered only while there is a preview
        if self.preview is None:
            self.status.set("preview", "")
            return
        stale = "  (stale)" if self.preview.stale else ""
        self.status.set("preview", f"preview {self.preview.status} ({self.preview.strategy}): "
                                   f"{self.preview.tokens_text()}{stale}  (p: open it)",
                        "red" if self.preview.stale else "")

    def _close_running(self) -> None:
        running, self._running_dialog = self._running_dialog, None
        if running is not None and running.is_attached and self.app.screen is running:
            running.dismiss(None)

    # -- apply and revert ------------------------------------------------------------------
    def action_apply(self) -> None:
        preview = self.preview
        if preview is None:
            self.notify("Nothing to apply: press c to preview a compaction first.", severity="warning")
            return
        refusal = preview.refusal()
        if refusal is not None:
            self.notify(refusal, title="Not applied", severity="warning")
            return
        facts = preview.result.facts
        forgets = forgetting(facts) if facts is not None else None
        body = Text.assemble(
            (self.path.name, "bold"), "\n",
            "estimate: ", (preview.tokens_text(), "bold"), "\n",
            forgetting_text(forgets),
            (f"{note}\n" if (note := preview.before_note()) else "", "dim"),
            preview.what_it_does(), "\n",
            saving_text(preview.source.analysis if preview.source else None, *preview.tokens),  # tui/cost_lines.py
            ("A backup is kept; u undoes it, byte for byte.", "dim"),
        )

        def answered(yes: bool | None) -> None:
            self._apply_dialog = None
            if yes and (refusal := preview.refusal()) is not None:  # it went stale while asked
                self.notify(refusal, title="Not applied", severity="warning")
            elif yes and forgets is not None and forgets.below:  # under the recall threshold: asked twice
                self._apply_dialog = ForgettingScreen(forgets)
                self.app.push_screen(self._apply_dialog, callback=answered_again)
            elif yes:
                self.apply_preview(preview)

        def answered_again(yes: bool | None) -> None:
            self._apply_dialog = None
            if yes and (refusal := preview.refusal()) is not None:
                self.notify(refusal, title="Not applied", severity="warning")
            elif yes:
                self.apply_preview(preview)

        self._apply_dialog = ConfirmScreen("Apply this compaction to the file?", body)
        self.app.push_screen(self._apply_dialog, callback=answered)

    @work(thread=True, exclusive=True, exit_on_error=False, group=STORE_GROUP, description="applying the compaction")
    def apply_preview(self, preview: Preview) -> None:
        from inspector.store import StoreError, apply_compaction, backups_dir

        source = preview.source
        assert source is not None
        try:
            entry = apply_compaction(source.session, source.analysis.turns, preview.result)
        except StoreError as exc:  # refused, nothing written: said as a refusal, not as a failure of the app
            self.app.call_from_thread(self.store_refused, exc, "Not applied")
            return
        self.post_message(Applied(self.path, backups_dir(self.path) / entry.backup, entry))

    def store_refused(self, error: StoreError, title: str) -> None:
        """The store would not apply or undo (the file changed since it was read, ...): say why; a
        preview the file no longer matches is stale."""
        if error.reason in ("stale", "changed", "conflict"):
            self.mark_stale("the file changed on disk since the preview was computed")
        self.notify(str(error), title=title, severity="warning", timeout=10)

    def on_applied(self, message: Applied) -> None:
        from inspector.tui.screens.compare import CompareScreen

        self.preview = None
        self.show_preview_status()
        while isinstance(self.app.screen, (SnapshotScreen, CompareScreen)):
            self.app.pop_screen()
        shown = before_after(message.detail.info.tokens_before, message.detail.info.tokens_after, unit=" tokens")
        figures = f"{shown}. " if shown else ""
        notes = "".join(f" Note: {note}." for note in message.detail.notes())
        self.notify(f"{figures}Backup: {message.backup}. Press u to undo.{notes}", title="Compaction applied",
                    severity="warning" if message.detail.lost_bytes else "information", timeout=10)
        self.load_session("reload")

    def check_undo(self) -> None:
        """Read the journal: can an apply be undone?  (u is offered only then.)"""
        from inspector.store import StoreError, undoable

        was = self.can_undo
        try:
            self.can_undo = bool(undoable(self.path))
        except StoreError:
            self.can_undo = True  # u then says what is wrong with the journal
        if self.can_undo != was:
            self.refresh_bindings()  # the footer is built again: not on every live append

    def action_revert(self) -> None:
        from inspector.store import StoreError, undoable

        try:
            pending = undoable(self.path)
        except StoreError as exc:
            self.notify(str(exc), severity="error")
            return
        if not pending:
            self.notify("Nothing to undo: no compaction applied to this file is still in place.", severity="warning")
            return
        entry = pending[0]
        info = entry.info
        tokens = before_after(info.tokens_before, info.tokens_after, unit=" tokens")
        body = Text.assemble(
            f"apply #{entry.seq:,} of {entry.applied_at}: ", (tokens, "bold"), "\n",
            "The file returns to its bytes from before it; turns recorded since are kept.",
        )

        def answered(yes: bool | None) -> None:
            if yes:
                self.revert_newest()

        self.app.push_screen(ConfirmScreen("Undo the newest compaction?", body), callback=answered)

    @work(thread=True, exclusive=True, exit_on_error=False, group=STORE_GROUP, description="reverting")
    def revert_newest(self) -> None:
        from inspector.store import StoreError, revert

        try:
            results = revert(self.path, steps=1)
        except StoreError as exc:
            self.app.call_from_thread(self.store_refused, exc, "Not undone")
            return
        self.post_message(Reverted(self.path, results[0]))

    def on_reverted(self, message: Reverted) -> None:
        result = message.detail
        note = f" {result.note}" if result.note else ""
        kept = f" {result.kept_bytes:,} bytes recorded since were kept." if result.kept_bytes else ""
        lost = f" Note: {result.lost_note}." if result.lost_note else ""
        self.notify(f"Apply #{result.entry.seq:,} undone; the file is {result.size:,} bytes again.{kept}{note}{lost}",
                    title="Reverted", severity="warning" if result.lost_note else "information", timeout=10)
        self.load_session("reload")

    def action_timeline(self) -> None:
        if self.loaded is not None and self.loaded.session.transcript is not None:  # Antigravity: its checkpoints
            from inspector.tui.screens.checkpoints import CheckpointsScreen

            self.app.push_screen(CheckpointsScreen(self.loaded.session.transcript))
            return
        self.app.push_screen(TimelineScreen(self.path))

    # -- the preview and the file ---------------------------------------------------------------
    def mark_stale(self, why: str) -> None:
        if self.preview is None or self.preview.stale:
            return
        self.preview.stale = why
        dialog, self._apply_dialog = self._apply_dialog, None
        if dialog is not None and self.app.screen is dialog:  # "Apply?" is open: it would apply what no longer fits
            dialog.dismiss(False)
            self.notify(f"Asked to apply, but {self.preview.refusal()}.", title="Not applied", severity="warning",
                        timeout=10)
        self.show_preview_status()
        for screen in self.app.screen_stack:
            if isinstance(screen, SnapshotScreen) and screen.preview is self.preview:
                screen.refresh_state()

    def compaction_worker_changed(self, worker: Worker[object], state: WorkerState) -> None:
        if worker.group == COMPACT_GROUP and state in (WorkerState.ERROR, WorkerState.CANCELLED):
            self._close_running()
