"""Figures the session view shows beside the analysis: masking and cost.

Made in a worker once the session is on screen (``note_session``: planning
masking and pricing read every turn, seconds on a big session; until they are
made the view shows ``…`` in the masking column and no cost column, and the
detail pane says they are being worked out) and remembered by
the Analysis they belong to, so a widget that holds an Analysis finds them
with one call (``noted``).  ``analyze --json`` calls the same core functions
(``masking_of``, ``cost_of``).
"""

from __future__ import annotations

import threading
from pathlib import Path

from inspector.analysis import Analysis
from inspector.compaction.masking import MaskingPlan, masking_of
from inspector.pricing.cost import SessionCost, cost_of, resolve_cost
from inspector.session import Session

# Held strongly (a compiled Analysis takes no weak reference): the newest few only, which
# covers the session on screen and the one it replaces on a reload.
_REMEMBERED = 3


class Noted:
    """What was noted for one analysis."""

    __slots__ = ("_analysis", "as_of", "cost", "masking", "model", "session_id", "session_path")

    def __init__(self, analysis: Analysis, masking: MaskingPlan, cost: SessionCost, session: Session,
                 as_of: int | None = None) -> None:
        self._analysis = analysis
        self.masking = masking
        self.cost = cost
        self.as_of = as_of  # carried over from an earlier version: the turns they were worked out for
        self.model = analysis.model
        self.session_path: Path = session.path
        self.session_id = session.session_id

    def belongs_to(self, analysis: Analysis) -> bool:
        return self._analysis is analysis


_noted: dict[int, Noted] = {}
_released: list[Noted] = []  # forgotten, with the analyses they hold: let go by ``release_notes``' caller
_lock = threading.Lock()


def _remember(found: Noted, analysis: Analysis) -> None:
    with _lock:
        _noted[id(analysis)] = found
        while len(_noted) > _REMEMBERED:
            _released.append(_noted.pop(next(iter(_noted))))


def release_notes() -> list[Noted]:
    """The notes forgotten since the last call (the app lets them go in a worker: an old analysis
    holds long lists, and freeing them should not delay what is drawn next)."""
    global _released
    with _lock:
        released, _released = _released, []
    return released


def note_session(analysis: Analysis, session: Session) -> Noted:
    """Plan masking and price the session for a fresh analysis (call from the worker)."""
    masking = masking_of(session, analysis.turns, project_dir=Path.cwd())
    cost = cost_of(session, analysis, resolve_cost(None, project_dir=Path.cwd()))
    found = Noted(analysis, masking, cost, session)
    _remember(found, analysis)
    return found


def noted(analysis: Analysis) -> Noted | None:
    """What was noted for ``analysis`` (None when it was made elsewhere, e.g. by a test)."""
    found = _noted.get(id(analysis))
    return found if found is not None and found.belongs_to(analysis) else None


def carry_notes(previous: Analysis, analysis: Analysis, session: Session) -> bool:
    """Show ``previous``'s notes for ``analysis`` until its own are made (after a live append, the
    view notes it again once the appends pause: planning masking and pricing read every turn)."""
    found = noted(previous)
    if found is None:
        return False
    as_of = found.as_of if found.as_of is not None else len(previous.turns)
    _remember(Noted(analysis, found.masking, found.cost, session, as_of), analysis)
    return True


def carried_words(found: Noted) -> str:
    """What a person is told of notes carried over from an earlier version ("" for notes of their own)."""
    if found.as_of is None:
        return ""
    return (f"(worked out for the first {found.as_of:,} turns, before the latest appends; "
            "again when they pause)")
