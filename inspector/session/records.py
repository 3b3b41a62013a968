"""The messages of a big recording, kept as their lines and parsed on demand.

``MessageList`` is a read-only sequence of message records: each item is
either a record held in memory (messages from a ``$set.messages`` checkpoint)
or the place of its line in the file's bytes, parsed the first time it is
read (and the same object after that).  Code that reads ``session.messages``
sees plain dicts either way.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from typing import Any, overload

import orjson


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def js_json_loads(text: str) -> Any:
    """``JSON.parse``: the standard parser without its NaN/Infinity extension."""
    return json.loads(text, parse_constant=_no_constant)


def loads_line(raw: bytes | memoryview) -> Any:
    """One line as ``JSON.parse`` reads it (after Node decoded it as UTF-8)."""
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError:
        # orjson refuses a few things JavaScript accepts (lone surrogate
        # escapes, integers beyond 64 bits, invalid UTF-8 that Node replaces
        # with U+FFFD): ask the standard parser.
        return js_json_loads(bytes(raw).decode("utf-8", "replace"))


class MessageList(Sequence[dict[str, Any]]):
    """Message records in order; each parsed from its line when read."""

    __slots__ = ("_data", "_items", "_parsed")

    def __init__(self, data: bytes, items: list[dict[str, Any] | tuple[int, int]]) -> None:
        self._data = data
        self._items = items  # a record, or the (start, end) of its line in data
        self._parsed: dict[int, dict[str, Any]] = {}  # read once, then the same object every time

    def __len__(self) -> int:
        return len(self._items)

    def _get(self, item: dict[str, Any] | tuple[int, int]) -> dict[str, Any]:
        if type(item) is tuple:
            start, end = item
            record = self._parsed.get(start)
            if record is None:
                record = self._parsed[start] = loads_line(memoryview(self._data)[start:end])
            return record
        assert isinstance(item, dict)
        return item

    @overload
    def __getitem__(self, index: int) -> dict[str, Any]: ...

    @overload
    def __getitem__(self, index: slice) -> list[dict[str, Any]]: ...

    def __getitem__(self, index: int | slice) -> dict[str, Any] | list[dict[str, Any]]:
        if isinstance(index, slice):
            return [self._get(item) for item in self._items[index]]
        return self._get(self._items[index])

    def __iter__(self) -> Iterator[dict[str, Any]]:
        for item in self._items:
            yield self._get(item)

    def __reversed__(self) -> Iterator[dict[str, Any]]:
        for item in reversed(self._items):
            yield self._get(item)

    def __add__(self, other: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
        return [*self, *other]

    def __radd__(self, other: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
        return [*other, *self]

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (list, MessageList)):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"MessageList({len(self)} messages)"
