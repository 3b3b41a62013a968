"""A whole read made ready to be followed live: its turn index as the columns live versions share."""

from __future__ import annotations

from dataclasses import replace

from inspector.analysis import Analysis
from inspector.session import Session
from inspector.session.turns import TurnList, lazy_turns


def shared_columns(session: Session, analysis: Analysis) -> tuple[Session, Analysis]:
    """A whole read of a recording, and its analysis, with its turn index's columns made into the columns
    live versions share (``session.columns.Column``), for a face that follows the file: the first
    append then copies a chunk a column, and the read's lists are let go of (the app calls it in the
    worker that reads, where they would otherwise be copied ahead of the first append and held beside
    it).  Any other session, or one whose columns are shared already, is given back as it is."""
    index = session.turn_index
    if index is None or index.shares_columns or not isinstance(analysis.turns, TurnList):
        return session, analysis
    shared = replace(session, turn_index=index.copy())
    figures = shared.turn_index
    assert figures is not None
    return shared, replace(analysis, turns=lazy_turns(shared), quarters=figures.quarters,
                           json_chars=figures.json_lengths, kinds=figures.kinds, recorded=figures.usage)
