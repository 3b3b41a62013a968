"""Fast structural checks of records, with messages a person can act on.

Gemini CLI tolerates a lot of odd data by accident (and crashes on some of
it).  These checks reject the shapes that cannot be a real session record
before any figure is computed from them.  They are hand-written rather than a
pydantic model because they run on every record of a 170k-turn file, where a
model validation costs several times the whole reference's run.

A check returns None, or a ``Problem``: what is wrong and the path to the
wrong value inside the checked record, so that the error about a record in
an indented document can name the line of that value (``locate.line_of``).
Paths are built only once something is wrong.
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass
from typing import Any

PathKey = str | int


@dataclass(frozen=True)
class Problem:
    """What is wrong with a record: the wrong value's path inside it, and what it must be."""

    path: tuple[PathKey, ...]  # ("content", 0, "functionCall"): keys and list positions
    what: str  # "must be an object, not null"

    def inside(self, *outer: PathKey) -> Problem:
        """The same problem, its path seen from a value that holds this one at ``outer``."""
        return Problem((*outer, *self.path), self.what)

    def __str__(self) -> str:
        return f"{spelled(self.path)} {self.what}" if self.path else self.what


def spelled(path: tuple[PathKey, ...]) -> str:
    """A path for a person: ``content[0].functionCall``; one key alone is quoted (``'tokens'``)."""
    if len(path) == 1 and isinstance(path[0], str):
        return f"'{path[0]}'"
    text = ""
    for key in path:
        text += f"[{key}]" if isinstance(key, int) else (f".{key}" if text else key)
    return text


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


def _not(expected: str, value: Any, *path: PathKey) -> Problem:
    return Problem(path, f"must be {expected}, not {type_name(value)}")


def check_part(part: Any, strict: bool = False) -> Problem | None:
    """Problems with one part (paths from the part); ``strict`` for a message's ``content``
    (see check_parts)."""
    if isinstance(part, str):
        return None
    if not isinstance(part, dict):
        return _not("an object or text", part)
    text = part.get("text")
    if text is not None and not isinstance(text, str):
        return _not("text", text, "text")
    for key in ("functionCall", "functionResponse", "inlineData", "fileData"):
        value = part.get(key)
        if value is None:
            if strict and key in part and key != "fileData":
                # Gemini CLI throws on these while reading a message and drops the line.
                return Problem((key,), "must be an object, not null")
            continue
        if not isinstance(value, dict):
            return _not("an object", value, key)
    inline = part.get("inlineData")
    if strict and isinstance(inline, dict):
        mime = inline.get("mimeType")
        if mime is not None and not isinstance(mime, str):
            return _not("text", mime, "inlineData", "mimeType")
    response = part.get("functionResponse")
    if isinstance(response, dict):
        name = response.get("name")
        if name is not None and not isinstance(name, str):
            return _not("text", name, "functionResponse", "name")
        nested = response.get("parts")
        if nested is not None:
            if not isinstance(nested, list):
                return _not("a list", nested, "functionResponse", "parts")
            for i, inner in enumerate(nested):
                problem = check_part(inner)
                if problem is not None:
                    return problem.inside("functionResponse", "parts", i)
    return None


def check_parts(value: Any, strict: bool = False) -> Problem | None:
    """``content`` of a message: text, one part, a list of parts, or nothing (paths from the value).

    ``strict``: also refuse what makes Gemini CLI's ``partListUnionToString``
    throw (a null ``functionCall``/``functionResponse``/``inlineData``, a
    non-text ``mimeType``), which it runs on every message's content.
    """
    if value is None or isinstance(value, str):
        return None
    if isinstance(value, dict):
        return check_part(value, strict)
    if isinstance(value, list):
        for i, part in enumerate(value):
            problem = check_part(part, strict)
            if problem is not None:
                return problem.inside(i)
        return None
    return _not("text, a part or a list of parts", value)


def check_message(record: dict[str, Any]) -> Problem | None:
    """Problems with one message record (its ``id`` is known to be text)."""
    kind = record.get("type")
    if kind is not None and not isinstance(kind, str):
        return _not("text", kind, "type")
    problem = check_parts(record.get("content"), strict=True)
    if problem is not None:
        return problem.inside("content")
    calls = record.get("toolCalls")
    if calls is not None:
        if not isinstance(calls, list):
            return _not("a list", calls, "toolCalls")
        for i, call in enumerate(calls):
            if not isinstance(call, dict):
                return _not("an object", call, "toolCalls", i)
            result = call.get("result")
            if isinstance(result, list):
                problem = check_parts(result)
                if problem is not None:
                    return problem.inside("toolCalls", i, "result")
            elif result is not None and not isinstance(result, (str, dict)):
                return _not("text, a part or a list of parts", result, "toolCalls", i, "result")
    thoughts = record.get("thoughts")
    if thoughts is not None:
        if not isinstance(thoughts, list):
            return _not("a list", thoughts, "thoughts")
        for i, thought in enumerate(thoughts):
            if not isinstance(thought, dict):
                return _not("an object", thought, "thoughts", i)
    tokens = record.get("tokens")
    if tokens is not None and not isinstance(tokens, dict):
        return _not("an object", tokens, "tokens")
    for key, value in (tokens or {}).items():
        what = check_count(value)
        if what:
            return Problem(("tokens", key), what)
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


def check_content(content: Any) -> Problem | None:
    """One Content of a ``/chat save`` checkpoint (paths from the Content)."""
    if not isinstance(content, dict):
        return Problem((), f"must be an object with 'role' and 'parts', not {type_name(content)}")
    role = content.get("role")
    if role not in ("user", "model"):
        return Problem(("role",), f"must be \"user\" or \"model\", not {role!r}")
    parts = content.get("parts")
    if not isinstance(parts, list):
        return _not("a list", parts, "parts")
    for i, part in enumerate(parts):
        if not isinstance(part, dict):
            return _not("an object", part, "parts", i)
        problem = check_part(part)
        if problem is not None:
            return problem.inside("parts", i)
    return None
