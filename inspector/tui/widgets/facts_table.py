"""The Lost facts tab: the independent check's figures, then every fact (lost first) and every false claim.

Each row names the turn the fact comes from; Enter on a row goes to that
turn in the session view.  The facts are those ``inspector.quality`` reads
from the history with code of its own, so the recall shown is not the
summariser grading itself.
"""

from __future__ import annotations

from rich.cells import cell_len
from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import DataTable, Static

from inspector.format import plural, visible
from inspector.quality import Report
from inspector.tui.messages import ShowTurn


def facts_summary(report: Report | None, *, whole_history: bool = False) -> Text:
    if report is None:
        return Text("No fact check (nothing was summarised).", style="dim")
    scope = ("of the whole history appear in the new history" if whole_history
             else "from the summarised turns appear in the snapshot")
    good = report.recall >= 0.95 and not report.false_claims
    text = Text.assemble(
        ("fact recall: ", "bold"), (f"{report.recall:.1%}", "bold green" if good else "bold yellow"),
        f"  ({report.kept:,} of {plural(report.total, 'fact')} {scope}; {report.total - report.kept:,} lost)",
    )
    claims = len(report.false_claims)
    text.append(f"\nfalse claims: {claims:,}", style="bold red" if claims else "green")
    if report.size_share is not None:
        text.append(f"   snapshot: {report.snapshot_tokens:,} tokens, {report.size_share:.1%} of the "
                    f"{report.replaced_tokens:,} it replaces", style="dim")
    kinds = "  ".join(f"{kind}: {row['kept']:,}/{row['total']:,}" for kind, row in report.by_kind().items())
    text.append(f"\n{kinds}\n", style="dim")
    text.append("Measured by inspector.quality, which reads the history with code of its own. "
                "Enter on a row: go to its turn.", style="dim")
    return text


# The fact column takes what the other columns leave, down to this: below it, the table scrolls sideways.
_NARROWEST_FACT = 24

Row = tuple[Text, str, str, Text]


class FactsTable(Vertical):
    """Figures, then a table of facts and false claims; Enter goes to the row's turn.

    A fact is wrapped to the width the table has (a row grows as tall as its
    fact), so that at 80 columns it is read whole, not cut at the side."""

    DEFAULT_CSS = """
    FactsTable #facts-summary { height: auto; padding: 0 1; }
    FactsTable #facts-rows { height: 1fr; }
    """

    def __init__(self, report: Report | None, *, whole_history: bool = False, id: str | None = None) -> None:
        super().__init__(id=id)
        self.report = report
        self.whole_history = whole_history
        self.row_turns: list[int | None] = []
        self._rows: list[Row] = []
        self._filled_width: int | None = None

    def compose(self) -> ComposeResult:
        yield Static(facts_summary(self.report, whole_history=self.whole_history), id="facts-summary",
                     markup=False)
        yield DataTable(id="facts-rows", cursor_type="row", zebra_stripes=True)

    def on_mount(self) -> None:
        if self.report is not None:
            for claim in self.report.false_claims:
                turn = claim.turns[0] if claim.turns else None
                self._rows.append((Text("FALSE", style="bold red"), "claim", "-" if turn is None else f"{turn:,}",
                                   Text(visible(f"{claim.reason}: {claim.line}", one_line=True))))
                self.row_turns.append(turn)
            for check in sorted(self.report.checks, key=lambda c: (c.kept, c.fact.turn)):
                mark = Text("kept", style="green") if check.kept else Text("LOST", style="bold red")
                self._rows.append((mark, check.fact.kind, f"{check.fact.turn:,}",
                                   Text(visible(check.fact.value, one_line=True))))
                self.row_turns.append(check.fact.turn)
        self._fill(self.size.width)

    def on_resize(self, event: events.Resize) -> None:
        if event.size.width != self._filled_width:
            self._fill(event.size.width)

    def _fill(self, width: int) -> None:
        """The rows again, their facts wrapped to ``width`` (0: not laid out yet, one line each)."""
        table = self.query_one(DataTable)
        row = table.cursor_row
        table.clear(columns=True)
        labels = ("", "kind", "turn")
        fixed = [max([len(label)] + [cell_len(str(cells[k])) for cells in self._rows])
                 for k, label in enumerate(labels)]
        pad = 2 * table.cell_padding
        room = width - sum(w + pad for w in fixed) - pad - table.styles.scrollbar_size_vertical
        for label, size in zip(labels, fixed, strict=True):
            table.add_column(label, width=size)
        table.add_column("fact", width=max(room, _NARROWEST_FACT) if width else None)
        for cells in self._rows:
            table.add_row(*cells, height=None if width else 1)
        self._filled_width = width
        if self._rows:
            table.move_cursor(row=min(max(row, 0), len(self._rows) - 1))

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        row = event.cursor_row
        turn = self.row_turns[row] if 0 <= row < len(self.row_turns) else None
        if turn is not None:
            self.post_message(ShowTurn(turn))
