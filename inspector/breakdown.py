"""Where the context goes: the per-turn estimate split by kind, tool, file and model.

Every part of every turn is measured with the estimate the turn table uses
(``tokens.part_quarters``; a turn's parts add up to its row) and classified by
the reader as it reads the turn (``session.spread``: a column of the turn
index, so nothing is read again here), then counted under the groups it
belongs to:

* **kind**: user text, model text, thoughts, tool calls, tool results,
  injected context (text Gemini CLI writes into a user turn: a snapshot, the
  environment or hook context, the files an ``@path`` pulled in), images, and
  other parts (PDFs, other files, parts of no known shape).  Every part has
  exactly one kind, so the kinds add up to the history's estimate;
* **tool**: a tool's calls (their arguments) and its results, by the name
  the call or result records;
* **file**: what reading, writing and editing one path put into the context:
  the call (its arguments: for a write, the new text) and the result paired
  with it, for a tool whose arguments name one ``file_path``; and the text an
  ``@path`` included;
* **model**: the model turns, by the model their record names.

Each group's figures are summed in quarter tokens and rounded once, so that
groups covering the whole history (the kinds) add up to its total exactly:
each is rounded down, and the tokens the rounding left over go one each to
the groups with the largest fractions (the largest remainder method).  Each
group also says what the split would summarise (turns before it) and keep.
"""

from __future__ import annotations

from array import array
from bisect import bisect_left
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import TYPE_CHECKING, Any

from inspector.compaction.agentic import AnsweredCalls, agentic_pass
from inspector.session import spread
from inspector.session.figures import content_figures, recorded_model
from inspector.session.loader import paused_gc
from inspector.session.spread import KINDS, UNNAMED
from inspector.session.turn_index import TurnIndex, listed
from inspector.session.turns import content_reader

if TYPE_CHECKING:
    from inspector.analysis import Analysis
    from inspector.session import Session, Turn


class Dimension(Enum):
    """What a breakdown groups by (``analyze --by``)."""

    KIND = "kind"
    TOOL = "tool"
    FILE = "file"
    MODEL = "model"


INCLUDED = "@ include"
NO_MODEL = "(not recorded)"
INJECTED = KINDS[spread.INJECTED]


@dataclass(frozen=True)
class Group:
    """One group's share of the history: its tokens, the turns it appears in, and the split's two sides."""

    name: str
    tokens: int
    share: float  # of the history's whole estimate
    turns: tuple[int, ...]  # every turn that holds some of it, in order
    summarised_tokens: int  # in turns before the split
    kept_tokens: int
    summarised_turns: int
    kept_turns: int
    detail: Mapping[str, int] = field(default_factory=dict)  # tool: call/result tokens; file: actions

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "tokens": self.tokens, "share": self.share, "turns": len(self.turns),
            "summarised_tokens": self.summarised_tokens, "kept_tokens": self.kept_tokens,
            "summarised_turns": self.summarised_turns, "kept_turns": self.kept_turns,
        }
        if self.detail:
            data["detail"] = dict(self.detail)
        return data


@dataclass(frozen=True)
class Breakdown:
    """The history's estimate grouped four ways; ``total_tokens`` is the turn table's total."""

    total_tokens: int
    split: int
    turn_count: int
    by_kind: tuple[Group, ...]
    by_tool: tuple[Group, ...]
    by_file: tuple[Group, ...]
    by_model: tuple[Group, ...]

    def groups(self, dimension: Dimension) -> tuple[Group, ...]:
        return {Dimension.KIND: self.by_kind, Dimension.TOOL: self.by_tool,
                Dimension.FILE: self.by_file, Dimension.MODEL: self.by_model}[dimension]

    def to_json(self) -> dict[str, Any]:
        return {
            "total_tokens": self.total_tokens,
            "split": self.split,
            **{f"by_{d.value}": {g.name: g.to_json() for g in self.groups(d)} for d in Dimension},
        }


class _Entry:
    """One group's quarter tokens before and after the split, the turns it appears in (ascending), a
    tool's call and result quarters, and a file's detail (its actions, in the order first added)."""

    def __init__(self, turn: int) -> None:
        self.before = 0
        self.after = 0
        self.last = turn  # (turns[-1], kept apart: reading it back from the list cost more than the rest)
        self.turns: list[int] = [turn]
        self.calls = 0  # (a tool's: the quarters of its calls and of its results)
        self.results = 0
        self.detail: dict[str, int] | None = None

    def add(self, turn: int, quarters: int, split: int) -> None:
        """``quarters`` more in ``turn`` (this turn or a later one)."""
        if turn != self.last:
            self.turns.append(turn)
            self.last = turn
        if turn < split:
            self.before += quarters
        else:
            self.after += quarters

    def grow(self, detail: str, by: int) -> None:
        """Detail ``detail`` grows ``by`` (named even when ``by`` is 0)."""
        details = self.detail
        if details is None:
            details = self.detail = {}
        details[detail] = details.get(detail, 0) + by


class _Tally:
    """Quarter tokens per group, before and after the split, and the turns each appears in (added in
    the order of the turns)."""

    def __init__(self, split: int) -> None:
        self.split = split
        self.found: dict[str, _Entry] = {}

    def add(self, name: str, turn: int, quarters: int) -> _Entry:
        """``quarters`` more of group ``name`` in ``turn``; its entry (to ``grow`` its detail)."""
        entry = self.found.get(name)
        if entry is None:
            entry = self.found[name] = _Entry(turn)
        entry.add(turn, quarters, self.split)
        return entry

    def detail(self, name: str) -> dict[str, int]:
        """Group ``name``'s detail (empty: none)."""
        entry = self.found.get(name)
        return dict(entry.detail) if entry is not None and entry.detail is not None else {}

    def groups(self, whole: int, order: Sequence[str] = ()) -> tuple[Group, ...]:
        tokens = apportion({name: entry.before + entry.after for name, entry in self.found.items()})
        rank = {n: i for i, n in enumerate(order)}
        found = []
        for name, entry in self.found.items():
            summarised = tokens[name] if not entry.after else min(entry.before // 4, tokens[name])
            turns = tuple(entry.turns)
            counted = bisect_left(turns, self.split)  # the turns before the split
            found.append(Group(name, tokens[name], tokens[name] / whole if whole else 0.0, turns,
                               summarised, tokens[name] - summarised, counted, len(turns) - counted,
                               self.detail(name)))
        found.sort(key=lambda g: (-g.tokens, rank.get(g.name, len(rank)), g.name))
        return tuple(found)


def apportion(quarters: Mapping[str, int]) -> dict[str, int]:
    """Whole tokens per group that add up to ``sum(quarters) // 4``: each group's quarters rounded
    down, then one more token each for the groups with the largest remainders (ties: first named)."""
    tokens = {name: q // 4 for name, q in quarters.items()}
    left = sum(quarters.values()) // 4 - sum(tokens.values())
    by_remainder = sorted(quarters, key=lambda n: -(quarters[n] % 4))
    for name in by_remainder[:left]:
        tokens[name] += 1
    return tokens


class _Count:
    """The four tallies of one breakdown, and the file each tool result's call named: each result is
    credited to the file of the call it answers, as the agentic pass paired them (``agentic.AnsweredCalls``:
    ``pairs.Pairing``'s rule, read once for the whole history)."""

    def __init__(self, split: int, call_of: array[int], calls: int) -> None:
        self.split = split
        self.kinds, self.tools, self.files, self.models = _Tally(split), _Tally(split), _Tally(split), _Tally(split)
        self.call_of = call_of  # for each response, in order: the place of the call it answers (-1: none)
        self.paths: list[str | None] = [None] * calls  # each of the ``calls`` calls: the file it names
        self.by_kind: list[_Entry | None] = [None] * len(KINDS)  # each kind's entry in ``kinds``, by its code

    def kind(self, code: int, turn: int, quarters: int) -> None:
        """``quarters`` more of kind ``code`` (``spread.USER_TEXT`` ...) in ``turn``."""
        entry = self.by_kind[code]
        if entry is None:
            self.by_kind[code] = self.kinds.add(KINDS[code], turn, quarters)
        else:
            entry.add(turn, quarters, self.split)

    def call(self, turn: int, quarters: int, name: str, place: int, path: str | None) -> None:
        """A call (its kind is counted apart), the ``place``-th of the history (-1: one with no key):
        its tool, and the file it names."""
        self.tools.add(name, turn, quarters).calls += quarters
        if path is not None:
            if place >= 0:
                self.paths[place] = path
            self.files.add(path, turn, quarters).grow(spread.FILE_ACTIONS.get(name, name), 1)

    def result(self, turn: int, quarters: int, name: str, place: int) -> None:
        """A result (its kind is counted apart), the ``place``-th response of the history (-1: one
        with no key): its tool, and the file its call named (a result recorded twice is counted twice)."""
        self.tools.add(name, turn, quarters).results += quarters
        if place < 0:
            return
        call = self.call_of[place]
        path = self.paths[call] if call >= 0 else None
        if path is not None:
            self.files.add(path, turn, quarters)


def answered_calls(analysis: Analysis, index: TurnIndex) -> AnsweredCalls:
    """Which call each response of ``index`` answers, and each key's turn and name: the analysis's own
    pairs when it paired this index's keys, else the same pass over them now."""
    found = analysis.answered_calls
    if found is None or found.answers is not index.answers:
        found = agentic_pass(index.roles, index.calls, index.answers).answered
        assert found is not None
    return found


def breakdown(analysis: Analysis, models: Sequence[str | None] | None = None, split: int | None = None,
              index: TurnIndex | None = None, read: Callable[[Turn], dict[str, Any]] | None = None) -> Breakdown:
    """The history of ``analysis`` grouped by kind, tool, file and model.  ``models``: the model
    each turn's record names (``turn_models``); ``split``: the split to show (default: the one
    Gemini CLI's compression would use); ``index``: the reader's figures of these turns, whose
    ``spread`` says where each turn's estimate goes (without it each turn is measured again, its
    content read by ``read``: default, kept on the turn)."""
    cut = analysis.compress_split_point if split is None else split
    turns = analysis.turns
    if index is None or len(index) != len(turns):
        index = TurnIndex.from_rows([content_figures(turn.content if read is None else read(turn)) for turn in turns])
    keys = answered_calls(analysis, index)
    count = _Count(cut, keys.call_of, len(keys.call_turns))
    # quarters and roles as lists (compiled, a list is read without a generic lookup per cell); the
    # packed columns read in order, a chunk's values at a time (as lists they would hold every turn's);
    # the calls' and responses' turns and names as the agentic pass noted them (their columns not read)
    quarters, roles = listed(index.quarters), listed(index.roles)
    call_turns, answer_turns = keys.call_turns.tolist(), keys.answer_turns.tolist()  # (as lists: read natively)
    all_calls, all_answers = len(call_turns), len(answer_turns)
    named = len(models) if models is not None else 0
    model_name: str | None = None  # the last model turn's group and its entry (runs of turns name one model)
    model_entry: _Entry | None = None
    first_call = first_answer = 0  # the place in the history of this turn's first call and first response
    with paused_gc():  # the tallies are many objects that live on and form no cycle
        for i, (found, outputs) in enumerate(zip(index.spread, index.outputs, strict=True)):
            while first_call < all_calls and call_turns[first_call] < i:
                first_call += 1
            while first_answer < all_answers and answer_turns[first_answer] < i:
                first_answer += 1
            if isinstance(found, int) and found != spread.RESULTS:
                count.kind(found, i, quarters[i])  # the whole turn one kind
            elif isinstance(found, int):  # tool results, each one of its outputs
                count.kind(spread.TOOL_RESULTS, i, quarters[i])
                last = first_answer + len(outputs)  # (one output for each of the turn's responses)
                assert answer_turns[last - 1] == i and (last == all_answers or answer_turns[last] != i)
                for k in range(len(outputs)):
                    output: tuple[Any, ...] = outputs[k]
                    name = output[3]
                    count.result(i, output[2], name if type(name) is str and name else UNNAMED, first_answer + k)
            else:
                if first_call < all_calls and call_turns[first_call] == i and first_answer < all_answers \
                        and answer_turns[first_answer] == i:  # (a turn of calls and results: its calls' files first)
                    _add_entries(count, i, found, keys, first_call, first_answer, True)
                _add_entries(count, i, found, keys, first_call, first_answer)
            if roles[i] == "model":
                model = models[i] if models is not None and i < named else None
                if model_entry is not None and model == model_name:
                    model_entry.add(i, quarters[i], cut)
                else:
                    model_name, model_entry = model, count.models.add(model or NO_MODEL, i, quarters[i])
    whole = analysis.total_estimated_tokens
    return Breakdown(whole, cut, len(turns), count.kinds.groups(whole, KINDS), _tool_groups(count.tools, whole),
                     count.files.groups(whole), count.models.groups(whole))


def _add_entries(count: _Count, turn: int, entries: tuple[Any, ...], keys: AnsweredCalls, first_call: int,
                 first_answer: int, calls_only: bool = False) -> None:
    """A turn's spread entries (``spread.turn_spread``): each ``quarters << 3 | kind``, then the file it
    names (a call's, an @path's) and its tool name and place among the turn's calls / responses
    where these are not its place's (``first_call`` / ``first_answer``: the history's place of the
    turn's first; ``keys``: every key's name by its place).  ``calls_only``: only note the files its
    calls name (a result may answer a call that comes after it in its turn), counting nothing."""
    size = len(entries)
    k = call_at = answer_at = 0
    while k < size:
        entry: int = entries[k]
        k += 1
        path = entries[k] if k < size and type(entries[k]) is str else None
        k += path is not None
        kind, amount = entry & 7, entry >> 3
        if not calls_only:
            count.kind(kind, turn, amount)
        if kind != spread.TOOL_CALLS and kind != spread.TOOL_RESULTS:
            if path is not None and not calls_only:  # the text an @path included
                count.files.add(path, turn, amount).grow(INCLUDED, 1)
            continue
        if k < size and type(entries[k]) is tuple:
            name, at = entries[k]
            k += 1
        elif kind == spread.TOOL_CALLS:
            at = call_at
            call_at += 1
            name = keys.call_names[first_call + at] or UNNAMED
        else:
            at = answer_at
            answer_at += 1
            name = keys.answer_names[first_answer + at] or UNNAMED
        if calls_only:
            if kind == spread.TOOL_CALLS and path is not None and at >= 0:
                count.paths[first_call + at] = path
        elif kind == spread.TOOL_CALLS:
            count.call(turn, amount, name, first_call + at if at >= 0 else -1, path)
        else:
            count.result(turn, amount, name, first_answer + at if at >= 0 else -1)


def _tool_groups(tally: _Tally, whole: int) -> tuple[Group, ...]:
    """The tools, each with its calls' and results' tokens (rounded down) as its detail."""
    groups = []
    for group in tally.groups(whole):
        entry = tally.found[group.name]
        detail = {"call_tokens": entry.calls // 4, "result_tokens": entry.results // 4}
        groups.append(Group(group.name, group.tokens, group.share, group.turns, group.summarised_tokens,
                            group.kept_tokens, group.summarised_turns, group.kept_turns, detail))
    return tuple(groups)


def turn_models(session: Session, turns: Sequence[Turn]) -> list[str | None]:
    """The model each turn's record names (None for a user turn or a record that names none); from
    the reader's column where it has one (no turn is made for it)."""
    index = session.turn_index
    if index is not None and len(index.models) >= len(turns):
        return listed(index.models[:len(turns)])
    found: list[str | None] = []
    for n, turn in enumerate(turns):
        if index is not None and n < len(index.models):
            found.append(index.models[n])
        elif turn.message_index is not None and turn.role == "model" and not turn.is_tool_result:
            found.append(recorded_model(session.messages[turn.message_index]))
        else:
            found.append(None)
    return found


def session_breakdown(session: Session, analysis: Analysis, split: int | None = None) -> Breakdown:
    """``breakdown`` of a loaded session's analysis, with the models its records name."""
    return breakdown(analysis, turn_models(session, analysis.turns), split, session.turn_index, content_reader(session))
