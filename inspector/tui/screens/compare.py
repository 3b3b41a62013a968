"""Both strategies side by side: ``strategies.compare`` on the same history and split.

The figures are ``compact --compare``'s: status, tokens before -> after,
saved, the stages used (staged) or the split (reference), the snapshot's
size and the fact recall measured alike for both (the whole history's facts
in the whole new history).  Enter or ``a`` on a row opens that result's
preview, where ``a`` applies it with the usual confirmation.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable
from typing import TYPE_CHECKING, ClassVar

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.widgets import DataTable, Label, ProgressBar, Static
from textual.worker import Worker, WorkerState, get_current_worker

from inspector.compaction.stage_words import how_compacted
from inspector.format import visible
from inspector.tui.loading import Cancelled, Loaded
from inspector.tui.messages import CompactionProgress, CompareFinished
from inspector.tui.preview import before_note
from inspector.tui.running import run_compare, summariser_for, target_text
from inspector.tui.screens.base import InspectorScreen
from inspector.tui.widgets.steady_footer import SteadyFooter

if TYPE_CHECKING:
    from inspector.compaction.compress import CompressionResult
    from inspector.compaction.request import CompactionRequest
    from inspector.compaction.strategies import Comparison

COMPARE_GROUP = "compare"
COLUMNS = (("strategy", "strategy"), ("status", "status"), ("before", "tokens before"), ("after", "after"),
           ("saved", "saved"), ("how", "stages / split"), ("snapshot", "snapshot"), ("recall", "fact recall"))
# Below 110 columns: shorter titles, "saved" left out (before - after says it), and the long
# cells wrap in columns this wide (rows grow taller), so nothing is cut; the token figures
# (never split) take the width they need.
NARROW = {"strategy": ("strategy", None), "status": ("status", 10), "before": ("before", None),
          "after": ("after", None), "how": ("how", 12), "snapshot": ("snapshot", 8), "recall": ("recall", 6)}


def row_cells(result: CompressionResult, recall: float | None) -> list[Text]:
    before, after = result.original_token_count, result.new_token_count
    failed = result.status.failed
    return [
        Text(result.strategy, style="bold"),
        Text(result.status.value, style="red" if failed else "green"),
        Text(f"{before:,}", justify="right"),
        Text(f"{after:,}", justify="right"),
        Text(f"{before - after:,}", justify="right"),
        Text(how_compacted(result.stages, result.split_point, result.split_kind)),
        Text(f"{len(result.snapshot):,} chars" if result.snapshot else "-", justify="right"),
        Text(f"{recall:.1%}" if recall is not None else "-", justify="right"),
    ]


class CompareScreen(InspectorScreen):
    """Runs both strategies in a worker (Esc cancels), then one row per strategy."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter,a", "open", "Preview", id="compare.open", key_display="Enter/a",
                tooltip="open the selected strategy's preview (a there applies it)"),
        Binding("escape", "back", "Back / cancel", id="compare.back", tooltip="cancel the run, or back to the session"),
    ]

    def __init__(self, loaded: Loaded, split: int, request: CompactionRequest,
                 open_preview: Callable[[CompressionResult, int, Loaded, float | None], None]) -> None:
        super().__init__()
        self.loaded = loaded
        self.split = split
        self.request = request  # compare set; its target is the staged run's
        self._open_preview = open_preview
        self.comparison: Comparison | None = None
        self.narrow = False

    def compose(self) -> ComposeResult:
        session = self.loaded.session
        kind = self.loaded.split_kind(self.split)
        split = (f"split {self.split:,} ({kind})" if kind != "reference"
                 else "each strategy's own split (the table shows the reference's)")
        yield Static(Text.assemble((visible(session.path.name, one_line=True), "bold"),
                                   "  both strategies on the same history - ", split,
                                   f"  - staged: {target_text(self.request.target)}"),
                     id="compare-title", markup=False)
        with Vertical(id="compare-running"):
            yield Label(Text("Running reference, then staged…", style="bold"), id="compare-label")
            yield ProgressBar(total=None, show_eta=False, id="compare-bar")
            yield Static("", id="compare-step", markup=False)
            yield Static(Text("Esc: cancel", style="dim"), markup=False)
        table: DataTable[Text] = DataTable(id="compare-table", cursor_type="row", zebra_stripes=True)
        self.narrow = self.app.size.width < 110
        for key, label in COLUMNS:
            if not self.narrow:
                table.add_column(label, key=key)
            elif key in NARROW:
                title, width = NARROW[key]
                table.add_column(title, key=key, width=width)
        yield table
        yield Static("", id="compare-notes", markup=False)
        yield SteadyFooter()

    @property
    def table(self) -> DataTable[Text]:
        return self.query_one("#compare-table", DataTable)

    def on_mount(self) -> None:
        self.table.display = False
        self.run_both()

    @work(thread=True, exclusive=True, exit_on_error=False, group=COMPARE_GROUP, description="comparing strategies")
    def run_both(self) -> Comparison:
        worker = get_current_worker()
        summariser = summariser_for(self.request,
                                    lambda text, progress: self.post_message(CompactionProgress(text, progress)))
        comparison = run_compare(self.loaded, self.request, summariser, lambda: worker.is_cancelled)
        if not worker.is_cancelled:
            self.post_message(CompareFinished(comparison, self.split))
        return comparison

    def on_compaction_progress(self, message: CompactionProgress) -> None:
        for step in self.query("#compare-step").results(Static):  # gone once the run finished
            step.update(Text(message.text, style="dim"))

    def on_compare_finished(self, message: CompareFinished) -> None:
        self.comparison = message.comparison
        self.query_one("#compare-running").remove()  # its bar would redraw itself even hidden
        table = self.table
        table.clear()
        for name, result in self.comparison.results.items():
            cells = row_cells(result, self.comparison.recall[name])
            if self.narrow:
                cells = [cell for (key, _), cell in zip(COLUMNS, cells, strict=True) if key in NARROW]
            table.add_row(*cells, key=name, height=None)
        table.display = True
        table.focus()
        notes = Text()
        for name, result in self.comparison.results.items():
            if result.message:
                notes.append(f"{name}: {result.message}\n", style="dim")
        befores = {result.original_token_count for result in self.comparison.results.values()}
        if len(befores) == 1 and (note := before_note(self.loaded, befores.pop())):
            notes.append(f"{note}.\n", style="dim")
        notes.append("fact recall: the facts of the whole history found in the whole new history, measured the "
                      "same way for both.  Enter / a: preview the selected one (a there applies it).\n", style="dim")
        notes.append("The same from the command line (the app always compacts, even below the threshold, "
                     "hence --force): ", style="dim")
        notes.append(visible(self.cli_command(), one_line=True))
        self.query_one("#compare-notes", Static).update(notes)

    def cli_command(self) -> str:
        """``compact --compare`` with the options this run used."""
        words = ["session-inspector", "compact", shlex.quote(str(self.loaded.session.path)), "--compare", "--force"]
        if self.loaded.split_kind(self.split) != "reference":
            words += ["--split", str(self.split)]
        if self.request.target is not None:
            words += ["--target", f"{self.request.target:g}"]
        app = self.inspector
        if app.model:
            words += ["--model", shlex.quote(app.model)]
        if app.threshold is not None:
            words += ["--threshold", f"{app.threshold:g}"]
        provider = self.request.provider
        if provider != "auto":
            words += ["--provider", provider]
        return " ".join(words)

    def worker_changed(self, worker: Worker[object], state: WorkerState) -> None:
        if worker.group != COMPARE_GROUP or state != WorkerState.ERROR or isinstance(worker.error, Cancelled):
            return
        self.query_one("#compare-label", Label).update(Text(f"The comparison failed: {worker.error}", style="red"))
        self.query_one("#compare-bar", ProgressBar).remove()

    @property
    def selected(self) -> str | None:
        if self.comparison is None or not self.table.row_count:
            return None
        key = self.table.coordinate_to_cell_key(self.table.cursor_coordinate).row_key.value
        return str(key) if key is not None else None

    def action_open(self) -> None:
        name, comparison = self.selected, self.comparison
        if name is None or comparison is None:
            return
        self._open_preview(comparison.results[name], self.split, self.loaded, comparison.recall[name])

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        self.action_open()

    def action_back(self) -> None:
        if self.comparison is None:
            self.workers.cancel_group(self, COMPARE_GROUP)
            self.notify("Comparison cancelled.", severity="warning")
        self.dismiss(None)
