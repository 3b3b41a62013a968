"""Where every token goes: per-turn figures, totals and split points.

``analyze`` computes everything the CLI and the app show, once; stepping the
split afterwards is O(1) through prefix sums.  Nothing here writes to disk.
"""

from __future__ import annotations

import bisect
import os
from array import array
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from itertools import accumulate
from pathlib import Path
from typing import Any

from inspector.compaction.agentic import AnsweredCalls, agentic_pass
from inspector.compaction.budget import (
    TOOL_OUTPUTS_DIR,
    Truncation,
    TruncationPlan,
    output_file_name,
    plan_budget,
    truncate_chars,
    truncated_content,
)
from inspector.compaction.view import HistoryView, SplitColumns, split_columns
from inspector.context import ContextFigures, Verdict, environment_quarters, environment_turn, verdict
from inspector.jsjson import js_json_len
from inspector.session import Session, Turn
from inspector.session.errors import LoadWarning
from inspector.session.figures import USAGE_KEYS, UsageColumn, content_figures, response_text, turn_kind, usage_of
from inspector.session.loader import paused_gc
from inspector.session.turn_index import TurnIndex, listed
from inspector.session.turns import TurnList, history
from inspector.session.usage_store import NO_USAGE
from inspector.tokens import DEFAULT_THRESHOLD, token_limit

__all__ = ["Analysis", "Rows", "analyze", "analyze_turns", "project_temp_dir", "row_batches", "turn_kind"]


def project_temp_dir(session_path: Path) -> Path:
    """``~/.gemini/tmp/<project>`` for a file under its ``chats/`` folder, named as the file is (made
    absolute, symlinks kept): Gemini CLI writes this folder into the text of a masked or cut tool
    output from the home folder as named, so a resolved path (longer, shorter) counts other tokens."""
    parent = Path(os.path.abspath(session_path)).parent
    if parent.name == "chats":
        return parent.parent
    if parent.parent.name == "chats":  # a sub-agent's chats/<parent-id>/<id>.jsonl
        return parent.parent.parent
    return parent


@dataclass
class Analysis:
    """Every figure about one history; the split can be moved afterwards."""

    turns: Sequence[Turn]  # a list, or the turns of a recording made when asked for (session.turns.TurnList)
    quarters: Sequence[int]
    json_chars: Sequence[int]
    candidates: list[int]
    split_point: int
    compress_split_point: int
    truncations: Sequence[Truncation]  # a list, or a live.ShiftedTruncations after an append
    token_limit: int
    threshold: float
    model: str | None
    recorded: UsageColumn
    split_columns: SplitColumns = field(repr=False)  # where the split may go, in the view compression reads
    warnings: list[LoadWarning] = field(default_factory=list)
    kinds: Sequence[str] = field(default_factory=list)  # turn_kind of every turn
    agentic_candidates: list[int] = field(default_factory=list)  # model turns the kept part may start at
    fresh_from: int = 0  # recorded usage before this turn predates the last compaction
    environment_quarters: int = 0  # the environment-context turn Gemini CLI sends before the history
    # which call each response answers, as the agentic pass paired them (the breakdown reads it; None: not kept)
    answered_calls: AnsweredCalls | None = field(default=None, repr=False)
    # deciding.twice_held_quarters, when a live extension kept it up to date (None: worked out when asked)
    twice_held: int | None = field(default=None, repr=False, compare=False)
    _prefix_quarters: array[int] = field(default_factory=lambda: array("q"), repr=False)  # machine integers

    def __post_init__(self) -> None:
        if len(self._prefix_quarters) != len(self.quarters) + 1:  # not given (``inspector.live.extend`` keeps them)
            self._prefix_quarters = array("q", accumulate(self.quarters, initial=0))
        if len(self.kinds) != len(self.turns):
            self.kinds = [turn_kind(t.content) for t in self.turns]

    @property
    def view(self) -> HistoryView:
        """How Gemini CLI's compression reads the history (``compaction.view``)."""
        return self.split_columns.view

    # -- totals ---------------------------------------------------------------
    @property
    def total_estimated_tokens(self) -> int:
        """The reference's estimate over all parts at once (floor of the sum)."""
        return self._prefix_quarters[-1] // 4

    @property
    def prefix_quarters(self) -> array[int]:
        """``prefix_quarters[i]``: the quarter tokens of the turns before ``i``."""
        return self._prefix_quarters

    def turn_tokens(self, index: int) -> int:
        return self.quarters[index] // 4

    def turn_share(self, index: int) -> float:
        """A turn's share of the history, as the share column of both faces' tables gives it: its
        estimate over the history's (the table's total; the environment turn is no row of it)."""
        total = self.total_estimated_tokens
        return self.turn_tokens(index) / total if total else 0.0

    @property
    def rows_total(self) -> int:
        """Every turn's estimate added up.  Each is rounded down on its own and the total once
        (as the reference rounds them), so the total can be larger, by less than one token a turn."""
        return sum(q // 4 for q in self.quarters)

    def tokens_between(self, start: int, stop: int) -> int:
        """The estimate over turns ``start..stop-1`` (one floor over the range)."""
        return (self._prefix_quarters[stop] - self._prefix_quarters[start]) // 4

    @property
    def recorded_prompt_tokens(self) -> int | None:
        """The prompt size the API last reported (the newest usage record).

        Usage recorded before the session's last compaction describes the
        history as it was then, not now, so it does not count.
        """
        return last_prompt_tokens(self.recorded, self.fresh_from)

    @property
    def context(self) -> ContextFigures:
        """How full the context is and whether Gemini CLI would compress (``inspector.context``)."""
        estimate = (self.environment_quarters + self._prefix_quarters[-1]) // 4  # one floor, as compress's
        return ContextFigures(self.recorded_prompt_tokens, estimate, self.token_limit, self.threshold,
                              history_tokens=self.total_estimated_tokens)

    @property
    def context_tokens(self) -> int:
        """What decides compression: the last recorded prompt, else the estimate."""
        return self.context.deciding_tokens

    @property
    def verdict(self) -> Verdict:
        """What Gemini CLI would do before the next prompt, unforced (``context.verdict``)."""
        return verdict(self.context, self.compress_split_point)

    @property
    def would_compress(self) -> bool:
        """Would Gemini CLI compress now (automatically, not forced)?"""
        return self.verdict is Verdict.COMPRESS

    # -- stepping the split -----------------------------------------------------
    def step(self, split: int, direction: int) -> int:
        """The next (+1) or previous (-1) candidate from ``split``."""
        if direction > 0:
            pos = bisect.bisect_right(self.candidates, split)
            return self.candidates[pos] if pos < len(self.candidates) else split
        pos = bisect.bisect_left(self.candidates, split) - 1
        return self.candidates[pos] if pos >= 0 else split

    def split_figures(self, split: int) -> dict[str, int | float]:
        """The two sides of ``split``.  The kept figure is the total less the summarised one, so
        the two add up to the history's total wherever they are shown (each floored on its own
        could come to one token less)."""
        total = self.total_estimated_tokens
        summarised = self.tokens_between(0, split)
        kept = total - summarised
        return {
            "split": split,
            "summarised_turns": split,
            "kept_turns": len(self.turns) - split,
            "summarised_tokens": summarised,
            "kept_tokens": kept,
            "kept_share": (kept / total) if total else 0.0,
        }

    def to_json(self, path: Path, fmt: str, session_id: str | None, *, lazy: bool = False) -> dict[str, Any]:
        """The ``analyze --json`` object.  ``lazy``: the two long lists as ``Rows``
        (made while written, see ``commands.common.print_json``), not lists."""
        history = Rows(self._history_batches)
        truncations = Rows(self._truncation_batches)
        return {
            "path": str(path),
            "format": fmt,
            "session_id": session_id,
            "model": self.model,
            "token_limit": self.token_limit,
            "threshold": self.threshold,
            "history_view": self.view.value,
            "history": history if lazy else history.to_list(),
            "total_estimated_tokens": self.total_estimated_tokens,
            "recorded_prompt_tokens": self.recorded_prompt_tokens,
            "context_tokens": self.context_tokens,
            "split_point": self.split_point,
            "split_candidates": self.candidates,
            "agentic_split_candidates": self.agentic_candidates,
            "compress_split_point": self.compress_split_point,
            "would_compress": self.would_compress,
            "verdict": self.verdict.value,  # why not: "below threshold", or "nothing before the split"
            "budget_truncations": truncations if lazy else truncations.to_list(),
            "split": self.split_figures(self.compress_split_point),  # the split every face shows
            "warnings": [w.to_json() for w in self.warnings],
        }

    def _history_batches(self, reuse: bool) -> Iterator[list[dict[str, Any]]]:
        kinds, quarters, chars = listed(self.kinds), listed(self.quarters), listed(self.json_chars)
        found_roles, found_ids = _roles_and_record_ids(self.turns)
        roles, record_ids = listed(found_roles), listed(found_ids)
        # each turn's usage read from the arrays it is held in, a batch at a time as lists (no tuple made per
        # turn: that cost more than the row)
        usage = self.recorded.packed()
        other = usage.held()[2]
        k0, k1, k2, k3, k4, k5 = USAGE_KEYS
        count = len(roles)
        for (start, rows), (_, usages) in zip(row_batches(count, reuse, _HISTORY_ROW),
                                              row_batches(count, reuse, _USAGE_ROW), strict=True):
            batch_slots, first, batch_values = usage.pieces(start, start + len(rows))
            for k in range(len(rows)):
                i = start + k
                row = rows[k]
                row["index"] = i
                row["role"] = roles[i]
                row["record_id"] = record_ids[i]
                row["kind"] = kinds[i]
                row["estimated_tokens"] = quarters[i] // 4
                row["json_chars"] = chars[i]
                slot = batch_slots[k]
                if slot >= 0:  # six whole numbers: Gemini CLI's six keys, in order (see usage_dict)
                    u = usages[k]
                    at = slot - first
                    u[k0], u[k1], u[k2] = batch_values[at], batch_values[at + 1], batch_values[at + 2]
                    u[k3], u[k4], u[k5] = batch_values[at + 3], batch_values[at + 4], batch_values[at + 5]
                    row["recorded"] = u
                    continue
                p = None if slot == NO_USAGE else other[i]
                if type(p) is tuple:  # the six keys in order, not all whole numbers
                    u = usages[k]
                    u[k0], u[k1], u[k2], u[k3], u[k4], u[k5] = p
                    row["recorded"] = u
                else:
                    row["recorded"] = p
            yield rows

    def _truncation_batches(self, reuse: bool) -> Iterator[list[dict[str, Any]]]:
        truncations = self.truncations
        plan = truncations if isinstance(truncations, TruncationPlan) else None
        for start, rows in row_batches(len(truncations), reuse, _TRUNCATION_ROW):
            for k in range(len(rows)):
                row = rows[k]
                tr = plan.kept_at(start + k) if plan is not None else truncations[start + k]
                if tr is None:  # an output the plan keeps whole, read from its columns (no Truncation made)
                    assert plan is not None
                    turn, tool, tokens, output_file = plan.whole_at(start + k)
                    row["turn"] = turn
                    row["tool"] = tool
                    row["original_tokens"] = tokens
                    row["new_tokens"] = tokens
                    row["output_file"] = output_file
                    continue
                row["turn"] = tr.turn
                row["tool"] = tr.tool
                row["original_tokens"] = tr.original_tokens
                row["new_tokens"] = tr.new_tokens
                row["output_file"] = tr.output_file
            yield rows


def _roles_and_record_ids(turns: Sequence[Turn]) -> tuple[Sequence[str], Sequence[str | None]]:
    """Every turn's role and record id; a recording's from the reader's columns, without making its
    turns (each turn made costs more than its row)."""
    if isinstance(turns, TurnList):
        return turns.roles_and_record_ids()
    return [t.role for t in turns], [t.record_id for t in turns]


_HISTORY_ROW: dict[str, Any] = dict.fromkeys(
    ("index", "role", "record_id", "kind", "estimated_tokens", "json_chars", "recorded"))
_USAGE_ROW: dict[str, Any] = dict.fromkeys(USAGE_KEYS)
_TRUNCATION_ROW: dict[str, Any] = dict.fromkeys(("turn", "tool", "original_tokens", "new_tokens", "output_file"))


def row_batches(count: int, reuse: bool, blank: dict[str, Any]) -> Iterator[tuple[int, list[dict[str, Any]]]]:
    """``(start, rows)`` for each batch of ``count`` rows: copies of ``blank`` for the caller
    to fill, the same objects batch after batch with ``reuse`` (see ``Rows``)."""
    rows: list[dict[str, Any]] = []
    for start in range(0, count, ROWS_BATCH):
        size = min(ROWS_BATCH, count - start)
        if not reuse or not rows:
            rows = [dict(blank) for _ in range(size)]
        yield start, rows if size == len(rows) else rows[:size]


ROWS_BATCH = 4096


class Rows:
    """A long list of JSON objects, made in batches while it is written.

    ``batches(reuse)`` yields lists of objects; with ``reuse`` the same list
    and objects are filled again for the next batch (170,000 rows cost no
    more than 4,096 objects), so each batch must be written before the next
    is asked for.  ``to_list`` gives every row as an object of its own.
    """

    def __init__(self, batches: Callable[[bool], Iterator[list[dict[str, Any]]]]) -> None:
        self._batches = batches

    def batches(self) -> Iterator[list[dict[str, Any]]]:
        return self._batches(True)

    def to_list(self) -> list[dict[str, Any]]:
        return [row for batch in self._batches(False) for row in batch]


def last_prompt_tokens(recorded: UsageColumn, start: int) -> int | None:
    """The input tokens of the newest usage record from turn ``start`` on.

    A record of no input tokens is skipped: no request is empty, so it is the
    zeros Gemini CLI writes before a reply's usage arrives (a turn cut off),
    and the prompt it last measured is the one before."""
    for i in range(len(recorded) - 1, start - 1, -1):
        found = recorded.input_tokens(i)
        if found is not None and found > 0:
            return found
    return None


def analyze_turns(
    turns: Sequence[Turn],
    messages: Sequence[dict[str, Any]] | None = None,
    *,
    model: str | None = None,
    threshold: float = DEFAULT_THRESHOLD,
    temp_dir: Path | None = None,
    warnings: list[LoadWarning] | None = None,
    index: TurnIndex | None = None,
    fresh_from: int = 0,
    environment_quarters: int = 0,
    view: HistoryView = HistoryView.JOINED,
) -> Analysis:
    """Analyse turns; ``index`` (their figures) when the reader measured them already; ``view``: how
    Gemini CLI's compression reads them, which decides the split."""
    if index is None:
        index = TurnIndex.from_rows([
            content_figures(
                t.content,
                usage=usage_of(messages[t.message_index])
                if messages is not None and t.message_index is not None and not t.is_tool_result
                and t.role == "model" else None,
            )
            for t in turns
        ])
    json_chars = index.json_lengths
    columns = split_columns(view, index, lambda i: turns[i].content)
    split_point = columns.split()
    candidates = columns.candidates()
    recorded = index.usage
    agentic = agentic_pass(listed(index.roles), index.calls, index.answers)

    limit = token_limit(model)
    last_prompt = last_prompt_tokens(recorded, fresh_from) or 0
    folder = str((temp_dir or Path(".")) / TOOL_OUTPUTS_DIR) + os.sep
    responses = columns.sent_responses(index, lambda i: turns[i].content)

    def text_of(i: int, j: int) -> str:
        return response_text(turns[i].content["parts"][j]["functionResponse"]["response"])

    truncations = plan_budget(
        responses, text_of, lambda tool, seq: folder + output_file_name(tool, seq), truncate_chars(limit, last_prompt)
    )
    deltas = json_deltas(turns, json_chars, truncations)
    compress_split = columns.split(deltas) if deltas else split_point

    return Analysis(
        turns=turns,
        quarters=index.quarters,
        json_chars=json_chars,
        candidates=candidates,
        split_point=split_point,
        compress_split_point=compress_split,
        truncations=truncations,
        token_limit=limit,
        threshold=threshold,
        model=model,
        recorded=recorded,
        warnings=list(warnings or []),
        kinds=index.kinds,
        agentic_candidates=agentic.candidates,
        answered_calls=agentic.answered,
        fresh_from=fresh_from,
        environment_quarters=environment_quarters,
        split_columns=columns,
    )


def json_deltas(turns: Sequence[Turn], json_chars: Sequence[int], truncations: Iterable[Truncation]) -> dict[int, int]:
    """How much the tool-output budget changes the JSON length of each turn whose JSON it changes
    (new length - old): only those turns' contents are built."""
    changed: dict[int, list[Truncation]] = {}
    if isinstance(truncations, TruncationPlan):  # read from its columns: only these turns' truncations made
        for j in truncations.changing_json():
            changed.setdefault(truncations.position(j)[0], [])
        if changed:
            for j in range(len(truncations)):
                turn = truncations.position(j)[0]
                if turn in changed:
                    changed[turn].append(truncations[j])
    else:
        for truncation in truncations:
            if truncation.changes_json:
                changed.setdefault(truncation.turn, [])
        for truncation in truncations:
            if truncation.turn in changed:
                changed[truncation.turn].append(truncation)
    return {i: js_json_len(truncated_content(turns[i].content, cut)) - json_chars[i] for i, cut in changed.items()}


def usage_fresh_from(session: Session, turns: Sequence[Turn]) -> int:
    """The first turn whose recorded usage postdates the session's last compaction.

    A compacted history starts with the snapshot turn; the records kept
    through that compaction still carry the usage of the longer history they
    were part of.  In a recording, fresh records come on later lines than the
    checkpoint that wrote the snapshot; in a legacy file, with later timestamps.
    """
    if not turns or turns[0].role != "user" or turns[0].message_index is None:
        return 0
    parts = turns[0].content.get("parts") or []
    first = parts[0] if parts and isinstance(parts[0], dict) else {}
    if not str(first.get("text", "")).lstrip().startswith("<state_snapshot>"):
        return 0
    snapshot_id = turns[0].record_id
    if session.format == "jsonl" and snapshot_id in session.message_lines:
        line = session.message_lines[snapshot_id]
        return next((t.index for t in turns if session.message_lines.get(t.record_id or "", 0) > line), len(turns))
    stamp = session.messages[turns[0].message_index].get("timestamp")
    if not isinstance(stamp, str):
        return 0
    return next((t.index for t in turns if t.message_index is not None
                 and str(session.messages[t.message_index].get("timestamp", "")) > stamp), len(turns))


def analyze(session: Session, *, model: str | None = None, threshold: float | None = None,
            view: HistoryView = HistoryView.JOINED) -> Analysis:
    """Analyse a loaded session (``model`` / ``threshold`` override what it says; ``view``: how the
    configured model makes compression read the history, ``compaction.view.history_view``)."""
    with paused_gc():
        turns = history(session)
        return analyze_turns(
            turns,
            session.messages if session.contents is None else None,
            model=model or session.model,
            threshold=threshold if threshold is not None else DEFAULT_THRESHOLD,
            temp_dir=project_temp_dir(session.path),
            warnings=session.warnings,
            index=session.turn_index,
            fresh_from=usage_fresh_from(session, turns),
            environment_quarters=environment_quarters(environment_turn(session)),
            view=view,
        )
