"""What the session view does beyond showing: compaction, apply, revert, timeline.

``CompactionController`` is a part of ``SessionScreen``: it owns the preview,
the strategy and the summariser chosen, the dialogs it opens and whether an
apply can be undone.  Every step calls the core: ``compaction.compress``,
``store.apply_compaction`` / ``store.revert``; slow ones run in its workers
and come back to it as messages.  The screen tells it each version it shows
(``loaded_shown``) and the split to compact at; it asks the screen to read the
file again after an apply or an undo (``LoadRequested``).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from rich.text import Text
from textual import work
from textual.worker import Worker, WorkerState, get_current_worker

from inspector.context import Verdict
from inspector.format import before_after, plural, turn_span
from inspector.quality.forgetting import forgetting
from inspector.store.files import never_applied
from inspector.tui.cost_lines import saving_text
from inspector.tui.loading import Loaded
from inspector.tui.messages import (
    Applied,
    CompactionFinished,
    CompactionProgress,
    LoadRequested,
    Reverted,
    StoreDone,
)
from inspector.tui.preview import Preview
from inspector.tui.running import STRATEGIES, request_for_run, run_one, summariser_for, target_text
from inspector.tui.screens.base import inspector_of
from inspector.tui.screens.dialogs import ConfirmScreen, FocusScreen, ForgettingScreen, RunningScreen, forgetting_text
from inspector.tui.screens.snapshot import SnapshotScreen
from inspector.tui.session.part import Part
from inspector.tui.widgets.status_line import StatusLine

if TYPE_CHECKING:
    from inspector.compaction.compress import CompressionResult
    from inspector.compaction.request import CompactionRequest, Provider, Strategy
    from inspector.compaction.summarisers import ProviderChoice
    from inspector.store import StoreError

COMPACT_GROUP = "compact"
STORE_GROUP = "store"


class CompactionController(Part):
    """Compaction preview, apply / revert for the session view (SessionScreen)."""

    def __init__(self, path: Path, status: StatusLine) -> None:
        super().__init__()
        self.path = path
        self.status = status  # its "strategy", "provider" and "preview" slots are this part's
        self.loaded: Loaded | None = None  # the version shown (the screen says, ``loaded_shown``)
        self.preview: Preview | None = None
        self._running_dialog: RunningScreen | None = None
        self._apply_dialog: ConfirmScreen | None = None  # "Apply?" while open: closed if its preview goes stale
        self._last_focus = ""
        self.back_to_preview = False  # the cursor came here from a preview's line or fact: Esc goes back to it
        # What the next run uses (S, the f dialog), held here rather than as a request: the staged target
        # stays remembered while the reference strategy is chosen (S goes back to it), and a request for
        # the reference strategy has none.  Each run's request: ``request``.
        self._strategy: Strategy = "reference"
        self._target: float | None = None
        self.can_undo = False  # an apply of this file can be undone (read from the journal at each load)
        self._wrote = False  # the apply or undo under way changed the file

    # -- compaction -----------------------------------------------------------------------
    def request(self, split: int, focus: str = "") -> CompactionRequest:
        """The next run's request: the app's default one, with this view's strategy and target, ``focus``
        and ``split`` (``running.request_for_run``)."""
        assert self.loaded is not None
        return request_for_run(inspector_of(self).request, self.loaded, split, self._strategy, self._target, focus)

    def chose(self, request: CompactionRequest) -> None:
        """Remember what the f dialog chose: the strategy, the staged one's target (a target chosen before
        stays while the reference strategy is chosen) and the focus."""
        self._strategy = request.strategy
        if request.strategy == "staged":
            self._target = request.target
        self._last_focus = request.instruction or ""
        self.show_strategy()

    def show_strategy(self) -> None:
        extra = f", {target_text(self._target)}" if self._strategy == "staged" else ""
        self.status.set("strategy", f"strategy {self._strategy}{extra} (S)")

    def strategy(self) -> None:
        """Toggle reference <-> staged (the target stays as chosen in the f dialog)."""
        self._strategy = STRATEGIES[(STRATEGIES.index(self._strategy) + 1) % len(STRATEGIES)]
        self.show_strategy()
        self.notify(f"Compaction strategy: {self._strategy}", timeout=3)

    # -- who writes the snapshot ------------------------------------------------------------
    def provider_choice(self) -> ProviderChoice:
        """Which summariser the next run uses and why (the core's ``choose_provider``), before anything is sent."""
        from inspector.compaction.summarisers import choose_provider

        return choose_provider(inspector_of(self).request.provider)

    def provider_text(self) -> tuple[str, str, str]:
        """The status line's words for ``provider_choice`` (text, style, a shorter text for a narrow line)."""
        from inspector.compaction.summarisers import DEFAULT_MODEL

        choice = self.provider_choice()
        asked = "" if choice.requested == choice.provider else f"{choice.requested} -> "
        if choice.problem:
            missing = "no gemini on PATH" if choice.provider == "gemini-cli" else "no credentials found"
            return f"summariser {choice.requested}: {missing}, a run fails (P)", "red", ""
        if not choice.sends:
            return (f"summariser {asked}offline: nothing leaves this machine (P)", "",
                    f"summariser {asked}offline (P)")
        model = (self.loaded.analysis.model if self.loaded is not None else None) or DEFAULT_MODEL
        return (f"summariser {asked}{choice.label()} {model}: the turns are sent (P)", "yellow",
                f"summariser {asked}{choice.label()}: sent (P)")

    def show_provider(self) -> None:
        text, style, short = self.provider_text()
        self.status.set("provider", text, style, short)

    def provider(self) -> None:
        """offline -> gemini -> gemini-cli -> auto -> offline; the notification says why that one runs."""
        order: tuple[Provider, ...] = ("offline", "gemini", "gemini-cli", "auto")
        app = inspector_of(self)
        current = app.request.provider
        following = order[(order.index(current) + 1) % len(order)] if current in order else "offline"
        app.request = replace(app.request, provider=following)  # for the whole app
        self.show_provider()
        choice = self.provider_choice()
        self.notify(choice.problem or choice.reason, title=f"Summariser: {following}",
                    severity="error" if choice.problem else "information", timeout=6)

    def compact(self, split: int) -> None:
        if self.loaded is not None:
            self.start_compaction(self.request(split), split)

    def compact_focus(self, split: int) -> None:
        if self.loaded is None:
            return

        def chosen(request: CompactionRequest | None) -> None:
            if request is not None:  # (made again from the version shown now: the file may have grown meanwhile)
                self.chose(request)
                self.start_compaction(self.request(split, self._last_focus), split)

        offline = not self.provider_choice().sends
        self.app.push_screen(FocusScreen(split, self.request(split, self._last_focus), offline=offline),
                             callback=chosen)

    def start_compaction(self, request: CompactionRequest, split: int) -> None:
        if self.loaded is None:
            return
        what = f"{turn_span(0, split)} of {self.path.name}" if split else self.path.name
        said = self.loaded.analysis.verdict
        if said is not Verdict.COMPRESS:
            self.notify(f"{said.explained} c compacts it anyway, at the split shown.",
                        title=said.short.capitalize(), timeout=6)
        who = self.provider_text()[0].removesuffix(" (P)")
        label = f"Compacting {what} ({request.strategy} strategy; {who})"
        self._running_dialog = RunningScreen(label, cancel=self.cancel_compaction)
        self.app.push_screen(self._running_dialog)
        self._running_dialog.step("summarising" if request.strategy == "reference" else "running the stages")
        self.run_compaction(self.loaded, split, request)

    def cancel_compaction(self) -> None:
        self.workers.cancel_group(self, COMPACT_GROUP)
        self._running_dialog = None
        self.notify("Compaction cancelled.", severity="warning")

    @work(thread=True, exclusive=True, exit_on_error=False, group=COMPACT_GROUP, description="the compaction")
    def run_compaction(self, loaded: Loaded, split: int, request: CompactionRequest) -> CompressionResult:
        worker = get_current_worker()
        summariser = summariser_for(request,
                                    lambda text, progress: self.post_message(CompactionProgress(text, progress)))
        result = run_one(loaded, request, summariser, lambda: worker.is_cancelled)
        if not worker.is_cancelled:
            self.post_message(CompactionFinished(result, split, request.instruction or "", loaded))
        return result

    def on_compaction_progress(self, message: CompactionProgress) -> None:
        if self._running_dialog is not None:
            if message.progress is not None:
                self._running_dialog.show(message.progress)
            else:
                self._running_dialog.step(message.text)

    def compare(self, split: int) -> None:
        from inspector.tui.screens.compare import CompareScreen

        if self.loaded is not None:
            self.app.push_screen(CompareScreen(self.loaded, split, replace(self.request(split), compare=True),
                                               self.open_preview))

    def open_preview(self, result: CompressionResult, split: int, source: Loaded, recall: float | None = None) -> None:
        """Make ``result`` (computed from ``source``) the preview - ``a`` applies it - and show it."""
        self.preview = self.make_preview(result, split, source, recall=recall)
        self.show_preview_status()
        self.show_preview()

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
        self.show_preview()

    def show_preview(self) -> None:
        self.back_to_preview = False
        if self.preview is None:
            self.notify("No preview yet: press c to run the compaction.", severity="warning")
            return
        self.app.push_screen(SnapshotScreen(self.preview, apply=self.apply))

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
    def apply(self) -> None:
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
        self._wrote = True
        self.show_preview_status()
        while isinstance(self.app.screen, (SnapshotScreen, CompareScreen)):
            self.app.pop_screen()
        shown = before_after(message.detail.info.tokens_before, message.detail.info.tokens_after, unit=" tokens")
        figures = f"{shown}. " if shown else ""
        notes = "".join(f" Note: {note}." for note in message.detail.notes())
        self.notify(f"{figures}Backup: {message.backup}. Press u to undo.{notes}", title="Compaction applied",
                    severity="warning" if message.detail.lost_bytes else "information", timeout=10)
        self.post_message(LoadRequested("reload"))

    def check_undo(self) -> None:
        """Read the journal: can an apply be undone?  (u is offered only then.)"""
        was = self.can_undo
        if never_applied(self.path):
            self.can_undo = False  # (the journal's modules not loaded on the way to the table)
        else:
            from inspector.store import StoreError, undoable

            try:
                self.can_undo = bool(undoable(self.path))
            except StoreError:
                self.can_undo = True  # u then says what is wrong with the journal
        if self.can_undo != was:
            self.refresh_bindings()  # the footer is built again: not on every live append

    def revert(self) -> None:
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
        self._wrote = True
        result = message.detail
        note = f" {result.note}" if result.note else ""
        kept = f" {result.kept_bytes:,} bytes recorded since were kept." if result.kept_bytes else ""
        lost = f" Note: {result.lost_note}." if result.lost_note else ""
        self.notify(f"Apply #{result.entry.seq:,} undone; the file is {result.size:,} bytes again.{kept}{note}{lost}",
                    title="Reverted", severity="warning" if result.lost_note else "information", timeout=10)
        self.post_message(LoadRequested("reload"))

    def timeline(self) -> None:
        if self.loaded is not None and self.loaded.session.transcript is not None:  # Antigravity: its checkpoints
            from inspector.tui.screens.checkpoints import CheckpointsScreen

            self.app.push_screen(CheckpointsScreen(self.loaded.session.transcript))
            return
        from inspector.tui.screens.timeline import TimelineScreen  # (the journal's modules: when it is opened)

        self.app.push_screen(TimelineScreen(self.path))

    # -- the preview and the file ---------------------------------------------------------------
    def loaded_shown(self, previous: Loaded | None, loaded: Loaded) -> None:
        """The screen shows ``loaded``: a preview it no longer fits is stale; after a whole read the
        journal says whether an apply can be undone (an append does not change it)."""
        self.loaded = loaded
        if loaded.changed_from is None:
            self.check_undo()
        if previous is None:
            return
        source = self.preview.source if self.preview is not None and not self.preview.stale else None
        if source is not None and source.session.sha256 != loaded.session.sha256:
            self.mark_stale(self.why_stale(source, previous, loaded))

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

    def worker_changed(self, worker: Worker[object], state: WorkerState) -> None:
        if worker.group == COMPACT_GROUP and state in (WorkerState.ERROR, WorkerState.CANCELLED):
            self._close_running()
        if worker.group == STORE_GROUP and worker.is_finished:  # (Applied / Reverted came before)
            self.post_message(StoreDone(self._wrote))
            self._wrote = False

    def why_stale(self, source: Loaded, previous: Loaded, loaded: Loaded) -> str:
        """Why a preview computed from ``source`` no longer fits the file ``loaded`` read, where
        ``previous`` was shown before it.

        Any change makes it stale: an apply writes the file the preview was
        computed from, and the kept part runs to the end of the history.  The
        reason says what changed, from what the extension found changed
        (``changed_from``); after a whole read, or a preview older than the
        version before, only that the file changed."""
        preview = self.preview
        if loaded.changed_from is None or preview is None or source is not previous:
            return "the file changed on disk since the preview was computed"
        changed = loaded.changed_from
        before = len(previous.analysis.turns)
        added = len(loaded.analysis.turns) - before
        if changed < preview.split:
            return f"turn {changed:,}, which the snapshot summarises, was written again on disk"
        what = []
        if changed < before:
            what.append(f"turn {changed:,}, in the kept part, was written again")
        if added > 0:
            what.append(f"{plural(added, 'turn')} appended after it" if what else f"{plural(added, 'turn')} appended")
        if not what:
            return ("a line that changes no turn (metadata, such as the session's summary) was appended: "
                    "the preview was computed from the file without it")
        return " and ".join(what) + " on disk: the kept part changed, so the new history and its figures differ"
