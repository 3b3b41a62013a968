"""A compaction's view of a loaded session: what ``analyze`` measured, and each turn's content read once.

``analyze`` has already measured every turn (quarter tokens, JSON length),
planned the tool-output budget and found the reference's split after it.
``Planned`` carries those figures to ``compress``, which reuses them instead
of measuring the history again; they are valid for the very list of turns
they were computed on (``Planned.covers``).

``HistoryReader`` reads the contents of a session's turns in one pass, in
order, with a progress report and a cancellation check every 1,024 turns,
and takes the status Gemini CLI recorded for each tool call from the same
record (``statuses.note_statuses``).  On a big recording each record is
parsed once and not kept (the turns are built from it as ``history``
builds them; the contents read are equal to the turns', not the same
objects), and on the command line a forked child reads the later part at
the same time (``session.reader.in_two_processes``, as the loader does).
Both happen once per reader, whoever asks first.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from inspector.compaction.budget import Truncation, output_file_name, plan_budget, truncated_content
from inspector.compaction.statuses import ToolStatuses, note_statuses, session_workspace, tool_statuses
from inspector.compaction.view import SplitColumns
from inspector.jsjson import js_json_len
from inspector.progress import SILENT, Reporter
from inspector.session.figures import response_figures, response_text
from inspector.session.history import message_contents
from inspector.session.reader import in_two_processes, second_process
from inspector.session.records import peek
from inspector.tokens import content_parts, parts_quarters

if TYPE_CHECKING:
    from inspector.analysis import Analysis
    from inspector.session.history import Turn
    from inspector.session.loader import Session

READING = "reading turns"
TICK = 1024  # turns between progress reports and cancellation checks
PARALLEL_MIN_TURNS = 10_000  # below this a second process costs more than it saves


def fork_allowed(work: int, minimum: int) -> bool:
    """Whether ``work`` units may be shared with a forked child: enough of them, a second CPU, a
    single-threaded process (the command line; forking the app's threads is not safe), and no
    ``SESSION_INSPECTOR_SERIAL``."""
    return work >= minimum and second_process() == "fork"


@dataclass(frozen=True)
class Planned:
    """The figures ``analyze`` computed for ``turns``, for ``compress`` to reuse.

    ``truncations`` is the tool-output budget planned with the output folder
    ``output_folder`` and the truncation numbers starting at
    ``first_truncation_id`` (the analysis's: 1, as Gemini CLI numbers them),
    for the token limit and recorded prompt the analysis had.
    """

    turns: Sequence[Turn]
    prefix_quarters: Sequence[int]  # quarter tokens of the turns before i
    json_chars: Sequence[int]
    truncations: Sequence[Truncation]
    compress_split_point: int  # the reference's split after the budget
    split_candidates: Sequence[int]
    agentic_candidates: Sequence[int]
    columns: SplitColumns  # the split's figures in the view compression reads (``compaction.view``)
    token_limit: int
    recorded_prompt_tokens: int | None
    output_folder: str
    first_truncation_id: int = 1

    def covers(self, history: object) -> bool:
        """These figures are of ``history`` (the very list they were computed on)."""
        return history is self.turns

    def fits(self, count: int, *, token_limit: int, recorded_prompt_tokens: int | None, output_folder: str) -> bool:
        """``compress`` would plan the same budget: as many turns, the same limit, prompt and folder."""
        return (count == len(self.json_chars) and token_limit == self.token_limit
                and (recorded_prompt_tokens or 0) == (self.recorded_prompt_tokens or 0)
                and output_folder == self.output_folder)

    def numbered_from(self, first_id: int, contents: Sequence[dict[str, Any]], max_chars: int) -> Planned:
        """These figures with the saved outputs numbered from ``first_id``: the budget planned again
        over ``contents`` (a name's length is in its excerpt, so the figures of what is cut, and then
        what is cut, may change with it); what the budget does not touch is reused."""
        if first_id == self.first_truncation_id:
            return self
        folder, shift = self.output_folder, first_id - 1

        def text_of(i: int, j: int) -> str:
            return response_text(contents[i]["parts"][j]["functionResponse"]["response"])

        responses = [response_figures(content_parts(c)) for c in contents]
        truncations = plan_budget(responses, text_of, lambda tool, seq: folder + output_file_name(tool, seq + shift),
                                  max_chars)
        return replace(self, truncations=truncations, first_truncation_id=first_id)

    def split_after_budget(self, truncated: Sequence[dict[str, Any]]) -> int:
        """The reference's split of ``truncated``, the history after this budget."""
        if self.first_truncation_id == 1:
            return self.compress_split_point  # the analysis's
        deltas = {turn: js_json_len(truncated[turn]) - self.json_chars[turn]
                  for turn in {t.turn for t in self.truncations if t.changes_json}}
        return self.columns.split(deltas)

    def quarters(self, start: int, stop: int) -> int:
        return self.prefix_quarters[stop] - self.prefix_quarters[start]

    def budget_changes(self, truncated: Sequence[dict[str, Any]]) -> dict[int, int]:
        """Turn -> quarter tokens the budget added to it (negative: removed), in ``truncated``, the
        history after this budget: only the turns it changed are measured."""
        return {turn: parts_quarters(content_parts(truncated[turn])) - self.quarters(turn, turn + 1)
                for turn in {t.turn for t in self.truncations if not unchanged(t)}}

    def valid_splits(self) -> list[int]:
        """Where the kept part may start: the reference's candidates and the agentic ones."""
        return sorted({*self.split_candidates, *self.agentic_candidates})

    def agentic_weights(self, truncated: Sequence[dict[str, Any]]) -> list[int]:
        """Each turn's JSON length after the budget (only the turns it changed are measured again)."""
        weights = list(self.json_chars)
        for truncation in self.truncations:
            if truncation.changes_json:
                weights[truncation.turn] = js_json_len(truncated[truncation.turn])
        return weights


def planned(analysis: Analysis, output_folder: str) -> Planned:
    return Planned(
        turns=analysis.turns, prefix_quarters=analysis.prefix_quarters, json_chars=analysis.json_chars,
        truncations=analysis.truncations, compress_split_point=analysis.compress_split_point,
        split_candidates=analysis.candidates, agentic_candidates=analysis.agentic_candidates,
        columns=analysis.split_columns,
        token_limit=analysis.token_limit, recorded_prompt_tokens=analysis.recorded_prompt_tokens,
        output_folder=output_folder,
    )


def unchanged(truncation: Truncation) -> bool:
    """The budget puts the whole output back in the very shape it had: the turn stays as it is."""
    return not truncation.cut and not truncation.changes_json


def budget_applied(contents: Sequence[dict[str, Any]], truncations: Sequence[Truncation]) -> list[dict[str, Any]]:
    """``contents`` after the planned budget: what ``budget.apply_budget`` returns (equal turns), without
    planning it again; a turn the budget leaves equal stays the same object."""
    result = list(contents)
    by_turn: dict[int, list[Truncation]] = {}
    for truncation in truncations:
        if not unchanged(truncation):
            by_turn.setdefault(truncation.turn, [])
    for truncation in truncations:
        if truncation.turn in by_turn:
            by_turn[truncation.turn].append(truncation)
    for i, cuts in by_turn.items():
        result[i] = truncated_content(contents[i], cuts)
    for i, content in enumerate(result):
        if content.get("parts") is None:  # the reference rebuilds every turn as {...content, parts: [...]}
            result[i] = {**content, "parts": []}
    return result


@dataclass(frozen=True)
class ReadHistory:
    contents: list[dict[str, Any]]
    statuses: ToolStatuses


class HistoryReader:
    """The contents of a session's turns and the recorded status of each tool result, read once."""

    def __init__(self, session: Session, turns: Sequence[Turn], weights: Sequence[int] | None = None) -> None:
        self._session = session
        self._turns = turns
        self._weights = weights  # each turn's JSON length (about its bytes), to share the reading out
        self._read: ReadHistory | None = None
        self._lock = threading.Lock()

    @property
    def turns(self) -> Sequence[Turn]:
        return self._turns

    def read(self, reporter: Reporter = SILENT) -> ReadHistory:
        """Every turn's content (the same objects the turns hold) and the statuses; the first call reads."""
        with self._lock:
            if self._read is None:
                self._read = self._read_all(reporter)
            return self._read

    def _read_all(self, reporter: Reporter) -> ReadHistory:
        turns = self._turns
        total = len(turns)
        reporter.check()
        reporter.report(READING, 0, total)
        session = self._session
        if session.contents is not None or session.turn_index is None:
            # a checkpoint, or a file small enough that its turns hold their contents already
            held = [t.content for t in turns]
            statuses = tool_statuses(session, turns)
            reporter.report(READING, total, total)
            return ReadHistory(held, statuses)
        # A big recording: each record is parsed once (and not kept), and both turns a model
        # message with tool calls becomes are built from that one parse.  On the command line
        # the later part is read at the same time in a forked child (see ``fork_allowed``).
        middle = self._middle()
        if middle is None:
            contents, found, calls, displays = self._read_range(0, total, reporter)
        else:
            (contents, found, calls, displays), (later, later_found, later_calls, later_displays) = in_two_processes(
                lambda: self._read_range(0, middle, reporter), lambda: self._read_range(middle, total, SILENT))
            contents.extend(later)
            found.update(later_found)
            calls.update(later_calls)
            displays.update(later_displays)
        reporter.report(READING, total, total)
        return ReadHistory(contents, ToolStatuses(found, calls, displays, session_workspace(session)))

    def _middle(self) -> int | None:
        """Where a forked child's share of the turns begins (None: read them all here).

        The child also marshals what it read, so it takes a little less than half of the bytes."""
        weights = self._weights
        if weights is None or len(weights) != len(self._turns) or not fork_allowed(len(weights), PARALLEL_MIN_TURNS):
            return None
        goal, seen = sum(weights) * 0.55, 0
        for i, weight in enumerate(weights):
            seen += weight
            if seen >= goal:
                return i + 1 if 0 < i + 1 < len(weights) else None
        return None

    def _read_range(self, start: int, stop: int, reporter: Reporter) -> tuple[
            list[dict[str, Any]], dict[tuple[int, int], str], dict[tuple[int, str], str], dict[tuple[int, int], str]]:
        """The contents of turns ``start`` to ``stop``, their tool statuses and their results' display
        texts (keyed by turn index)."""
        turns = self._turns
        messages = self._session.messages
        total = len(turns)
        contents: list[dict[str, Any]] = []
        by_part: dict[tuple[int, int], str] = {}
        by_call: dict[tuple[int, str], str] = {}
        displays: dict[tuple[int, int], str] = {}
        built: list[tuple[dict[str, Any], bool]] = []
        record: dict[str, Any] = {}
        at = -1
        for position in range(start, stop):
            if not position % TICK and position:
                reporter.check()
                reporter.report(READING, position, total)
            turn = turns[position]
            index = turn.message_index
            if index is None:
                contents.append(turn.content)
                continue
            if index != at:
                record, at = peek(messages, index), index
                built = message_contents(record)
            contents.append(built[1 if turn.is_tool_result else 0][0])
            if "toolCalls" in record:
                note_statuses(record, position, turn.is_tool_result, by_part, by_call, displays)
        return contents, by_part, by_call, displays
