"""A recording that grew, read from where it ended: the session and its analysis extended.

When Gemini CLI appends lines to the open session, only the new lines are
scanned (with the loader's own ``scan``), and the session and its analysis
are extended: per-turn columns, prefix sums, split candidates, the split
points, agentic candidates, the tool-output budget (see ``live.budget``),
recorded usage, the checksum.  ``extend`` declines (a ``Declined`` that
says why, naming the line) whenever it cannot prove the result equal to
reading the whole file again; the caller then reads it all.  That is the
case for anything but plain appends:

* a ``$rewindTo``, a ``$set`` or metadata line carrying ``messages``;
* a message that repeats an id seen before, except the last message, which
  Gemini CLI writes again whole when its tool calls finish (``pushMessage``);
* a line that cannot be read, or a message that fails its checks;
* a file that did not end with a line break, or a state already extended.

The checksum is carried on with a kept ``hashlib`` object: priming it costs
one pass over the file (once per full read, in the app's worker), and every
append then costs only its own bytes; recomputing it lazily would read the
whole file again whenever the checksum is asked for, which the app does
after every change (is the preview stale?).

Extending never changes the state it starts from: the session and analysis
handed out before stay as they were (a preview or a worker may still read
them).  The turn index's columns are shared between versions a chunk at a
time (``session.columns.Column``: a version costs a chunk per column, not a
copy); the other long per-message lists need copies of their own, which
``prepare`` makes ahead of time (the app calls it in a worker once the state is on screen); ``extend`` then cuts
them at the first changed turn and grows them in place, so the way from new
bytes to a new state costs what was appended, not the session's length.
Without prepared copies ``extend`` copies on the spot (same result).
"""

from __future__ import annotations

import bisect
import hashlib
import os
import stat
from array import array
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, TypeVar

from inspector.analysis import Analysis, last_prompt_tokens, project_temp_dir, usage_fresh_from
from inspector.compaction.budget import TOOL_OUTPUTS_DIR, output_file_name, plan_budget, truncate_chars, walk_budget
from inspector.compaction.pairs import AgenticCandidates
from inspector.compaction.view import SplitColumns
from inspector.context import environment_quarters
from inspector.deciding import TwiceHeld
from inspector.live.budget import ShiftedTruncations, as_shifted, changed_weights, replan
from inspector.session import Session, Turn
from inspector.session.figures import response_text
from inspector.session.history import is_environment_content, message_contents, part_array
from inspector.session.jsonl import (
    ITEM_KIND,
    ITEM_LINE,
    ITEM_LISTED,
    ITEM_MESSAGE,
    ITEM_TARGET,
    ITEM_TEXT,
    MESSAGE_ID,
    MESSAGE_LINE,
    MESSAGE_PROBLEM,
    MESSAGE_ROWS,
    MESSAGE_WHERE,
    Message,
    count_newlines,
    line_count,
    replay,
    scan,
)
from inspector.session.loader import paused_gc
from inspector.session.packed import PackedColumn
from inspector.session.reader import read_at
from inspector.session.records import MessageList, Places, loads_line
from inspector.session.rows import BLOCK_ITEM
from inspector.session.turn_index import TurnIndex
from inspector.session.turns import TurnList
from inspector.tokens import token_limit

Column = TypeVar("Column", list[Any], "array[int]")  # a long list the spare copies (prefix sums in machine integers)


@dataclass
class _Index:
    """What extending needs beyond the analysis; changed in place, so usable once."""

    hasher: Any  # hashlib's sha256 over the bytes read so far
    columns: SplitColumns  # where the split may go (a copy: extended in place)
    prefix_quarters: array[int]  # prefix_quarters[i]: the estimate of turns before i (Analysis keeps a copy)
    responses: PackedColumn[tuple[Any, ...]]  # every turn's ResponseFigures (a copy: cut and grown in place)
    pairing: AgenticCandidates  # after every turn, marked at the last message's first turn
    twice: TwiceHeld  # the tool results held twice (the header's "held twice"), counted turn by turn
    saturated: tuple[int, int] | None  # where the budget walk went over
    weights: dict[int, tuple[int, tuple[tuple[int, str], ...]]]  # budget.changed_weights's memory
    max_chars: int
    environment: int | None  # position of the environment-context message
    spent: bool = False
    spare: _Spare | None = None  # copies made ahead for the next extension (``prepare``)


class _Spare:
    """Private copies of one state's long lists, which the next ``extend`` cuts and grows in place."""

    def __init__(self, session: Session, lists: dict[str, list[Any] | array[int]],
                 messages: tuple[Places, list[str] | None], figures: TurnIndex | None) -> None:
        self.session = session  # the state they were copied from (checked by identity)
        self.lists = lists
        self.messages = messages  # the MessageList's own lists (``MessageList.copies``)
        self.figures = figures  # a whole read's turn index as shared columns, made ahead once (else None)
        self.lines = dict(session.message_lines)

    def grown(self, name: str, old: Column, keep: int, new: Iterable[Any]) -> Column:
        """``old[:keep]`` followed by ``new``: the copy made ahead, cut and grown in place."""
        own = self.lists.pop(name)
        assert isinstance(own, type(old))
        del own[keep:]
        own.extend(new)
        return own


def _grown(spare: _Spare | None, name: str, old: Column, keep: int, new: Iterable[Any]) -> Column:
    """``old[:keep]`` followed by ``new``, without copying ``old`` when a spare copy was made ahead."""
    if spare is None:
        own = old[:keep]
        own.extend(new)
        return own
    return spare.grown(name, old, keep, new)


def prepare(state: LiveState) -> None:
    """Copy ahead the lists the next ``extend`` of ``state`` would copy (the app does it in a
    worker once the state is on screen).  Reads only the state's own lists, which nothing changes."""
    index = state.index
    session, analysis = state.session, state.analysis
    messages = session.messages
    if index is None or index.spent or index.spare is not None or not isinstance(messages, MessageList):
        return
    assert session.turn_index is not None
    lists: dict[str, list[Any] | array[int]] = {
        "candidates": list(analysis.candidates),
        "prefix": analysis.prefix_quarters[:], "agentic": list(analysis.agentic_candidates),
    }
    if isinstance(analysis.turns, list):  # (a recording's TurnList is cut and grown without a copy)
        lists["turns"] = list(analysis.turns)
    # The turn index is not copied: a version shares its columns' full chunks (session/columns.py).  Only a
    # whole read's lists are made into such columns, once, here rather than on the way to the screen.
    figures = session.turn_index
    index.spare = _Spare(session, lists, messages.copies(), None if figures.shares_columns else figures.copy())


@dataclass(frozen=True)
class Declined:
    """Why an append was not extended: only reading the whole file again gives the right answer."""

    reason: str  # e.g. "line 14 rewinds to message 'a1' ($rewindTo)"


@dataclass(frozen=True)
class LiveState:
    """A loaded recording that can be extended by what is appended to it."""

    session: Session
    analysis: Analysis
    model: str | None = None  # the model the caller chose (None: the session's)
    changed_from: int | None = None  # after ``extend``: the first turn that is new or was written again
    index: _Index | None = field(default=None, compare=False, repr=False)


def start(session: Session, analysis: Analysis, *, model: str | None = None) -> LiveState | None:
    """The live state of a freshly read recording (None: not one this can extend).

    Reads the file once more to prime the checksum (and checks it is the
    file that was read)."""
    if session.format != "jsonl" or session.turn_index is None or not session.ends_with_newline:
        return None
    hasher = hashlib.sha256()
    try:  # (a FIFO or a device put in the file's place since it was read is never waited on)
        fd = os.open(session.path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        done = 0
        while done < session.size:
            chunk = read_at(fd, done, min(session.size - done, 1 << 22))
            if not chunk:
                return None
            hasher.update(chunk)
            done += len(chunk)
    except OSError:
        return None
    finally:
        os.close(fd)
    if hasher.hexdigest() != session.sha256:
        return None
    figures = session.turn_index  # read, never copied: the pairing keeps what it needs of the keys
    roles, calls, answers = figures.roles, figures.calls, figures.answers
    last_start = _first_turn_of(analysis.turns, len(session.messages) - 1)
    pairing = AgenticCandidates()
    for i in range(len(figures)):
        if i == last_start:
            pairing.mark()
        pairing.add(i, roles[i], calls[i], answers[i])
    if not pairing.marked:
        pairing.mark()
    columns = analysis.split_columns
    index = _Index(
        hasher, replace(columns, prefix=array("q", columns.prefix), flagged=list(columns.flagged),
                        left_out=list(columns.left_out)),
        analysis.prefix_quarters[:], _own_copy(columns.sent_responses(figures, lambda i: analysis.turns[i].content)),
        pairing, TwiceHeld(figures.outputs),
        None, {}, _max_chars(analysis), _environment_position(session),
    )
    analysis = replace(analysis, truncations=as_shifted(analysis.truncations, _unshifted),
                       twice_held=index.twice.total)
    turns = analysis.turns
    index.saturated = _saturation(index.responses, lambda i, j: _text(turns, i, j), _output_path(session),
                                  index.max_chars)
    return LiveState(session, analysis, model, None, index)


def _unshifted(original: Any, seq: int) -> Any:
    raise AssertionError("a plan read from a whole file is never shifted")


def _own_copy(responses: Sequence[tuple[Any, ...]]) -> PackedColumn[tuple[Any, ...]]:
    """A packed copy of every turn's responses (the turn index's own column shares its full chunks)."""
    if isinstance(responses, PackedColumn):
        return responses.head(len(responses))
    return PackedColumn.of(responses)


def _max_chars(analysis: Analysis) -> int:
    return truncate_chars(analysis.token_limit, last_prompt_tokens(analysis.recorded, analysis.fresh_from) or 0)


def _saturation(responses: Sequence[tuple[Any, ...]], text_of: Callable[[int, int], str],
                output_path: Callable[[str, int], str], max_chars: int) -> tuple[int, int] | None:
    """Where the budget walk first counts more than the budget (None: never): walked only that far."""
    walk = walk_budget(responses, text_of, output_path, max_chars,
                       stop=lambda turn, part, saturated: saturated)
    return walk.saturated_at


def _output_path(session: Session) -> Callable[[str, int], str]:
    folder = str(project_temp_dir(session.path) / TOOL_OUTPUTS_DIR) + os.sep
    return lambda tool, seq: folder + output_file_name(tool, seq)


def _text(turns: Sequence[Turn], i: int, j: int) -> str:
    return response_text(turns[i].content["parts"][j]["functionResponse"]["response"])


def _first_turn_of(turns: Sequence[Turn], position: int) -> int:
    return bisect.bisect_left(turns, position, key=lambda t: t.message_index if t.message_index is not None else -1)


def _environment_position(session: Session) -> int | None:
    for position, message in enumerate(session.messages):
        if message.get("type") == "user" and is_environment_content(message.get("content")):
            return position
    return None


def unread(data: bytes, offset: int, size: int) -> bytes | None:
    """What of ``data``, complete lines appended at byte ``offset``, lies beyond the first ``size``
    bytes a read already holds: all of it when it starts there or later, ``b""`` when the read
    holds it all (it was appended while the whole file was read), None when ``size`` falls inside
    one of its lines (only reading the whole file again gives the right answer)."""
    if offset >= size:
        return data
    cut = size - offset
    if cut >= len(data):
        return b""
    if data[cut - 1] != 0x0A:
        return None
    return data[cut:]


def extend(state: LiveState, data: bytes, offset: int, mtime_ns: int = 0) -> LiveState | Declined:
    """``state`` after the complete lines ``data`` were appended at byte ``offset``, or why only
    reading the whole file again gives the right answer (see the module's notes)."""
    index = state.index
    session = state.session
    if index is None or index.spent:
        return Declined("this version was already extended")
    if offset != session.size:
        return Declined(f"the lines were written at byte {offset:,}, not where the file ended ({session.size:,})")
    if not data.endswith(b"\n"):
        return Declined("the appended text ends inside a line")
    nul = data.find(b"\x00")
    if nul != -1:
        return Declined(f"line {session.line_count + 1 + count_newlines(data, 0, nul):,} holds a NUL byte")
    old_messages = session.messages
    assert isinstance(old_messages, MessageList) and session.turn_index is not None
    count = len(old_messages)
    last_id = next(reversed(session.message_lines), None) if session.message_lines else None
    items = scan(data, 0, None, session.line_count + 1, base=offset)
    for item in items:  # a line only a whole read can apply declines the extension, the first in the file
        reason = _beyond_an_append(item)
        if reason is not None:
            return Declined(reason)
    replayed = replay(items)  # the reader's own replay of the appended lines (jsonl.replay: one policy)
    metadata = {**session.metadata, **replayed.metadata}
    tail: dict[str, Message] = replayed.entries
    keep = count  # messages of the old state kept as they are
    for ident, message in tail.items():
        if ident not in session.message_lines:
            continue
        if ident != last_id:
            return Declined(f"line {message[MESSAGE_LINE]:,} writes again message {ident!r} of line "
                            f"{session.message_lines[ident]:,}, not the last one")
        keep = count - 1  # the last message, written again: it keeps its place, before the new ones
    if keep != count and last_id is not None:
        tail = {last_id: tail[last_id], **tail}
    index.spent = True  # its lists are changed in place below: this state cannot be extended again
    spare = index.spare if index.spare is not None and index.spare.session is session else None
    index.spare = None
    index.hasher.update(data)
    with paused_gc():  # copies of long lists: nothing to collect, and a collection would scan them all
        new_session = _session(session, metadata, keep, tail, replayed.blocks, data, offset, mtime_ns,
                               index.hasher.hexdigest(), spare)
        analysis, first = _analysis(state, new_session, keep, list(tail.values()), spare)
    return LiveState(new_session, analysis, state.model, first, replace(index, spent=False, spare=None))


def _beyond_an_append(item: tuple[Any, ...]) -> str | None:
    """Why a line stops an extension (a scan item: see jsonl.scan), or None for a plain message or a
    metadata update: what a rewind, a checkpoint, a skipped line or a message that cannot be read
    does, only reading the whole file again gives."""
    kind = item[ITEM_KIND]
    if kind == BLOCK_ITEM:  # (the rows of the messages)
        return None
    if kind == "m":
        message: Message = item[ITEM_MESSAGE]
        problem = message[MESSAGE_PROBLEM]
        return None if problem is None else f"line {message[MESSAGE_LINE]:,}: {problem}"
    line = item[ITEM_LINE]
    if kind == "r":
        return f"line {line:,} rewinds to message {item[ITEM_TARGET]!r} ($rewindTo)"
    if kind in ("s", "h"):
        if item[ITEM_LISTED] is None:
            return None
        return (f"line {line:,} sets the whole list of messages ($set with messages)" if kind == "s"
                else f"line {line:,} is a metadata line that lists messages")
    return f"line {line:,}: {item[ITEM_TEXT]}"


def _record(message: Message, data: bytes, offset: int) -> dict[str, Any]:
    where = message[MESSAGE_WHERE]
    assert isinstance(where, tuple)
    start, end = where
    record: dict[str, Any] = loads_line(memoryview(data)[start - offset:end - offset])
    return record


def _session(session: Session, metadata: dict[str, Any], keep: int, tail: dict[str, Message], blocks: dict[int, bytes],
             data: bytes, offset: int, mtime_ns: int, sha256: str, spare: _Spare | None) -> Session:
    old = session.messages
    assert isinstance(old, MessageList) and session.turn_index is not None
    lazy = old.reads_file
    items: list[dict[str, Any] | tuple[int, int]] = [
        message[MESSAGE_WHERE] if lazy else _record(message, data, offset) for message in tail.values()  # type: ignore[misc]
    ]
    lines = spare.lines if spare is not None else dict(session.message_lines)
    for ident, message in tail.items():
        lines[ident] = message[MESSAGE_LINE]
    return replace(
        session,
        metadata=metadata,
        messages=old.extended(keep, items, list(tail), spare.messages if spare is not None else None),
        message_lines=lines,
        line_count=session.line_count + line_count(data),
        size=offset + len(data),
        sha256=sha256,
        mtime_ns=mtime_ns or session.mtime_ns,
        ends_with_newline=True,
        turn_index=session.turn_index.extended(keep, [m[MESSAGE_ROWS] for m in tail.values()], blocks,
                                               spare.figures if spare is not None else None),
        warnings=list(session.warnings),
    )


def _analysis(state: LiveState, session: Session, keep: int, tail: list[Message],
              spare: _Spare | None) -> tuple[Analysis, int]:
    old = state.analysis
    index = state.index
    assert index is not None
    first = _first_turn_of(old.turns, keep)  # the first turn that changes
    count_before = len(old.turns)
    messages = session.messages
    if isinstance(old.turns, TurnList):  # a recording's turns: the columns' part shared, no copy
        new_turns: TurnList | list[Turn] = old.turns.head(first)
    else:
        assert isinstance(old.turns, list)
        new_turns = _grown(spare, "turns", old.turns, first, ())
    for offset_in_tail, message in enumerate(tail):
        position = keep + offset_in_tail
        for content, is_result in message_contents(messages[position]):
            new_turns.append(Turn(len(new_turns), content, message[MESSAGE_ID], position, is_result))
    n = len(new_turns)
    figures = session.turn_index  # every turn's figures, the new ones from ``first`` on
    assert figures is not None and len(figures) == n
    added = range(first, n)

    # columns: the session's turn index (the analysis shares its lists)
    quarters, json_chars, kinds, recorded = figures.quarters, figures.json_lengths, figures.kinds, figures.usage
    del index.prefix_quarters[first + 1:]
    for i in added:
        index.prefix_quarters.append(index.prefix_quarters[-1] + quarters[i])
    columns = index.columns
    restart = columns.extend(figures, first, lambda i: new_turns[i].content)
    sent = columns.sent_responses(figures, lambda i: new_turns[i].content, restart)
    replan_all = sent[:first - restart] != index.responses[restart:first]  # the view left out an older turn
    del index.responses[restart:]
    index.responses.extend(sent)
    candidates = _grown(spare, "candidates", old.candidates, bisect.bisect_left(old.candidates, restart), ())
    if not candidates:
        candidates.append(0)
    candidates += [i for i in columns.flagged[bisect.bisect_left(columns.flagged, restart):] if i > 0]
    if columns.safe_end and n:
        candidates.append(n)

    # agentic candidates: from the pairing before the first changed turn
    pairing = index.pairing
    pairing.low = len(pairing.found)
    if first < count_before:
        pairing.undo()  # the last message was written again: back to before its turns
    last_start = _first_turn_of(new_turns, len(messages) - 1)
    marked = last_start <= first
    if marked:
        pairing.mark()
    for i in range(first, n):
        if i == last_start and not marked:
            pairing.mark()
            marked = True
        pairing.add(i, figures.roles[i], figures.calls[i], figures.answers[i])
    if not marked:
        pairing.mark()
    index.twice.cut(first)  # (it still reads the turn index of the version extended)
    index.twice.grow(figures.outputs)

    # the rest of the figures
    model = state.model or session.model
    env_quarters = old.environment_quarters
    if index.environment is None or index.environment >= keep:  # no environment turn before the tail
        index.environment = next((keep + k for k in range(len(tail)) if _is_environment(messages[keep + k])), None)
        environment = index.environment
        env_quarters = 0 if environment is None else environment_quarters(
            {"role": "user", "parts": part_array(messages[environment].get("content"))})
    fresh_from = old.fresh_from if old.fresh_from < first else (
        usage_fresh_from(session, new_turns) if first == 0 else _fresh_from(session, new_turns, first))
    limit = token_limit(model)
    max_chars = truncate_chars(limit, last_prompt_tokens(recorded, fresh_from) or 0)
    output_path = _output_path(session)

    def text_of(i: int, j: int) -> str:
        return _text(new_turns, i, j)

    for turn in [t for t in index.weights if t >= first]:
        del index.weights[turn]
    if max_chars != index.max_chars or not isinstance(old.truncations, ShiftedTruncations) or replan_all:
        index.weights.clear()
        plan = as_shifted(plan_budget(index.responses, text_of, output_path, max_chars), _unshifted)
        index.max_chars = max_chars
        index.saturated = _saturation(index.responses, text_of, output_path, max_chars)
        truncations: ShiftedTruncations = plan
    else:
        shifted, index.saturated = replan(index.responses, text_of, output_path, max_chars, old.truncations,
                                          index.saturated, first)
        truncations = as_shifted(shifted, _unshifted)
    deltas = changed_weights(truncations, output_path, json_chars, lambda i: new_turns[i].content, index.weights)
    split = columns.split()
    compress_split = columns.split(deltas) if deltas else split
    return Analysis(
        turns=new_turns, quarters=quarters, json_chars=json_chars, candidates=candidates, split_point=split,
        compress_split_point=compress_split, truncations=truncations, token_limit=limit, threshold=old.threshold,
        model=model, recorded=recorded, warnings=list(session.warnings), kinds=kinds,
        agentic_candidates=_grown(spare, "agentic", old.agentic_candidates, pairing.low, pairing.found[pairing.low:]),
        fresh_from=fresh_from, environment_quarters=env_quarters, split_columns=columns, twice_held=index.twice.total,
        _prefix_quarters=_grown(spare, "prefix", old.prefix_quarters, first + 1, index.prefix_quarters[first + 1:]),
    ), first


def _is_environment(message: dict[str, Any]) -> bool:
    return message.get("type") == "user" and is_environment_content(message.get("content"))


def _fresh_from(session: Session, turns: Sequence[Turn], first: int) -> int:
    """``usage_fresh_from`` when no turn before ``first`` is fresh and turn 0 is the snapshot."""
    snapshot_line = session.message_lines[turns[0].record_id or ""]
    lines = session.message_lines
    return next((t.index for t in turns[first:] if lines.get(t.record_id or "", 0) > snapshot_line), len(turns))


__all__ = ["LiveState", "extend", "prepare", "start"]
