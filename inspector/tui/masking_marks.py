"""Tool-output masking in the session view: a mark in the turn table, lines in the detail.

The plan (``inspector.compaction.masking``) is made once per analysis, in the
loading worker (``note_masking``), and remembered here by the Analysis it
belongs to; the table and the detail pane ask for it with one call each.

Marks: ``■`` an output already masked (a ``<tool_output_masked>`` marker),
``□`` an output the next turn will mask.
"""

from __future__ import annotations

import threading
import weakref
from pathlib import Path

from rich.console import RenderableType
from rich.style import Style
from rich.text import Text

from inspector.analysis import Analysis
from inspector.compaction.masking import MaskingPlan, masking_of, read_saved_output
from inspector.format import visible
from inspector.session import Session

MASKED_MARK = "■"
WILL_MASK_MARK = "□"
_MASKED_STYLE = Style(color="bright_black", bold=True)
_WILL_MASK_STYLE = Style(color="magenta", bold=True)
_REMEMBERED = 8


class _Noted:
    __slots__ = ("analysis", "plan", "session_id", "session_path")

    def __init__(self, analysis: Analysis, plan: MaskingPlan, session_path: Path, session_id: str | None) -> None:
        self.analysis = weakref.ref(analysis)
        self.plan = plan
        self.session_path = session_path
        self.session_id = session_id


_noted: dict[int, _Noted] = {}
_lock = threading.Lock()


def note_masking(analysis: Analysis, session: Session) -> MaskingPlan:
    """Plan masking for a freshly analysed session and remember it (call from the worker)."""
    plan = masking_of(session.path, session.session_id, [t.content for t in analysis.turns])
    with _lock:
        _noted[id(analysis)] = _Noted(analysis, plan, session.path, session.session_id)
        while len(_noted) > _REMEMBERED:
            del _noted[next(iter(_noted))]
    return plan


def _found(analysis: Analysis) -> _Noted | None:
    noted = _noted.get(id(analysis))
    return noted if noted is not None and noted.analysis() is analysis else None


def masking_plan(analysis: Analysis) -> MaskingPlan | None:
    """The plan noted for ``analysis`` (None when none was made, e.g. in a test's own analysis)."""
    noted = _found(analysis)
    return noted.plan if noted else None


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


def _tokens(count: int) -> str:
    return f"{count:,} token" + ("" if count == 1 else "s")


def _outputs(count: int) -> str:
    return f"{count:,} output" + ("" if count == 1 else "s")


def masking_lines(analysis: Analysis, index: int) -> list[RenderableType]:
    """Lines for the detail pane: what masking did to this turn and will do next turn,
    and the saved full text behind each marker (or that it is gone)."""
    noted = _found(analysis)
    if noted is None:
        return []
    plan = noted.plan
    lines: list[RenderableType] = []
    upcoming = plan.parts_of(index)
    if upcoming:
        freed = sum(p.saved for p in upcoming)
        lines.append(Text.assemble(
            (f"{WILL_MASK_MARK} ", _WILL_MASK_STYLE),
            (f"The next turn masks {_outputs(len(upcoming))} here, freeing {_tokens(freed)} "
             f"(in all, {_outputs(plan.masked_count)} and {_tokens(plan.tokens_saved)}).", "bold"),
        ))
    for marker in plan.markers_of(index):
        saved = read_saved_output(marker, noted.session_path, noted.session_id)
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
    return lines
