"""The compaction preview: Stages (staged), Final, Draft, Diff, Previous -> New, Lost facts; ``a`` applies.

For the staged strategy the Stages tab comes first, and the snapshot tabs
appear only when its summary stage ran.  On the Final tab each line of the
snapshot can be selected to see the turns it comes from (Enter goes to the
first of them in the session view, ``/`` searches the snapshot); on the
Lost facts tab, Enter on a fact goes to its turn.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, ClassVar, overload

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import Input, Static, TabbedContent, TabPane

from inspector.compaction.snapshot import diff
from inspector.format import count_text, plural, split_words, turn_span, visible, written_by
from inspector.tui.messages import ShowTurn
from inspector.tui.preview import Preview
from inspector.tui.screens.base import TurnsScreen
from inspector.tui.widgets.facts_table import FactsTable
from inspector.tui.widgets.snapshot_lines import SnapshotLines
from inspector.tui.widgets.snapshot_view import RenderPane, diff_renderable, snapshot_renderable, stages_renderable
from inspector.tui.widgets.steady_footer import SteadyFooter


class _Contents(Sequence[dict[str, Any]]):
    """The history's contents, each built only when shown (a big session's turns are read lazily)."""

    def __init__(self, turns: Sequence[Any]) -> None:
        self.turns = turns

    def __len__(self) -> int:
        return len(self.turns)

    @overload
    def __getitem__(self, index: int) -> dict[str, Any]: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[dict[str, Any]]: ...

    def __getitem__(self, index: int | slice) -> dict[str, Any] | Sequence[dict[str, Any]]:
        if isinstance(index, slice):
            return [t.content for t in self.turns[index]]
        return self.turns[index].content  # type: ignore[no-any-return]


def summary_text(preview: Preview) -> Text:
    result = preview.result
    ok = preview.compressed
    text = Text.assemble(
        ("status ", "bold"), (preview.status, "bold green" if ok else "bold red"),
        "   ", (preview.tokens_text(), "bold"), "   strategy ", (preview.strategy, "bold cyan"),
    )
    if preview.recall is not None:
        text.append(f"   history fact recall {preview.recall:.1%}", style="dim")
    if result.recorded_prompt_tokens is not None:
        text.append(f"   recorded last prompt {count_text(result.recorded_prompt_tokens)}", style="dim")
    if note := preview.before_note():
        text.append(f"\n{note}", style="dim")
    text.append("\n")
    split = result.split_point if result.split_point is not None else preview.split
    summarised = True
    if preview.staged:  # the stages used are in the strategy's message, below
        summarised = bool(result.split_point)
        text.append(f"summary of {turn_span(0, split)}" if summarised else "no summary stage ran")
    else:
        text.append(" ".join(split_words(split, result.split_kind, preview.turn_count)))
    if summarised and result.split_point is not None and result.split_point != preview.split:
        why = ("the staged strategy chose its own split" if preview.staged
               else "the budget-truncated history splits there")
        text.append(f" ({why}; the table showed {preview.split:,})", style="dim")
    if summarised:
        text.append(f"   by {written_by(result.provider, result.model)}", style="dim")
    took = result.duration_seconds
    text.append(f"   took {took:.1f} s" if took >= 1 else "   took under a second", style="dim")
    if result.truncations:
        text.append(f"   {plural(len(result.truncations), 'tool output')} cut to an excerpt", style="yellow")
    if preview.focus:
        text.append("\nfocus: ", style="bold")
        text.append(visible(preview.focus, one_line=True))
    provenance = result.provenance
    if provenance is not None and provenance.focus_note:
        text.append("\n")
        text.append(provenance.focus_note, style="yellow")
    if result.message:
        text.append("\n")
        text.append(result.message, style="yellow" if ok else "red")
    if result.agentic_alternative:
        text.append(f"\nA in the session view moves the split to model turn {result.agentic_alternative:,}, as "
                    f"compact --agentic does; c then summarises {turn_span(0, result.agentic_alternative)}",
                    style="yellow")
    if preview.stale:
        text.append("\nSTALE: ", style="bold red")
        text.append(f"{preview.stale}; Esc, then c in the session view, computes it again", style="red")
    return text


class SummaryBox(VerticalScroll):
    """The preview's figures and notes, at most 40% of the screen: when they do not fit (a focus, its note, a
    stale preview's reason at 80x24), Tab reaches them and the arrow and page keys scroll them."""

    def on_resize(self) -> None:
        self.check_fit()

    def check_fit(self) -> None:
        def reachable() -> None:
            self.can_focus = self.max_scroll_y > 0

        self.call_after_refresh(reachable)


class SnapshotScreen(Screen[None]):
    """What the compaction would write, before it is written."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("a", "apply", "Apply", id="preview.apply", tooltip="write this compaction to the session file"),
        Binding("escape", "back", "Back", id="preview.back", tooltip="back to the session"),
        Binding("y", "copy", "Copy", id="preview.copy", tooltip="copy the snapshot to the clipboard, as text"),
        Binding("0", "tab('stages')", "Stages", show=False, id="preview.tab-stages",
                tooltip="staged: what each stage did"),
        Binding("1", "tab('final')", "Final", show=False, id="preview.tab-final", tooltip="the final snapshot"),
        Binding("2", "tab('draft')", "Draft", show=False, id="preview.tab-draft", tooltip="the first draft"),
        Binding("3", "tab('diff')", "Diff", show=False, id="preview.tab-diff", tooltip="draft -> final"),
        Binding("4", "tab('previous')", "Previous", show=False, id="preview.tab-previous",
                tooltip="the history's earlier snapshot -> the new one"),
        Binding("5", "tab('facts')", "Facts", show=False, id="preview.tab-facts", tooltip="facts kept and lost"),
        Binding("left", "step_tab(-1)", "Previous tab", id="preview.tab-previous-one", key_display="←",
                tooltip="the tab to the left", priority=True),
        Binding("right", "step_tab(1)", "Next tab", id="preview.tab-next-one", key_display="→",
                tooltip="the tab to the right", priority=True),
    ]

    def __init__(self, preview: Preview, apply: Callable[[], None]) -> None:
        super().__init__()
        self.preview = preview
        self._apply = apply

    def compose(self) -> ComposeResult:
        with SummaryBox(id="preview-summary-box"):
            yield Static(summary_text(self.preview), id="preview-summary", markup=False)
        yield from self.tabs()
        yield from self.compose_footer()

    def tabs(self) -> ComposeResult:
        result = self.preview.result
        stages = result.stages
        summary_ran = not self.preview.staged or bool(result.snapshot)
        with TabbedContent(id="preview-tabs"):
            if stages is not None:
                with TabPane("Stages", id="stages"):
                    yield RenderPane(stages_renderable(stages), id="stages-pane")
            if summary_ran:
                yield from self.snapshot_tabs()
            else:
                yield from self.facts_tab()

    def snapshot_tabs(self) -> ComposeResult:
        result = self.preview.result
        with TabPane("Final", id="final"):
            yield SnapshotLines(result.snapshot, result.provenance, self.history(), id="final-pane")
        with TabPane("Draft", id="draft"):
            yield RenderPane(snapshot_renderable(result.draft_snapshot), id="draft-pane")
        with TabPane("Diff", id="diff"):
            changes = diff(result.draft_snapshot or "", result.snapshot or "")
            shown = Text(result.verification_note, "yellow") if result.verification_note \
                else diff_renderable(changes, "draft", "final")
            yield RenderPane(shown, id="diff-pane")
        if result.previous_snapshot:
            with TabPane("Previous -> New", id="previous"):
                changes = diff(result.previous_snapshot, result.snapshot or "")
                yield RenderPane(diff_renderable(changes, "previous", "new"), id="previous-pane")
        yield from self.facts_tab()

    def facts_tab(self) -> ComposeResult:
        facts = self.preview.result.facts
        label = "Lost facts" if facts is None else f"Lost facts ({len(facts.lost):,})"
        if facts is not None and facts.false_claims:
            label += f" · {plural(len(facts.false_claims), 'false claim')}"
        with TabPane(label, id="facts"):
            yield FactsTable(facts, whole_history=self.preview.staged, id="facts-pane")

    def compose_footer(self) -> ComposeResult:
        yield Static(self.footer_text(), id="preview-footer", markup=False)
        yield SteadyFooter()

    def footer_text(self) -> Text:
        refusal = self.preview.refusal()
        text = Text.assemble((self.preview.tokens_text(), "bold"), "   ", self.preview.status)
        text.append("   a: apply" if refusal is None else f"   cannot apply: {refusal}",
                    style="green" if refusal is None else "yellow")
        text.append("   ←/→ or 0-5: tabs   Esc: back", style="dim")
        return text

    def refresh_state(self) -> None:
        """The preview changed (marked stale): redraw the figures."""
        self.query_one("#preview-summary", Static).update(summary_text(self.preview))
        self.query_one(SummaryBox).check_fit()
        self.query_one("#preview-footer", Static).update(self.footer_text())
        self.refresh_bindings()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """``a`` is dimmed when this preview cannot be applied (the line above the keys says why);
        left and right move the cursor in a text field (the search box), the tabs everywhere else."""
        if action == "apply" and self.preview.refusal() is not None:
            return None
        return not (action == "step_tab" and isinstance(self.focused, Input))

    def history(self) -> Sequence[dict[str, Any]]:
        source = self.preview.source
        return _Contents(source.analysis.turns) if source is not None else []

    def on_show_turn(self, message: ShowTurn) -> None:
        """A snapshot line or a fact asked for its turn: close the preview, and whatever stands between it and
        the session view (the comparison it was opened from), and show the turn there."""
        message.stop()
        stack = self.app.screen_stack
        if self not in stack:
            return
        below = stack[: stack.index(self)]
        sessions = [screen for screen in below if isinstance(screen, TurnsScreen)]
        target = sessions[-1] if sessions else (below[-1] if below else None)
        while self.app.screen is not target and len(self.app.screen_stack) > 1 and target is not None:
            self.app.pop_screen()
        if target is not None:
            target.post_message(ShowTurn(message.index))

    def action_apply(self) -> None:
        self._apply()

    def action_copy(self) -> None:
        snapshot = self.preview.result.snapshot
        if not snapshot:
            self.notify("This preview has no snapshot to copy.", severity="warning")
            return
        text = visible(snapshot)
        self.app.copy_to_clipboard(text)
        self.notify(f"Snapshot copied ({len(text):,} characters), if the terminal passes copies on to the "
                    "clipboard.", title="Copied", timeout=5)

    def action_back(self) -> None:
        self.dismiss(None)

    def action_tab(self, tab: str) -> None:
        tabs = self.query_one(TabbedContent)
        if tabs.query(f"TabPane#{tab}"):
            tabs.active = tab
        else:
            self.notify(f"This preview has no {tab} tab.", timeout=3)

    def action_step_tab(self, step: int) -> None:
        tabs = self.query_one("#preview-tabs", TabbedContent)
        ids = [pane.id for pane in tabs.query(TabPane) if pane.id]
        if tabs.active in ids:
            tabs.active = ids[(ids.index(tabs.active) + step) % len(ids)]

    def on_mount(self) -> None:
        tabs = self.query_one("#preview-tabs", TabbedContent)
        if self.preview.tab and tabs.query(f"TabPane#{self.preview.tab}"):
            tabs.active = self.preview.tab  # back where it was left
        self.call_after_refresh(self.focus_pane)

    def on_tabbed_content_tab_activated(self, event: TabbedContent.TabActivated) -> None:
        if event.tabbed_content.id == "preview-tabs":
            self.preview.tab = event.tabbed_content.active
            self.call_after_refresh(self.focus_pane)

    def focus_pane(self) -> None:
        """The keys go to what the open tab shows (its list or text), not to the tab strip."""
        pane = self.query_one("#preview-tabs", TabbedContent).active_pane
        if pane is None:
            return
        # not a hidden one (the search box, until / opens it): it would take the keys unseen
        shown = (w for w in pane.query("*") if w.focusable and all(node.display for node in w.ancestors_with_self))
        found = next(shown, None)
        if found is not None:
            found.focus()
