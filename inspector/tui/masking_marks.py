"""Tool-output masking in the session view: a mark in the turn table, lines in the detail.

The plan (``inspector.compaction.masking``) is made once per analysis, in the
loading worker (``tui/session_notes.py``); the table and the detail pane ask
for what it means for a turn with one call each.

Marks: ``■`` an output already masked (a ``<tool_output_masked>`` marker),
``□`` an output the next turn will mask.
"""

from __future__ import annotations

from rich.console import RenderableType
from rich.style import Style
from rich.text import Text

from inspector.analysis import Analysis
from inspector.compaction.masking import MaskingPlan
from inspector.compaction.saved_outputs import read_saved_output
from inspector.format import masking_words, plural, visible
from inspector.tui.session_notes import carried_words, noted

MASKED_MARK = "■"
WILL_MASK_MARK = "□"
_MASKED_STYLE = Style(color="bright_black", bold=True)
_WILL_MASK_STYLE = Style(color="magenta", bold=True)


def masking_plan(analysis: Analysis) -> MaskingPlan | None:
    """The plan noted for ``analysis`` (None when none was made, e.g. in a test's own analysis)."""
    found = noted(analysis)
    return found.masking if found else None


def masking_cell(analysis: Analysis, index: int) -> tuple[str, Style | None]:
    """One character for the turn table: masked already, masked next turn, or a space."""
    plan = masking_plan(analysis)
    if plan is None:
        return " ", None
    if plan.parts_of(index):
        return WILL_MASK_MARK, _WILL_MASK_STYLE
    if plan.markers_of(index):
        return MASKED_MARK, _MASKED_STYLE
    return " ", None


def masking_lines(analysis: Analysis, index: int) -> list[RenderableType]:
    """Lines for the detail pane: what masking did to this turn and will do next turn,
    and the saved full text behind each marker (or that it is gone)."""
    found = noted(analysis)
    if found is None:
        return []
    plan = found.masking
    lines: list[RenderableType] = []
    upcoming = plan.parts_of(index)
    if upcoming:
        freed = sum(p.saved for p in upcoming)
        lines.append(Text.assemble(
            (f"{WILL_MASK_MARK} ", _WILL_MASK_STYLE),
            (f"The next turn masks {plural(len(upcoming), 'output')} here, freeing {plural(freed, 'token')} "
             f"(in all, {masking_words(plan.masked_count, plan.tokens_saved)}).", "bold"),
        ))
    for marker in plan.markers_of(index):
        saved = read_saved_output(marker, found.session_path, found.session_id)
        head = Text.assemble((f"{MASKED_MARK} ", _MASKED_STYLE),
                             (f"Part {marker.part} ({visible(marker.tool, one_line=True)}) was masked by "
                              "Gemini CLI. ", "bold"))
        if saved.text is None:
            head.append(visible(saved.note, one_line=True))
            lines.append(head)
            continue
        head.append(f"Its full output, from {visible(str(saved.path), one_line=True)}:")
        lines.append(head)
        if saved.note:
            lines.append(Text(visible(saved.note), style="dim"))
        lines.append(Text(visible(saved.text)))
    if lines and found.as_of is not None:
        lines.append(Text(carried_words(found), style="dim"))
    return lines
