"""A one-line question: jump to turn N, search the turns.  Enter answers, Esc cancels.

``check`` turns what was typed into the answer, or raises ``ValueError`` with a
sentence saying what is wrong with it (shown under the input; the dialog stays open).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar, Generic, TypeVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.widgets import Input, Static

from inspector.tui.screens.dialogs import DialogScreen
from inspector.tui.widgets.steady_footer import SteadyFooter
from inspector.tui.widgets.text_field import TextField

T = TypeVar("T")


class AskScreen(DialogScreen[T | None], Generic[T]):
    """Ask for one line; dismiss with ``check``'s answer, or None on Esc."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Cancel", id="ask.cancel", tooltip="close without doing anything"),
    ]

    def __init__(self, question: str, check: Callable[[str], T], *, placeholder: str = "",
                 initial: str = "") -> None:
        super().__init__()
        self.question = question
        self.check = check
        self.placeholder = placeholder
        self.initial = initial

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Static(Text(self.question, style="bold"), markup=False)
            yield TextField(self.initial, placeholder=self.placeholder, id="ask-input")
            yield Static("", id="ask-error", markup=False)
            yield Static(Text("Enter: go    Esc: cancel", style="dim"), markup=False)
        yield SteadyFooter()

    def on_mount(self) -> None:
        self.query_one(Input).focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        try:
            answer = self.check(event.value)
        except ValueError as exc:
            self.query_one("#ask-error", Static).update(Text(str(exc), style="bold red"))
            return
        self.dismiss(answer)

    def action_cancel(self) -> None:
        self.dismiss(None)
