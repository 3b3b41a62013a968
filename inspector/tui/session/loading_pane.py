"""What the session view shows until the session is read: how far the read is, or why it failed."""

from __future__ import annotations

from pathlib import Path

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Label, ProgressBar

from inspector.format import visible
from inspector.tui.messages import LoadProgress


class LoadingPane(Vertical):
    """"Opening session-….jsonl…" with a bar (MB read, when the total is known)."""

    def __init__(self, path: Path, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.name_shown = visible(path.name, one_line=True)

    def compose(self) -> ComposeResult:
        yield Label(Text(f"Opening {self.name_shown}…"), id="loading-label")
        yield ProgressBar(id="loading-bar", total=None, show_eta=False)

    def show(self, message: LoadProgress) -> None:
        bar = self.query_one("#loading-bar", ProgressBar)
        label = self.query_one("#loading-label", Label)
        if message.total:
            bar.update(total=message.total, progress=message.done)
            label.update(Text(f"{message.phase.capitalize()} {self.name_shown}: "
                              f"{message.done / 1e6:,.0f} / {message.total / 1e6:,.0f} MB"))
        else:
            bar.update(total=None)
            label.update(Text(f"{message.phase.capitalize()} {self.name_shown}…"))

    def failed(self, why: str) -> None:
        self.query_one("#loading-label", Label).update(
            Text.assemble(("Cannot open this file\n", "bold red"), why, ("\n\nEsc: back", "dim")))
        self.done()

    def done(self) -> None:
        """Never shown again (a reload reports in the status line); an indeterminate bar redraws
        itself 15 times a second even while hidden, so it goes."""
        for bar in self.query("#loading-bar"):  # (once: the tail's rows may have let it go already)
            bar.remove()
