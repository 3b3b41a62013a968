"""An Antigravity transcript's timeline: its compactions (CHECKPOINT steps), what each kept and forgot.

Opened by ``t`` in the session view of a transcript (in place of the store's
journal: nothing is ever applied to one).  The figures are
``antigravity.report.report_of``'s, the ones ``analyze`` prints.
"""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import DataTable, Static

from inspector.antigravity import READ_ONLY
from inspector.antigravity.compaction_point import resolve_compaction_point
from inspector.antigravity.report import TranscriptReport, checkpoint_lines, report_of
from inspector.antigravity.transcript import Transcript
from inspector.format import share_bar, visible
from inspector.tui.widgets.steady_footer import SteadyFooter

STATUS = "Antigravity transcript, read only · t: its checkpoints and what each forgot"
COLUMNS = ("#", "step", "line", "summary", "replaced", "recall", "lost")


class CheckpointsScreen(ModalScreen[None]):
    """One row per checkpoint; the highlighted one's sections, lost facts and changes below."""

    DEFAULT_CSS = """
    CheckpointsScreen { align: center middle; }
    CheckpointsScreen #checkpoints-title, CheckpointsScreen #checkpoints-detail-box {
        width: 150; max-width: 100%; background: $panel; padding: 0 1;
    }
    CheckpointsScreen #checkpoints-title { height: auto; }
    CheckpointsScreen #checkpoints { width: 150; max-width: 100%; height: auto; max-height: 35%; }
    CheckpointsScreen #checkpoints-detail-box { height: 1fr; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,t,q", "dismiss", "Close", id="checkpoints.close", tooltip="back to the session"),
        Binding("a", "toggle_all", "All facts", id="checkpoints.all", tooltip="every lost fact, or the first few"),
    ]

    def __init__(self, transcript: Transcript) -> None:
        super().__init__()
        self.transcript = transcript
        self.report: TranscriptReport | None = None
        self.show_all = False

    def compose(self) -> ComposeResult:
        yield Static(Text.assemble(("Antigravity checkpoints in ", "bold"),
                                   visible(self.transcript.path.name, one_line=True), ("  (checking…)", "dim")),
                     id="checkpoints-title", markup=False)
        yield DataTable(id="checkpoints", cursor_type="row", zebra_stripes=True)
        with VerticalScroll(id="checkpoints-detail-box"):
            yield Static("", id="checkpoints-detail", markup=False)
        yield SteadyFooter()

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        for name in COLUMNS:
            table.add_column(name, key=name)
        self.grade()

    @work(thread=True, exclusive=True, exit_on_error=False, group="checkpoints", description="checking checkpoints")
    def grade(self) -> None:
        report = report_of(self.transcript, resolve_compaction_point())
        self.app.call_from_thread(self.show, report)

    def show(self, report: TranscriptReport) -> None:
        self.report = report
        g = report.gauge
        self.query_one("#checkpoints-title", Static).update(Text.assemble(
            ("Antigravity checkpoints in ", "bold"), visible(self.transcript.path.name, one_line=True), "\n",
            f"context {g.tokens:,} / {g.compaction_point:,} ({g.share:.0%} of its compaction point) ",
            share_bar(min(g.share, 1.0), 12), "\n",
            (f"{len(report.checkpoints)} checkpoints, {len(self.transcript.steps):,} steps; read only", "dim")))
        table = self.query_one(DataTable)
        for c in report.checkpoints:
            r = c.report
            table.add_row(
                Text(str(c.number) if c.number is not None else "?"),
                Text(str(c.step.step_index) if c.step.step_index is not None else "?"),
                Text(f"{c.step.line:,}"),
                Text(f"{c.tokens:,}"),
                Text(f"{c.replaced[1] - c.replaced[0]:,} / {c.replaced_tokens:,}"),
                Text(f"{r.recall:.0%} ({r.kept}/{r.total})", style="red" if r.recall < 0.5 else ""),
                Text(f"{len(r.lost):,}"),
            )
        if not report.checkpoints:
            self.detail(Text("Antigravity did not compact this conversation: no CHECKPOINT step.", style="dim"))
        table.focus()

    def detail(self, text: Text) -> None:
        self.query_one("#checkpoints-detail", Static).update(text)

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        self.show_row(event.cursor_row)

    def show_row(self, row: int) -> None:
        report = self.report
        if report is None or not 0 <= row < len(report.checkpoints):
            return
        text = Text()
        for n, line in enumerate(checkpoint_lines(report.checkpoints[row], show_all=self.show_all,
                                                        more="a: all")):
            style = "bold" if n == 0 else ("yellow" if line.startswith("  lost facts") else "")
            text.append(visible(line, one_line=True) + "\n", style=style)
        text.append(READ_ONLY + ".", style="dim")
        self.detail(text)

    def action_toggle_all(self) -> None:
        self.show_all = not self.show_all
        self.show_row(self.query_one(DataTable).cursor_row)
