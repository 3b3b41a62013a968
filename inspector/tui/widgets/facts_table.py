"""The Lost facts tab: the independent check's figures, then every fact (lost first) and every false claim.

Each row names the turn the fact comes from; Enter on a row goes to that
turn in the session view.  The facts are those ``inspector.quality`` reads
from the history with code of its own, so the recall shown is not the
summariser grading itself.
"""

from __future__ import annotations

from rich.text import Text
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


class FactsTable(Vertical):
    """Figures, then a table of facts and false claims; Enter goes to the row's turn."""

    DEFAULT_CSS = """
    FactsTable #facts-summary { height: auto; padding: 0 1; }
    FactsTable #facts-rows { height: 1fr; }
    """

    def __init__(self, report: Report | None, *, whole_history: bool = False, id: str | None = None) -> None:
        super().__init__(id=id)
        self.report = report
        self.whole_history = whole_history
        self.row_turns: list[int | None] = []

    def compose(self) -> ComposeResult:
        yield Static(facts_summary(self.report, whole_history=self.whole_history), id="facts-summary",
                     markup=False)
        yield DataTable(id="facts-rows", cursor_type="row", zebra_stripes=True)

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        table.add_columns("", "kind", "turn", "fact")
        if self.report is None:
            return
        for claim in self.report.false_claims:
            turn = claim.turns[0] if claim.turns else None
            table.add_row(Text("FALSE", style="bold red"), "claim", "-" if turn is None else f"{turn:,}",
                          Text(visible(f"{claim.reason}: {claim.line}", one_line=True)))
            self.row_turns.append(turn)
        for check in sorted(self.report.checks, key=lambda c: (c.kept, c.fact.turn)):
            mark = Text("kept", style="green") if check.kept else Text("LOST", style="bold red")
            table.add_row(mark, check.fact.kind, f"{check.fact.turn:,}",
                          Text(visible(check.fact.value, one_line=True)))
            self.row_turns.append(check.fact.turn)

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        row = event.cursor_row
        turn = self.row_turns[row] if 0 <= row < len(self.row_turns) else None
        if turn is not None:
            self.post_message(ShowTurn(turn))
