"""Fast structural checks of records, with messages a person can act on.

Gemini CLI tolerates a lot of odd data by accident (and crashes on some of
it).  These checks reject the shapes that cannot be a real session record
before any figure is computed from them.  They are hand-written rather than a
pydantic model because they run on every record of a 170k-turn file, where a
model validation costs several times the whole reference's run.
"""

from __future__ import annotations

import math
import sys
from typing import Any


def type_name(value: Any) -> str:
    """What a JSON value is, for a person: null, true/false, a number, text, a list, an object."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true/false"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "text"
    if isinstance(value, list):
        return "a list"
    return "an object"


def check_part(part: Any, where: str, strict: bool = False) -> str | None:
    """Problems with one part; ``strict`` for a message's ``content`` (see check_parts)."""
    if isinstance(part, str):
        return None
    if not isinstance(part, dict):
        return f"{where} must be an object or text, not {type_name(part)}"
    text = part.get("text")
    if text is not None and not isinstance(text, str):
        return f"{where}.text must be text, not {type_name(text)}"
    for key in ("functionCall", "functionResponse", "inlineData", "fileData"):
        value = part.get(key)
        if value is None:
            if strict and key in part and key != "fileData":
                # Gemini CLI throws on these while reading a message and drops the line.
                return f"{where}.{key} must be an object, not null"
            continue
        if not isinstance(value, dict):
            return f"{where}.{key} must be an object, not {type_name(value)}"
    inline = part.get("inlineData")
    if strict and isinstance(inline, dict):
        mime = inline.get("mimeType")
        if mime is not None and not isinstance(mime, str):
            return f"{where}.inlineData.mimeType must be text, not {type_name(mime)}"
    response = part.get("functionResponse")
    if isinstance(response, dict):
        name = response.get("name")
        if name is not None and not isinstance(name, str):
            return f"{where}.functionResponse.name must be text, not {type_name(name)}"
        nested = response.get("parts")
        if nested is not None:
            if not isinstance(nested, list):
                return f"{where}.functionResponse.parts must be a list, not {type_name(nested)}"
            for i, inner in enumerate(nested):
                problem = check_part(inner, f"{where}.functionResponse.parts[{i}]")
                if problem:
                    return problem
    return None


def check_parts(value: Any, where: str, strict: bool = False) -> str | None:
    """``content`` of a message: text, one part, a list of parts, or nothing.

    ``strict``: also refuse what makes Gemini CLI's ``partListUnionToString``
    throw (a null ``functionCall``/``functionResponse``/``inlineData``, a
    non-text ``mimeType``), which it runs on every message's content.
    """
    if value is None or isinstance(value, str):
        return None
    if isinstance(value, dict):
        return check_part(value, where, strict)
    if isinstance(value, list):
        for i, part in enumerate(value):
            problem = check_part(part, f"{where}[{i}]", strict)
            if problem:
                return problem
        return None
    return f"{where} must be text, a part or a list of parts, not {type_name(value)}"


def check_message(record: dict[str, Any]) -> str | None:
    """Problems with one message record (its ``id`` is known to be text)."""
    kind = record.get("type")
    if kind is not None and not isinstance(kind, str):
        return f"'type' must be text, not {type_name(kind)}"
    problem = check_parts(record.get("content"), "content", strict=True)
    if problem:
        return problem
    calls = record.get("toolCalls")
    if calls is not None:
        if not isinstance(calls, list):
            return f"'toolCalls' must be a list, not {type_name(calls)}"
        for i, call in enumerate(calls):
            if not isinstance(call, dict):
                return f"toolCalls[{i}] must be an object, not {type_name(call)}"
            result = call.get("result")
            if isinstance(result, list):
                problem = check_parts(result, f"toolCalls[{i}].result")
                if problem:
                    return problem
            elif result is not None and not isinstance(result, (str, dict)):
                return f"toolCalls[{i}].result must be text, a part or a list of parts, not {type_name(result)}"
    thoughts = record.get("thoughts")
    if thoughts is not None:
        if not isinstance(thoughts, list):
            return f"'thoughts' must be a list, not {type_name(thoughts)}"
        for i, thought in enumerate(thoughts):
            if not isinstance(thought, dict):
                return f"thoughts[{i}] must be an object, not {type_name(thought)}"
    tokens = record.get("tokens")
    if tokens is not None and not isinstance(tokens, dict):
        return f"'tokens' must be an object, not {type_name(tokens)}"
    for key, value in (tokens or {}).items():
        problem = check_count(value)
        if problem:
            return f"tokens.{key} {problem}"
    return None


def check_count(value: Any) -> str | None:
    """A recorded token count: any finite number (as Gemini CLI reads it), or null (not recorded).

    Text, true/false and numbers too large for a double (``1e400`` reads as
    infinity, here and in Gemini CLI) cannot be a count: no figure can be
    computed from them.
    """
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return f"must be a number, not {type_name(value)}"
    if (isinstance(value, float) and not math.isfinite(value)) or (isinstance(value, int) and abs(value) > MAX_DOUBLE):
        return "must be a finite number, not one too large to read (it reads as infinity)"
    return None


MAX_DOUBLE = int(sys.float_info.max)  # an int: compiled code compares ints with ints, never via a float


def check_content(content: Any) -> str | None:
    """One Content of a ``/chat save`` checkpoint."""
    if not isinstance(content, dict):
        return f"must be an object with 'role' and 'parts', not {type_name(content)}"
    role = content.get("role")
    if role not in ("user", "model"):
        return f"'role' must be \"user\" or \"model\", not {role!r}"
    parts = content.get("parts")
    if not isinstance(parts, list):
        return f"'parts' must be a list, not {type_name(parts)}"
    for i, part in enumerate(parts):
        if not isinstance(part, dict):
            return f"parts[{i}] must be an object, not {type_name(part)}"
        problem = check_part(part, f"parts[{i}]")
        if problem:
            return problem
    return None
