"""Where the context goes: the per-turn estimate split by kind, tool, file and model.

Every part of every turn is measured with the estimate the turn table uses
(``tokens.part_quarters``; a turn's parts add up to its row), then counted
under the groups it belongs to:

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

from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import TYPE_CHECKING, Any

from inspector.compaction.pairs import Pairing
from inspector.session.figures import NULL_PART, OutputFigures, pair_key, recorded_model
from inspector.session.turns import content_reader
from inspector.tokens import IMAGE_QUARTERS, content_parts, media_quarters, part_quarters

if TYPE_CHECKING:
    from inspector.analysis import Analysis
    from inspector.session import Session, Turn
    from inspector.session.turn_index import TurnIndex


class Dimension(Enum):
    """What a breakdown groups by (``analyze --by``)."""

    KIND = "kind"
    TOOL = "tool"
    FILE = "file"
    MODEL = "model"


# The kinds, in the order they are listed when tied.
USER_TEXT = "user text"
MODEL_TEXT = "model text"
THOUGHTS = "thoughts"
TOOL_CALLS = "tool calls"
TOOL_RESULTS = "tool results"
INJECTED = "injected context"
IMAGES = "images"
OTHER = "other parts"
KINDS = (USER_TEXT, MODEL_TEXT, THOUGHTS, TOOL_CALLS, TOOL_RESULTS, INJECTED, IMAGES, OTHER)

# Text Gemini CLI writes into a user turn itself, by how it begins (after whitespace).
_INJECTED_PREFIXES = ("<state_snapshot>", "<session_context>", "<hook_context>")
# What an @path adds after the request (Gemini CLI's REFERENCE_CONTENT_START / _END) and per file.
_REFERENCE_START = "--- Content from referenced files ---"
_REFERENCE_END = "--- End of content ---"
_REFERENCE_FILE = "Content from @"

# The argument that names the file a tool reads or changes, and what each built-in tool does to it.
FILE_ARGUMENT = "file_path"
_FILE_ACTIONS = {"read_file": "read", "write_file": "write", "replace": "edit", "edit": "edit"}
INCLUDED = "@ include"
UNNAMED = "(no name)"
NO_MODEL = "(not recorded)"


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


class _Tally:
    """Quarter tokens per group, before and after the split, and the turns each appears in."""

    def __init__(self, split: int) -> None:
        self.split = split
        self.before: dict[str, int] = defaultdict(int)
        self.after: dict[str, int] = defaultdict(int)
        self.turns: dict[str, list[int]] = defaultdict(list)
        self.detail: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))

    def add(self, name: str, turn: int, quarters: int) -> None:
        (self.before if turn < self.split else self.after)[name] += quarters
        seen = self.turns[name]
        if not seen or seen[-1] != turn:
            seen.append(turn)

    def note(self, name: str, key: str, amount: int) -> None:
        self.detail[name][key] += amount

    def groups(self, whole: int, order: Sequence[str] = ()) -> tuple[Group, ...]:
        names = list(self.turns)
        quarters = {n: self.before[n] + self.after[n] for n in names}
        tokens = apportion(quarters)
        rank = {n: i for i, n in enumerate(order)}
        found = []
        for name in names:
            summarised = tokens[name] if not self.after[name] else min(self.before[name] // 4, tokens[name])
            turns = tuple(self.turns[name])
            before = sum(1 for t in turns if t < self.split)
            found.append(Group(name, tokens[name], tokens[name] / whole if whole else 0.0, turns,
                               summarised, tokens[name] - summarised, before, len(turns) - before,
                               dict(self.detail.get(name, {}))))
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


def _text_kind(text: str, role: str) -> str:
    if role == "model":
        return MODEL_TEXT
    return INJECTED if text.lstrip().startswith(_INJECTED_PREFIXES) else USER_TEXT


def part_kind(part: Any, role: str) -> str:
    """The kind of one part, as its estimate is measured (``tokens.part_quarters``: text first)."""
    if type(part) is not dict:
        return OTHER
    text = part.get("text")
    if isinstance(text, str):
        return THOUGHTS if part.get("thought") else _text_kind(text, role)
    if part.get("functionResponse"):
        return TOOL_RESULTS
    if part.get("functionCall"):
        return TOOL_CALLS
    return IMAGES if media_quarters(part) == IMAGE_QUARTERS else OTHER


def _name(value: Any) -> str:
    return value if isinstance(value, str) and value else UNNAMED


def _file_of(call: Mapping[str, Any]) -> str | None:
    args = call.get("args")
    path = args.get(FILE_ARGUMENT) if isinstance(args, dict) else None
    return path if isinstance(path, str) and path else None


class _Files:
    """The file each tool result's call named, paired as every face pairs calls and results
    (``pairs.Pairing``: by id, a repeated result to its call again; without an id, the oldest call
    of that name not yet answered)."""

    def __init__(self) -> None:
        self.pairing: Pairing[tuple[str, str] | None] = Pairing()

    def called(self, call: Mapping[str, Any]) -> tuple[str, str] | None:
        path = _file_of(call)
        found = None if path is None else (path, _FILE_ACTIONS.get(_name(call.get("name")), _name(call.get("name"))))
        self.pairing.call(pair_key(call), found)
        return found

    def answered(self, response: Mapping[str, Any]) -> tuple[str, str] | None:
        paired = self.pairing.answer(pair_key(response))
        return paired[0] if paired is not None else None  # (a result recorded twice is counted twice)


def _measured_results(index: TurnIndex, i: int) -> tuple[OutputFigures, ...] | None:
    """A turn of tool results only, as the reader measured its outputs (``TurnIndex.outputs``), when
    those add up to the whole turn: its parts need not be read again (a recording's largest lines)."""
    if index.kinds[i] != "tool result":
        return None
    outputs = index.outputs[i]
    if any(o[1] == NULL_PART for o in outputs) or sum(o[2] for o in outputs) != index.quarters[i]:
        return None
    return outputs


def breakdown(analysis: Analysis, models: Sequence[str | None] | None = None, split: int | None = None,
              index: TurnIndex | None = None, read: Callable[[Turn], dict[str, Any]] | None = None) -> Breakdown:
    """The history of ``analysis`` grouped by kind, tool, file and model.  ``models``: the model
    each turn's record names (``turn_models``); ``split``: the split to show (default: the one
    Gemini CLI's compression would use); ``index``: the reader's figures of these turns, which
    spare reading the turns of tool results again; ``read``: a turn's content (default: kept on the
    turn; ``turns.content_reader`` reads a big session's turns once without keeping them)."""
    cut = analysis.compress_split_point if split is None else split
    kinds, tools, files, by_model = _Tally(cut), _Tally(cut), _Tally(cut), _Tally(cut)
    pairing = _Files()
    measured = index if index is not None and len(index) == len(analysis.turns) else None
    for i, turn in enumerate(analysis.turns):
        outputs = _measured_results(measured, i) if measured is not None else None
        if outputs is not None:
            for _, _, quarters, name, ident, _ in outputs:
                _add_result(kinds, tools, files, pairing, i, quarters, {"name": name, "id": ident})
            continue
        role = turn.role
        turn_quarters = 0
        included: str | None = None  # the file an @path is including, part by part
        referencing = False
        for part in content_parts(turn.content if read is None else read(turn)):
            quarters = part_quarters(part)
            turn_quarters += quarters
            kind = part_kind(part, role)
            if kind == USER_TEXT and part["text"].lstrip().startswith(_REFERENCE_START):
                referencing = True
            if referencing and kind == USER_TEXT:
                kind = INJECTED
                text = part["text"].strip()
                if text.startswith(_REFERENCE_FILE) and text.endswith(":"):
                    included = text[len(_REFERENCE_FILE):-1]
                elif text in (_REFERENCE_END, _REFERENCE_START):
                    included = None
                elif included is not None:
                    files.add(included, i, quarters)
                    files.note(included, INCLUDED, 1)
                    included = None
            kinds.add(kind, i, quarters)
            if kind == TOOL_CALLS:
                call = part["functionCall"]
                call = call if isinstance(call, dict) else {}
                name = _name(call.get("name"))
                tools.add(name, i, quarters)
                tools.note(name, "call_tokens_quarters", quarters)
                target = pairing.called(call)
                if target is not None:
                    files.add(target[0], i, quarters)
                    files.note(target[0], target[1], 1)
            elif kind == TOOL_RESULTS:
                response = part["functionResponse"]
                _add_result(kinds, tools, files, pairing, i, quarters, response if isinstance(response, dict) else {},
                            counted=True)
        if role == "model":
            model = models[i] if models is not None and i < len(models) else None
            by_model.add(model or NO_MODEL, i, turn_quarters)
    whole = analysis.total_estimated_tokens
    return Breakdown(whole, cut, len(analysis.turns), kinds.groups(whole, KINDS), _tool_groups(tools, whole),
                     files.groups(whole), by_model.groups(whole))


def _add_result(kinds: _Tally, tools: _Tally, files: _Tally, pairing: _Files, turn: int, quarters: int,
                response: Mapping[str, Any], counted: bool = False) -> None:
    """One tool result: its kind (unless ``counted``), its tool, and the file its call named."""
    if not counted:
        kinds.add(TOOL_RESULTS, turn, quarters)
    name = _name(response.get("name"))
    tools.add(name, turn, quarters)
    tools.note(name, "result_tokens_quarters", quarters)
    target = pairing.answered(response)
    if target is not None:
        files.add(target[0], turn, quarters)


def _tool_groups(tally: _Tally, whole: int) -> tuple[Group, ...]:
    """The tools, each with its calls' and results' tokens (rounded down) as its detail."""
    groups = []
    for group in tally.groups(whole):
        raw = tally.detail.get(group.name, {})
        detail = {"call_tokens": raw.get("call_tokens_quarters", 0) // 4,
                  "result_tokens": raw.get("result_tokens_quarters", 0) // 4}
        groups.append(Group(group.name, group.tokens, group.share, group.turns, group.summarised_tokens,
                            group.kept_tokens, group.summarised_turns, group.kept_turns, detail))
    return tuple(groups)


def turn_models(session: Session, turns: Iterable[Turn]) -> list[str | None]:
    """The model each turn's record names (None for a user turn or a record that names none)."""
    index = session.turn_index
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
