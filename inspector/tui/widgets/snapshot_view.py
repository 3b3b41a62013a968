"""Renderables for a compaction result: snapshot sections, section diffs, stages.

The snapshot is model output (untrusted): it is only ever put in ``Text``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.console import Group, RenderableType
from rich.text import Text
from textual.containers import VerticalScroll
from textual.widgets import Static

from inspector.compaction.snapshot import SnapshotDiff, parse
from inspector.compaction.stage_words import stage_table, stages_sum
from inspector.format import Literal, diff_counts

if TYPE_CHECKING:
    from inspector.compaction.staged import StageReport


def snapshot_renderable(text: str | None) -> RenderableType:
    """A snapshot's sections, headed and in order (the raw text if it has none)."""
    if not text:
        return Text("(no snapshot)", style="dim")
    snap = parse(text)
    if not snap.found or not snap.sections:
        return Text(text)
    parts: list[RenderableType] = []
    if snap.preamble.strip():
        parts.append(Text(snap.preamble.strip(), style="dim italic"))
        parts.append(Text(""))
    for section in snap.sections:
        parts.append(Text(section.name, style="bold cyan"))
        lines = section.lines
        body = Text("\n".join(f"  {line}" for line in lines)) if lines else Text("  (empty)", style="dim")
        parts.append(body)
        parts.append(Text(""))
    return Group(*parts)


def diff_renderable(changes: SnapshotDiff, old_label: str, new_label: str) -> RenderableType:
    """Per section: added lines green (+), removed red (-), the rest dim."""
    counts = changes.counts()
    added, removed, unchanged = diff_counts(counts["added"], counts["removed"], counts["unchanged"])
    parts: list[RenderableType] = [
        Text.assemble(
            (f"{old_label} -> {new_label}: ", "bold"),
            (added, "green"), " ", (removed, "red"), (f"  {unchanged}", "dim"),
            ("" if changes.changed else "   (no change)", "dim"),
        ),
        Text(""),
    ]
    colours = {"added": "green", "removed": "red", "changed": "yellow", "unchanged": "dim"}
    for section in changes.sections:
        parts.append(Text.assemble((section.name, "bold cyan"), "  ", (section.status, colours[section.status])))
        body = Text()
        for change in section.changes:
            if change.op == "added":
                body.append(f"+ {change.text}\n", style="green")
            elif change.op == "removed":
                body.append(f"- {change.text}\n", style="red")
            else:
                body.append(f"  {change.text}\n", style="dim")
        parts.append(body if body else Text("  (empty)\n", style="dim"))
    return Group(*parts)


def stages_renderable(stages: list[StageReport]) -> RenderableType:
    """The staged strategy's stages (``stage_words.stage_table``) and what they saved together."""
    if not stages:
        return Text("No stage ran: the history already fits the target.", style="dim")
    foot = Text(stages_sum(stages))  # the line both faces write under the table
    foot.stylize("bold", 0, len("stages:"))
    return Group(stage_table(stages, expand=True), Text(""), foot)


class RenderPane(VerticalScroll):
    """A scrollable pane holding one renderable."""

    DEFAULT_CSS = """
    RenderPane { padding: 0 1; }
    """

    def __init__(self, renderable: RenderableType, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._renderable = Literal(renderable)  # session text: shown, never sent to the terminal

    def compose(self):  # type: ignore[no-untyped-def]
        yield Static(self._renderable, markup=False, classes="pane-body")

    @property
    def body(self) -> Static:
        return self.query_one(".pane-body", Static)
