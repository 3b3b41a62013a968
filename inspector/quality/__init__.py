"""Snapshot quality measured independently of the summarisers.

``ground.extract`` reads the facts of a history with code of its own (it
shares nothing with ``compaction.summarisers``); ``grade.grade`` says which
of them a snapshot keeps and which of its clauses the history contradicts.
The app's "Lost facts" tab, ``compact --json`` (``lost_facts``,
``fact_recall``) and ``bench/snapshot_quality.py`` all use these, so the
figure a user sees is not the summariser grading itself.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from inspector.compaction.statuses import NO_STATUSES, ToolStatuses
from inspector.progress import SILENT, Reporter
from inspector.quality.background import Extraction, start
from inspector.quality.grade import Check, FalseClaim, Report, grade, replaced
from inspector.quality.ground import KINDS, Fact, Ground, extract

__all__ = [
    "KINDS", "Check", "Extraction", "Fact", "FalseClaim", "Ground", "HistoryMentions", "Report", "check_history",
    "check_snapshot", "extract", "grade", "history_text", "start",
]


def check_snapshot(
    contents: Sequence[dict[str, Any]],
    snapshot: str,
    statuses: ToolStatuses = NO_STATUSES,
    *,
    replaced_tokens: int | None = None,
    reporter: Reporter = SILENT,
    extraction: Extraction | None = None,
) -> Report:
    """The facts of ``contents`` (the summarised turns) that ``snapshot`` keeps, and its false claims.

    ``extraction``: the facts of ``contents`` already begun (``start``), else they are read now."""
    tokens = replaced(contents) if replaced_tokens is None else replaced_tokens
    ground = extraction.result(reporter) if extraction is not None else extract(contents, statuses, reporter)
    return grade(ground, snapshot, replaced_tokens=tokens, history_text=HistoryMentions(contents))


def check_history(
    contents: Sequence[dict[str, Any]],
    statuses: ToolStatuses,
    snapshot: str,
    kept_turns: Iterable[int],
    reporter: Reporter = SILENT,
    extraction: Extraction | None = None,
) -> Report:
    """The facts of a whole history kept by a new one: turns it copies word for word, and its snapshot."""
    ground = extraction.result(reporter) if extraction is not None else extract(contents, statuses, reporter)
    return grade(ground, snapshot, kept_turns=kept_turns)


class HistoryMentions:
    """``text in mentions``: whether a history's text holds ``text`` (lower-case).  The text is put
    together on the first question (the grader asks only of a path no call of the history named)."""

    def __init__(self, contents: Sequence[dict[str, Any]]) -> None:
        self._contents: Sequence[dict[str, Any]] | None = contents
        self._text = ""

    def __contains__(self, text: object) -> bool:
        if self._contents is not None:
            self._text, self._contents = history_text(self._contents), None
        return isinstance(text, str) and text in self._text


def history_text(contents: Sequence[dict[str, Any]]) -> str:
    """Everything a history says, lower-case: to tell a path it names from one it never does."""
    import json

    return json.dumps(list(contents), ensure_ascii=False).lower()
