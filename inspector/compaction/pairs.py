"""Function calls and their responses: pairing them, and repairing broken pairs.

The Gemini API rejects a history where a function call has no response or a
response has no call.  Any strategy that removes or rewrites turns runs
``repair_pairs`` afterwards; it never drops content silently, it replaces the
missing half with a clear placeholder.
"""

from __future__ import annotations

from collections import deque
from typing import Any, Generic, TypeVar

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
    result.  Ids and names are compared as ``figures.pair_key`` gives them,
    as the agentic split compares them.
    """

    def __init__(self) -> None:
        self._by_id: dict[str, _Group[T]] = {}
        self._waiting: dict[str | None, deque[_Slot[T]]] = {}  # name -> unanswered calls without an id, oldest first
        self._answers = 0  # responses read so far: a call read after one starts a new group for its id

    def call(self, key: CallKey | None, item: T) -> None:
        if key is None:
            return
        ident, name = key
        slot = _Slot(item)
        if ident:
            group = self._by_id.get(ident)
            if group is None or group.since != self._answers:
                group = self._by_id[ident] = _Group(self._answers)
            group.slots.append(slot)
            return
        queue = self._waiting.get(name)
        if queue is None:
            queue = self._waiting[name] = deque()
        queue.append(slot)

    def answer(self, key: CallKey | None) -> tuple[T, bool] | None:
        """The call a response answers, and whether this is its first answer; None: no call."""
        if key is None:
            return None
        self._answers += 1
        ident, name = key
        group = self._by_id.get(ident) if ident else None
        if group is not None:
            slot = group.take()
        else:
            queue = self._waiting.get(name)
            if not queue:
                return None
            slot = queue.popleft()
        first = not slot.answered
        slot.answered = True
        return slot.item, first


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
