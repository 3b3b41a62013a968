"""Function calls and their responses: pairing them, and repairing broken pairs.

The Gemini API rejects a history where a function call has no response or a
response has no call.  Any strategy that removes or rewrites turns runs
``repair_pairs`` afterwards; it never drops content silently, it replaces the
missing half with a clear placeholder.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from inspector.session.figures import pair_key

ORPHAN_RESPONSE = "[A result of {name} stood here; the call that asked for it was compacted away.]"
MISSING_RESPONSE = "[No result kept for this call of {name}: it was compacted away.]"


@dataclass(frozen=True)
class CallRef:
    turn: int
    part: int
    name: str | None
    id: str | None


def _parts(content: dict[str, Any]) -> list[Any]:
    parts = content.get("parts")
    return parts if isinstance(parts, list) else []


def function_calls(content: dict[str, Any]) -> list[tuple[int, dict[str, Any]]]:
    return [(j, p["functionCall"]) for j, p in enumerate(_parts(content))
            if isinstance(p, dict) and isinstance(p.get("functionCall"), dict)]


def function_responses(content: dict[str, Any]) -> list[tuple[int, dict[str, Any]]]:
    return [(j, p["functionResponse"]) for j, p in enumerate(_parts(content))
            if isinstance(p, dict) and isinstance(p.get("functionResponse"), dict)]


def pair_calls(contents: list[dict[str, Any]]) -> dict[tuple[int, int], tuple[int, int]]:
    """Map each response (turn, part) to its call (turn, part).

    A response belongs to the earlier call with the same id (answered already
    or not: Gemini CLI's own histories repeat results); without an id, to the
    oldest unanswered call of the same name.  Ids and names are compared as
    ``figures.pair_key`` gives them, as the agentic split compares them.
    """
    by_id: dict[str, CallRef] = {}
    pending: list[CallRef] = []
    pairs: dict[tuple[int, int], tuple[int, int]] = {}
    for i, content in enumerate(contents):
        for j, call in function_calls(content):
            ident, name = pair_key(call) or (None, None)
            ref = CallRef(i, j, name, ident)
            pending.append(ref)
            if ident:
                by_id[ident] = ref
        for j, response in function_responses(content):
            rid, name = pair_key(response) or (None, None)
            match = by_id.get(rid) if rid else None
            if match is None:
                match = next((c for c in pending if not c.id and c.name == name), None)
            if match is not None:
                if match in pending:
                    pending.remove(match)
                pairs[(i, j)] = (match.turn, match.part)
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
