"""The compactions applied to a session, from the store's journal, newest first."""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.screen import ModalScreen
from textual.widgets import DataTable, Static

from inspector.format import before_after, plural, visible, written_by
from inspector.store import JournalEntry, StoreError, backups_dir, read_history
from inspector.tui.widgets.steady_footer import SteadyFooter

# What an apply did first (its tokens whole at 80 columns), then when and by whom; the line under the table
# says the highlighted one in full.
COLUMNS = ("#", "tokens before -> after", "state", "split", "turns", "applied", "by", "backup")


class TimelineScreen(ModalScreen[None]):
    """One row per apply: when, what it saved, whether it was reverted."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,t,q", "dismiss", "Close", id="timeline.close", tooltip="back to the session"),
    ]

    def __init__(self, path: Path) -> None:
        super().__init__()
        self.path = path
        self.shown: list[JournalEntry] = []  # the table's rows, newest first

    def compose(self) -> ComposeResult:
        yield Static(Text.assemble(("Compactions applied to ", "bold"), visible(self.path.name, one_line=True)),
                     id="timeline-title",
                     markup=False)
        yield DataTable(id="timeline", cursor_type="row", zebra_stripes=True)
        yield Static("", id="timeline-row", markup=False)
        yield Static("", id="timeline-note", markup=False)
        yield SteadyFooter()  # its own keys (Esc closes), not the session's below, which do nothing here

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        for name in COLUMNS:
            table.add_column(name, key=name)
        try:
            journal = read_history(self.path)
        except StoreError as exc:  # a damaged journal: say so, never a traceback
            self.notify(str(exc), severity="error")
            self.dismiss(None)
            return
        backups = backups_dir(self.path)
        self.shown = list(reversed(journal.entries))
        for entry in self.shown:
            info = entry.info
            tokens = before_after(info.tokens_before, info.tokens_after)
            state = entry.state + (f" {entry.reverted_at}" if entry.reverted_at else "")
            style = "dim" if entry.state == "reverted" else ("red" if entry.state == "failed" else "")
            table.add_row(
                Text(f"{entry.seq:,}"), Text(tokens), Text(visible(state, one_line=True), style=style),
                Text("" if info.split_point is None else f"{info.split_point:,}"),
                Text(f"{entry.turns_before:,} -> {entry.turns_after:,}"),
                Text(visible(entry.applied_at, one_line=True)),
                Text(visible(written_by(info.provider, info.model), one_line=True)),
                Text(visible(entry.backup, one_line=True)),
            )
        note = self.query_one("#timeline-note", Static)
        if not journal.entries:
            note.update(Text("No compaction was applied to this file yet.", style="dim"))
        else:
            undoable = len(journal.undoable())
            note.update(Text(f"{plural(len(journal.entries), 'compaction')} applied; {undoable:,} can be undone "
                             f"with u in the session view. Backups are in {visible(str(backups), one_line=True)}",
                             style="dim"))
        table.focus()

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        """The highlighted apply in full, wrapped: its last columns are off to the side at 80 columns."""
        row = event.cursor_row
        if not 0 <= row < len(self.shown):
            return
        entry = self.shown[row]
        info = entry.info
        words = [f"#{entry.seq:,} applied {entry.applied_at}",
                 f"tokens {before_after(info.tokens_before, info.tokens_after)}"]
        if entry.reverted_at:
            words.append(f"reverted {entry.reverted_at}")
        words.append(f"by {written_by(info.provider, info.model) if info.provider or info.model else 'not recorded'}")
        words.append(f"backup {entry.backup}")
        self.query_one("#timeline-row", Static).update(Text(visible(" · ".join(words), one_line=True)))
