"""Function calls and their responses: pairing them, and repairing broken pairs.

The Gemini API rejects a history where a function call has no response or a
response has no call.  Any strategy that removes or rewrites turns runs
``repair_pairs`` afterwards; it never drops content silently, it replaces the
missing half with a clear placeholder.
"""

from __future__ import annotations

from array import array
from collections import deque
from collections.abc import Callable
from functools import partial
from typing import Any, Generic, TypeVar

from inspector.session.columns import NATURAL
from inspector.session.figures import CallKey, pair_key

ORPHAN_RESPONSE = "[A result of {name} stood here; the call that asked for it was compacted away.]"
MISSING_RESPONSE = "[No result kept for this call of {name}: it was compacted away.]"


def _parts(content: dict[str, Any]) -> list[Any]:
    parts = content.get("parts")
    return parts if isinstance(parts, list) else []


def function_calls(content: dict[str, Any]) -> list[tuple[int, dict[str, Any]]]:
    return [(j, p["functionCall"]) for j, p in enumerate(_parts(content))
            if isinstance(p, dict) and isinstance(p.get("functionCall"), dict)]


def function_responses(content: dict[str, Any]) -> list[tuple[int, dict[str, Any]]]:
    return [(j, p["functionResponse"]) for j, p in enumerate(_parts(content))
            if isinstance(p, dict) and isinstance(p.get("functionResponse"), dict)]


T = TypeVar("T")


class _Slot(Generic[T]):
    __slots__ = ("answered", "item")

    def __init__(self, item: T) -> None:
        self.item = item
        self.answered = False


class _Group(Generic[T]):
    """The calls that share one id in one model turn (no response between them), oldest first."""

    __slots__ = ("repeats", "since", "slots")

    def __init__(self, since: int) -> None:
        self.slots: list[_Slot[T]] = []
        self.since = since  # how many responses had been read when its first call was
        self.repeats = 0  # responses read after every call of the group was answered

    def take(self) -> _Slot[T]:
        """The oldest call not answered yet; when all are, the next in turn (a repeated result)."""
        for slot in self.slots:
            if not slot.answered:
                return slot
        slot = self.slots[self.repeats % len(self.slots)]
        self.repeats += 1
        return slot


class Pairing(Generic[T]):
    """Which call each response answers, in one pass over a history (calls before their responses).

    A response with an id belongs to the newest model turn's calls with that
    id, the oldest of them not answered yet: Gemini CLI answers a turn's
    calls in order, and two calls of one turn may share an id.  Once all of
    them are answered, a response is a repeat and says nothing new (Gemini
    CLI 0.61 records each result twice, in the call's record and again as a
    user message, in the same order), so the repeats go to them in turn.  A
    response with no id, or with an id no call has, belongs to the oldest
    unanswered call of its name that has no id.  A call with an id is never
    answered by a response that lacks it, nor by a neighbour's repeated
    result.  Ids and names are compared as ``figures.pair_key`` gives them.

    This is the one statement of the pairing rule: the digest, the fact
    check, ``pair_calls`` / ``repair_pairs`` and the agentic split
    (``AgenticCandidates``, whole or live) all read pairs through it.

    ``mark()`` starts a journal of what each later call and answer changes,
    and ``undo()`` goes back to the mark (the live view pairs a message again
    when Gemini CLI writes it again, without copying the state before each).
    """

    def __init__(self) -> None:
        self._by_id: dict[str, _Group[T]] = {}
        self._waiting: dict[str | None, deque[_Slot[T]]] = {}  # name -> unanswered calls without an id, oldest first
        self._answers = 0  # responses read so far: a call read after one starts a new group for its id
        self._journal: list[Callable[[], object]] | None = None  # how to go back to the mark, newest last

    def mark(self) -> None:
        """From here on, journal every change so that ``undo`` can take it back."""
        self._journal = []

    @property
    def marked(self) -> bool:
        return self._journal is not None

    def undo(self) -> None:
        """Back to the state at ``mark`` (which ends the journal)."""
        journal = self._journal
        assert journal is not None, "undo without a mark"
        for step in reversed(journal):
            step()
        self._journal = None

    def call(self, key: CallKey | None, item: T) -> None:
        if key is None:
            return
        ident, name = key
        slot = _Slot(item)
        journal = self._journal
        if ident:
            group = self._by_id.get(ident)
            if group is None or group.since != self._answers:
                if journal is not None:
                    journal.append(partial(_restore_group, self._by_id, ident, group))
                group = self._by_id[ident] = _Group(self._answers)
            group.slots.append(slot)
            if journal is not None:
                journal.append(group.slots.pop)
            return
        queue = self._waiting.get(name)
        if queue is None:
            queue = self._waiting[name] = deque()
        queue.append(slot)
        if journal is not None:
            journal.append(queue.pop)

    def answer(self, key: CallKey | None) -> tuple[T, bool] | None:
        """The call a response answers, and whether this is its first answer; None: no call."""
        if key is None:
            return None
        journal = self._journal
        self._answers += 1
        if journal is not None:
            journal.append(self._one_answer_less)
        ident, name = key
        group = self._by_id.get(ident) if ident else None
        if group is not None:
            repeats = group.repeats
            slot = group.take()
            if journal is not None and group.repeats != repeats:
                journal.append(partial(setattr, group, "repeats", repeats))
        else:
            queue = self._waiting.get(name)
            if not queue:
                return None
            slot = queue.popleft()
            if journal is not None:
                journal.append(partial(queue.appendleft, slot))
        first = not slot.answered
        if first and journal is not None:
            journal.append(partial(setattr, slot, "answered", False))
        slot.answered = True
        return slot.item, first

    def _one_answer_less(self) -> None:
        self._answers -= 1


def _restore_group(by_id: dict[str, _Group[T]], ident: str, group: _Group[T] | None) -> None:
    if group is None:
        del by_id[ident]
    else:
        by_id[ident] = group


class AgenticCandidates:
    """The model turns (never 0) that no call/response pair spans, found turn by turn: where the kept
    part of an agentic split may start.  Pairs are ``Pairing``'s; a pair from turn ``c`` to turn ``i``
    rules out every candidate after ``c`` up to ``i``.  ``mark`` / ``undo`` as ``Pairing``'s;
    ``low``: how short ``found`` has been since it was last set (what a live append must redo).

    With ``record``, it also notes which call each response answers (``answered``), and each
    response's turn and each call's and response's name (``answer_turns``, ``call_names``,
    ``answer_names``), so that the breakdown reads the same pairs instead of pairing them again, and
    the keys without reading them again (a whole history: no ``mark``)."""

    def __init__(self, record: bool = False) -> None:
        self.pairing: Pairing[int] = Pairing()  # a call's place among every call added, in order
        self.call_turns = array(NATURAL)  # the turn of each call added, by its place
        self.found: list[int] = []
        self.low = 0
        # for each response added, in order: the place of the call it answers, or -1 (none)
        self.answered: array[int] | None = array("q") if record else None
        self.answer_turns = array(NATURAL)  # (recorded) the turn of each response added
        self.call_names: list[str | None] = []  # (recorded) each call's name, by its place
        self.answer_names: list[str | None] = []  # (recorded) each response's name, in order
        self._journal: list[Callable[[], object]] | None = None

    @property
    def marked(self) -> bool:
        return self._journal is not None

    def mark(self) -> None:
        assert self.answered is None, "a recording pass reads a whole history once"
        self.pairing.mark()
        self._journal = []

    def undo(self) -> None:
        journal = self._journal
        assert journal is not None, "undo without a mark"
        for step in reversed(journal):
            step()
            self.low = min(self.low, len(self.found))
        self._journal = None
        self.pairing.undo()

    def add(self, i: int, role: str, calls: tuple[CallKey, ...], answers: tuple[CallKey, ...]) -> None:
        """Turn ``i``, with the keys of its calls and of its responses (``figures.pair_key``; as tuples, so
        that compiled code reads them by place)."""
        found = self.found
        journal = self._journal
        call_turns = self.call_turns
        answered = self.answered
        for key in calls:  # a turn's calls before its responses, as pair_calls reads a content
            self.pairing.call(key, len(call_turns))
            call_turns.append(i)
            if journal is not None:
                journal.append(call_turns.pop)
            if answered is not None:
                self.call_names.append(key[1])
        covered = False
        for key in answers:
            paired = self.pairing.answer(key)
            if answered is not None:
                answered.append(-1 if paired is None else paired[0])
                self.answer_turns.append(i)
                self.answer_names.append(key[1])
            if paired is None:
                continue
            start = call_turns[paired[0]]
            if start >= i:
                continue
            covered = True
            while found and found[-1] > start:
                lost = found.pop()
                if journal is not None:
                    journal.append(partial(found.append, lost))
            self.low = min(self.low, len(found))
        if not covered and i > 0 and role == "model":
            found.append(i)
            if journal is not None:
                journal.append(found.pop)


def pair_calls(contents: list[dict[str, Any]]) -> dict[tuple[int, int], tuple[int, int]]:
    """Map each response (turn, part) to its call (turn, part), by ``Pairing``'s rule."""
    pairing: Pairing[tuple[int, int]] = Pairing()
    pairs: dict[tuple[int, int], tuple[int, int]] = {}
    for i, content in enumerate(contents):
        for j, call in function_calls(content):
            pairing.call(pair_key(call), (i, j))
        for j, response in function_responses(content):
            found = pairing.answer(pair_key(response))
            if found is not None:
                pairs[(i, j)] = found[0]
    return pairs


def _placeholder(call: dict[str, Any]) -> dict[str, Any]:
    name = call.get("name") or "unknown_tool"
    inner: dict[str, Any] = {"id": call["id"]} if call.get("id") else {}
    inner.update(name=name, response={"output": MISSING_RESPONSE.format(name=name)})
    return {"functionResponse": inner}


def repair_pairs(contents: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], int]:
    """A history where every call has a response and every response a call.

    Returns the repaired history and how many placeholders were written.
    Orphaned responses become text parts saying what stood there; calls left
    without an answer get a placeholder response in the next turn (or in a
    turn of their own when the next turn holds no responses).
    """
    pairs = pair_calls(contents)
    answered = set(pairs.values())
    carried: dict[int, list[dict[str, Any]]] = {}
    repaired: list[dict[str, Any]] = []
    fixes = 0
    for i, content in enumerate(contents):
        parts = _parts(content)
        new_parts: list[Any] = []
        for j, part in enumerate(parts):
            if isinstance(part, dict) and isinstance(part.get("functionResponse"), dict) and (i, j) not in pairs:
                name = part["functionResponse"].get("name") or "a tool"
                new_parts.append({"text": ORPHAN_RESPONSE.format(name=name)})
                fixes += 1
            else:
                new_parts.append(part)
        new_parts.extend(carried.pop(i, []))
        repaired.append({**content, "parts": new_parts} if new_parts != parts else content)
        placeholders = [_placeholder(call) for j, call in function_calls(content) if (i, j) not in answered]
        if not placeholders:
            continue
        fixes += len(placeholders)
        following = contents[i + 1] if i + 1 < len(contents) else None
        if following is not None and following.get("role") == "user" and function_responses(following):
            carried[i + 1] = placeholders
        else:
            repaired.append({"role": "user", "parts": placeholders})
    return repaired, fixes
