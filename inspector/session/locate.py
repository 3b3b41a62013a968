"""Where a value sits in a JSON document: the line an error about it names.

A legacy recording or a ``/chat save`` checkpoint is one pretty-printed JSON
document, parsed whole; the parsed values no longer know where they were.
When one of them is wrong (a message whose content is a number, a history
that is not a list), the error names the line it starts on, found here by
walking the document's text along the value's path (``["messages", 3]``)
without building anything.  Only ever asked once, for an error.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

_SPACE = re.compile(rb"[ \t\n\r]*")
_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"', re.DOTALL)
_SCALAR = re.compile(rb"[^,\]}\s]+")
_STRUCTURE = re.compile(rb'["\[\]{}]')

Path = Sequence[str | int]  # object keys and list positions, from the document's top


class _NotThere(Exception):
    """The path leads nowhere in this text (or the text is not what was parsed)."""


def line_of(data: bytes, path: Path) -> int | None:
    """The line (from 1) on which the value at ``path`` starts in the JSON document ``data``,
    or None when it cannot be found.  A key written twice counts where it is written last,
    as ``JSON.parse`` keeps the last."""
    try:
        offset = _find(data, _skip_space(data, _after_bom(data)), path)
    except (_NotThere, IndexError, ValueError, RecursionError):
        return None
    return data.count(b"\n", 0, offset) + 1


def _after_bom(data: bytes) -> int:
    return 3 if data.startswith(b"\xef\xbb\xbf") else 0


def _skip_space(data: bytes, at: int) -> int:
    found = _SPACE.match(data, at)
    return found.end() if found else at


def _find(data: bytes, at: int, path: Path) -> int:
    """The offset of the value at ``path``, given the offset of the value it is inside."""
    for step in path:
        at = _member(data, at, step) if isinstance(step, str) else _element(data, at, step)
    return at


def _string_end(data: bytes, at: int) -> int:
    """Where the JSON string starting at ``at`` ends (past its closing quote)."""
    found = _STRING.match(data, at)
    if found is None:
        raise _NotThere
    return found.end()


def _member(data: bytes, at: int, key: str) -> int:
    """The offset of the last member ``key`` of the object starting at ``at``."""
    if data[at:at + 1] != b"{":
        raise _NotThere
    found: int | None = None
    at = _skip_space(data, at + 1)
    if data[at:at + 1] == b"}":
        raise _NotThere
    while True:
        name_end = _string_end(data, at)
        name = data[at:name_end]
        at = _skip_space(data, name_end)
        if data[at:at + 1] != b":":
            raise _NotThere
        value = _skip_space(data, at + 1)
        if json.loads(name.decode("utf-8", "surrogatepass")) == key:
            found = value
        at = _skip_space(data, _end_of_value(data, value))
        if data[at:at + 1] == b"}":
            break
        if data[at:at + 1] != b",":
            raise _NotThere
        at = _skip_space(data, at + 1)
    if found is None:
        raise _NotThere
    return found


def _element(data: bytes, at: int, index: int) -> int:
    """The offset of element ``index`` of the list starting at ``at``."""
    if data[at:at + 1] != b"[":
        raise _NotThere
    at = _skip_space(data, at + 1)
    for _ in range(index):
        if data[at:at + 1] == b"]":
            raise _NotThere
        at = _skip_space(data, _end_of_value(data, at))
        if data[at:at + 1] != b",":
            raise _NotThere
        at = _skip_space(data, at + 1)
    if data[at:at + 1] == b"]":
        raise _NotThere
    return at


def _end_of_value(data: bytes, at: int) -> int:
    """Where the value starting at ``at`` ends (a container is skipped by counting brackets)."""
    first = data[at:at + 1]
    if first == b'"':
        return _string_end(data, at)
    if first not in (b"{", b"["):
        scalar = _SCALAR.match(data, at)
        if scalar is None:
            raise _NotThere
        return scalar.end()
    depth = 0
    while True:
        mark = _STRUCTURE.search(data, at)
        if mark is None:
            raise _NotThere
        char = mark.group()
        if char == b'"':
            at = _string_end(data, mark.start())
            continue
        depth += 1 if char in (b"{", b"[") else -1
        at = mark.end()
        if depth == 0:
            return at
