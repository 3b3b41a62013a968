"""Small modal dialogs: a yes/no confirmation, the run options (focus, strategy, target), a running job."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace
from typing import ClassVar, TypeVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.events import Resize
from textual.screen import ModalScreen
from textual.visual import VisualType
from textual.widgets import Input, Label, ProgressBar, Select, Static

from inspector.compaction.request import CompactionRequest, RequestError, named_strategy
from inspector.format import Literal, plural, visible
from inspector.progress import Progress
from inspector.quality.forgetting import Forgetting
from inspector.tui.running import STRATEGIES, parse_target
from inspector.tui.widgets.steady_footer import SteadyFooter
from inspector.tui.widgets.text_field import TextField

SHORT_ROWS = 32  # a terminal shorter than this (80x24, 100x30) gets the dialogs' short layout
R = TypeVar("R")

STRATEGY_LABELS = {
    "reference": "reference - Gemini CLI's own compaction",
    "staged": "staged - cheapest stages first, until a target fits",
}


class DialogScreen(ModalScreen[R]):
    """A dialog box (``.dialog``) that fits the terminal.  Below ``SHORT_ROWS`` rows (80x24, 100x30) its fields
    are one row each, without their borders, and the box drops its blank rows, so the whole dialog,
    its notes and an error under a field fit; a box still too tall scrolls to the focused field.  Each
    has a footer of its own: the keys of the screen below do nothing while it is open."""

    ON_A_LIST = Text("Enter: open the list, Enter again: pick one    Tab: next field    Esc: cancel", style="dim")
    _keys_text: VisualType | None = None  # the dialog's own keys line, while a list does not have the focus

    def on_descendant_focus(self) -> None:
        """On a list Enter opens it, not the dialog's Enter (run, write): the keys line says so while it has focus."""
        keys = self.query("#dialog-keys")
        if not keys:
            return
        line = keys.first(Static)
        if self._keys_text is None:
            self._keys_text = line.content
        focused = self.focused
        on_list = focused is not None and any(isinstance(node, Select) for node in focused.ancestors_with_self)
        line.update(self.ON_A_LIST if on_list else self._keys_text)

    def on_resize(self, event: Resize) -> None:
        short = event.size.height < SHORT_ROWS
        self.set_class(short, "-short")
        for field in self.query(Input):
            field.compact = short
        for choice in self.query(Select):
            choice.compact = short


class ConfirmScreen(DialogScreen[bool]):
    """Ask before writing: ``y``/Enter confirms, ``n``/Esc declines."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y,enter", "answer(True)", "Yes", id="confirm.yes", tooltip="go ahead"),
        Binding("n,escape", "answer(False)", "No", id="confirm.no", tooltip="do nothing"),
    ]

    def __init__(self, title: str, body: Text) -> None:
        super().__init__()
        self.title_text = title
        self.body = body

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Static(Text(self.title_text, style="bold"), markup=False)
            yield Static(Literal(self.body), id="confirm-body", markup=False)  # it names the file: shown literally
            yield Static(Text("y / Enter: yes    n / Esc: no", style="dim"), markup=False)
        yield SteadyFooter()

    def action_answer(self, yes: bool) -> None:
        self.dismiss(yes)


def forgetting_text(forgets: Forgetting | None) -> Text:
    """The apply question's line on what the snapshot forgets (the independent check's recall)."""
    if forgets is None:
        return Text("")
    return Text(forgets.sentence() + "\n", style="bold red" if forgets.below else "")


class ForgettingScreen(ConfirmScreen):
    """The second question, under the recall threshold: only ``y`` applies (Enter does not), so a
    confirmation typed ahead does not answer it."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y", "answer(True)", "Apply anyway", id="forget.yes", tooltip="apply and forget these facts"),
        Binding("n,escape,enter", "answer(False)", "No", id="forget.no", tooltip="do nothing"),
    ]

    def __init__(self, forgets: Forgetting) -> None:
        body = Text.assemble((f"It {forgets.refusal().removeprefix('the snapshot ')}.\n", "bold red"),
                             forgets.sentence())
        super().__init__("Apply although it forgets this?", body)

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Static(Text(self.title_text, style="bold"), markup=False)
            yield Static(Literal(self.body), id="confirm-body", markup=False)
            yield Static(Text("y: apply anyway    n / Esc / Enter: no", style="dim"), markup=False)
        yield SteadyFooter()


class FocusScreen(DialogScreen[CompactionRequest | None]):
    """Before a run: a focus instruction, the strategy and (staged) its target; Enter runs, Esc cancels.
    Given the request the run would make, it answers with that request as chosen here (or None)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Cancel", id="focus.cancel", tooltip="do not run"),
    ]

    def __init__(self, split: int, request: CompactionRequest, *, offline: bool = False) -> None:
        super().__init__()
        self.split = split
        self.offline = offline  # the offline summariser will run: say what it can do with a focus
        self.request = request

    def compose(self) -> ComposeResult:
        target = self.request.target
        with Vertical(classes="dialog"):
            yield Static(Text(f"Compact turns 0-{self.split - 1:,}: what should the summary keep above all?",
                              style="bold"), markup=False)
            yield TextField(self.request.instruction or "",
                            placeholder="e.g. the database schema decisions and open bugs", id="focus-input")
            with Horizontal(id="run-strategy-row"):
                yield Label("strategy ", classes="run-label")
                yield Select([(STRATEGY_LABELS[name], name) for name in STRATEGIES], value=self.request.strategy,
                             allow_blank=False, id="strategy-select")
            with Horizontal(id="run-target-row"):
                yield Label("target ", classes="run-label")
                yield TextField("" if target is None else f"{target:g}", id="target-input",
                            placeholder="staged: 0.2 of window, 30000 tokens; empty: default")
            if self.offline:
                yield Static(Text("The offline summariser reads a focus as words: the lines that hold them rank "
                                  "higher. It cannot follow an instruction such as \"be brief\" or \"in French\"; "
                                  "only Gemini can.", style="yellow"), id="focus-offline", markup=False)
            yield Static("", id="run-error", markup=False)
            yield Static(Text("Enter: run    Tab: next field    Esc: cancel    (empty focus: the standard summary)",
                              style="dim"), id="dialog-keys", markup=False)
        yield SteadyFooter()

    def on_mount(self) -> None:
        self.query_one("#focus-input", Input).focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        try:
            target = parse_target(self.query_one("#target-input", Input).value)
        except ValueError as exc:
            reason = str(exc) if "above" in str(exc) else "not a number"
            self.query_one("#run-error", Static).update(Text(f"target: {reason}", style="red"))
            self.query_one("#target-input", Input).focus()
            return
        strategy = named_strategy(str(self.query_one("#strategy-select", Select).value))
        focus = self.query_one("#focus-input", Input).value.strip()
        try:  # the request checks itself: a target with the reference strategy is refused, as compact refuses it
            chosen = replace(self.request, strategy=strategy, target=target, instruction=focus)
        except RequestError as exc:
            self.query_one("#run-error", Static).update(Text(f"target: {exc}", style="red"))
            self.query_one("#target-input", Input).focus()
            return
        self.dismiss(chosen)

    def action_cancel(self) -> None:
        self.dismiss(None)


class RunningScreen(DialogScreen[None]):
    """A job in progress: what it does, for how long; Esc cancels it."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Cancel", id="running.cancel", tooltip="stop the job"),
    ]

    def __init__(self, label: str, cancel: Callable[[], None]) -> None:
        super().__init__()
        self.label = label
        self._cancel = cancel
        self._step_text = ""
        self.started = time.monotonic()

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            label = Text(visible(self.label, one_line=True), style="bold")
            yield Static(label, id="running-label", markup=False)  # wraps at 80 columns
            yield ProgressBar(total=None, show_eta=False, id="running-bar")
            yield Static("", id="running-step", markup=False)
            yield Static(Text("Esc: cancel", style="dim"), markup=False)
        yield SteadyFooter()

    def on_mount(self) -> None:
        self.step(None)
        self.set_interval(0.5, self._tick)

    def _tick(self) -> None:
        self.step(None)

    def step(self, text: str | None) -> None:
        if text is not None:
            self._step_text = text
        if not self.is_mounted:
            return
        elapsed = time.monotonic() - self.started
        widget = self.query_one("#running-step", Static)
        widget.update(Text(f"{visible(self._step_text, one_line=True)}  {elapsed:,.0f} s", style="dim"))

    def show(self, progress: Progress, unit: str = "turn") -> None:
        """A report from the core: the stage, and a real bar when it knows how much there is."""
        if progress.total > 0:
            self.step(f"{progress.stage}: {progress.done:,} of {plural(progress.total, unit)}")
        else:
            self.step(f"{progress.stage}: {plural(progress.done, unit)} done" if progress.done else progress.stage)
        if self.is_mounted:
            bar = self.query_one("#running-bar", ProgressBar)
            bar.update(total=progress.total or None, progress=progress.done)

    def action_cancel(self) -> None:
        self._cancel()
        self.dismiss(None)
