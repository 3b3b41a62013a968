"""The messages of a big recording, kept as their lines and parsed on demand.

``MessageList`` is a read-only sequence of message records: each item is
either a record held in memory (messages from a ``$set.messages`` checkpoint)
or the place of its line in the file's bytes, parsed the first time it is
read (and the same object after that).  Code that reads ``session.messages``
sees plain dicts either way.
"""

from __future__ import annotations

import contextlib
import json
import os
import weakref
from array import array
from collections import OrderedDict
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

import orjson

from inspector.session.errors import SessionError
from inspector.session.lazy import LazyList


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _js_int(digits: str) -> int | float:
    """An integer literal: exact, as the rest of the core compares it the way JavaScript reads it
    (``jsjson``), except past the length Python turns into an ``int`` at all (4,300 digits), where
    JavaScript's double is what is left of it (``Infinity`` from 309 digits on)."""
    return int(digits) if len(digits) <= 4000 else float(digits)


def js_json_loads(text: str) -> Any:
    """``JSON.parse``: the standard parser without its NaN/Infinity extension."""
    return json.loads(text, parse_constant=_no_constant, parse_int=_js_int)


def loads_line(raw: bytes | memoryview) -> Any:
    """One line (or a whole document) as ``JSON.parse`` reads it (after Node decoded it as UTF-8)."""
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError:
        # orjson refuses a few things JavaScript accepts (lone surrogate
        # escapes, integers beyond 64 bits, invalid UTF-8 that Node replaces
        # with U+FFFD): ask the standard parser.
        return js_json_loads(str(raw, "utf-8", "replace"))  # (decoded in place: no copy of a long line)


def held_back_at_end(raw: bytes | memoryview) -> int:
    """How many bytes at the end of a file Node's UTF-8 decoder holds back as the start of a character
    still to come, and so never gives Gemini CLI's line reader (which ends without flushing it): a lead
    byte and fewer continuation bytes than it announces (at most three looked at, as Node looks)."""
    size = len(raw)
    for back in range(1, min(size, 4) + 1):
        byte = raw[size - back]
        if byte & 0xC0 == 0x80:  # a continuation byte: look further back for its lead
            continue
        if byte & 0xE0 == 0xC0:
            wanted = 2
        elif byte & 0xF0 == 0xE0:
            wanted = 3
        elif byte & 0xF8 == 0xF0:
            wanted = 4
        else:  # ASCII, or no lead byte of UTF-8: nothing held
            return 0
        return back if back < wanted else 0
    return 0


Where = dict[str, Any] | tuple[int, int]  # a record held in memory, or its line's (start, end)


class Places:
    """Where each message is: its line's start and end in two arrays of machine integers (16 bytes a
    message, where a tuple of two ints took ~120), or the record itself for one held in memory (a
    ``$set.messages`` checkpoint's; start -1)."""

    __slots__ = ("_ends", "_held", "_starts")

    def __init__(self, items: Iterable[Where] = ()) -> None:
        self._starts = array("q")
        self._ends = array("q")
        self._held: dict[int, dict[str, Any]] = {}
        self.extend(items)

    def extend(self, items: Iterable[Where]) -> None:
        starts, ends = self._starts, self._ends
        for item in items:
            if type(item) is tuple:
                starts.append(item[0])
                ends.append(item[1])
            else:
                assert isinstance(item, dict)
                self._held[len(starts)] = item
                starts.append(-1)
                ends.append(-1)

    def __len__(self) -> int:
        return len(self._starts)

    def at(self, index: int) -> Where:
        """Message ``index``'s record, or its line's (start, end)."""
        start = self._starts[index]
        return self._held[index] if start < 0 else (start, self._ends[index])

    def cut(self, keep: int) -> None:
        """Only the first ``keep`` messages stay."""
        del self._starts[keep:]
        del self._ends[keep:]
        for i in [k for k in self._held if k >= keep]:
            del self._held[i]

    def copy(self) -> Places:
        copied = Places()
        copied._starts, copied._ends, copied._held = self._starts[:], self._ends[:], dict(self._held)
        return copied


# How many records a list read from its file keeps parsed: the ones read last (a turn opened, the rows
# around it), never the whole history (a pass over every message would otherwise keep them all).
KEPT_FROM_FILE = 256


class MessageList(LazyList[dict[str, Any]]):
    """Message records in order; each parsed from its line when read.

    The lines come from the file's bytes held in memory (``data``) or, for a
    big recording, from the file itself (``fd``, an open descriptor this list
    owns): the same file even if it has been replaced since, and checked
    (length and id) so that a file rewritten in place is reported, never
    misread.  Records of a list held in memory stay parsed once read (the
    same object every time); a list that reads its file keeps only the
    ``KEPT_FROM_FILE`` read last, so that its memory follows what is looked
    at, not what was read.
    """

    __slots__ = ("__weakref__", "_data", "_fd", "_ids", "_items", "_parsed", "_path")

    def __init__(
        self, data: bytes | None, items: Iterable[Where] | Places, *,
        fd: int | None = None, ids: list[str] | None = None, path: Path | None = None,
    ) -> None:
        self._data = data
        self._items = items if isinstance(items, Places) else Places(items)  # each message: a record, or its line
        # read once, then the same object every time (from a file: the KEPT_FROM_FILE read last)
        self._parsed: OrderedDict[int, dict[str, Any]] = OrderedDict()
        self._fd = fd
        self._ids = ids  # with fd: each message's id, to check what is read
        self._path = path
        if fd is not None:
            weakref.finalize(self, os.close, fd)

    def __len__(self) -> int:
        return len(self._items)

    @property
    def reads_file(self) -> bool:
        """Messages are read again from the file (a big recording), not from bytes held in memory."""
        return self._fd is not None

    def copies(self) -> tuple[Places, list[str] | None]:
        """Copies of what ``extended`` would copy, made ahead of time (``inspector.live.extend.prepare``)."""
        return self._items.copy(), list(self._ids) if self._ids is not None else None

    def extended(self, keep: int, items: list[Where], ids: list[str],
                 copies: tuple[Places, list[str] | None] | None = None) -> MessageList:
        """A new list: the first ``keep`` messages of this one, then ``items`` (``ids``: their ids).

        For a recording that grew: the new list reads the same bytes or file
        (through a descriptor of its own), and this one stays as it was.
        ``copies`` (from ``copies()`` on this list) are cut and grown instead of copying again."""
        fd = os.dup(self._fd) if self._fd is not None else None
        if copies is None:
            own, merged = self._items.copy(), self._ids[:keep] if self._ids is not None else None
        else:
            own, merged = copies
            if merged is not None:
                del merged[keep:]
        own.cut(keep)
        own.extend(items)
        if merged is not None:
            merged += ids
        grown = MessageList(self._data, own, fd=fd, ids=merged, path=self._path)
        # Records already parsed stay parsed: the same dict while nothing of this list is replaced
        # (the new list only adds indices this one never reads), a copy without the replaced ones else.
        if keep == len(self._items):
            grown._parsed = self._parsed
        else:
            grown._parsed = OrderedDict((i, record) for i, record in self._parsed.items() if i < keep)
        return grown

    def _at(self, index: int) -> dict[str, Any]:
        item = self._items.at(index)
        if type(item) is not tuple:
            assert isinstance(item, dict)
            return item
        parsed = self._parsed
        record = parsed.get(index)
        if record is None:
            record = parsed[index] = self._read(index, *item)
            if self._fd is not None and len(parsed) > KEPT_FROM_FILE:
                parsed.popitem(last=False)  # the one read longest ago
        elif self._fd is not None:
            parsed.move_to_end(index)
        return record

    def peek(self, index: int) -> dict[str, Any]:
        """The record at ``index``, parsed but not kept (for one pass over a big session)."""
        item = self._items.at(index)
        if type(item) is not tuple:
            assert isinstance(item, dict)
            return item
        return self._parsed.get(index) or self._read(index, *item)

    def _read(self, index: int, start: int, end: int) -> dict[str, Any]:
        if self._data is not None:
            return loads_line(memoryview(self._data)[start:end])  # type: ignore[no-any-return]
        assert self._fd is not None and self._ids is not None
        raw = b""
        with contextlib.suppress(OSError):
            raw = os.pread(self._fd, end - start, start)
        try:
            record = loads_line(raw) if len(raw) == end - start else None
        except ValueError:
            record = None
        if not isinstance(record, dict) or record.get("id") != self._ids[index]:
            raise SessionError(self._path or Path("?"), "changed on disk since it was read (rewritten in place); "
                               "open it again")
        return record

    def __reversed__(self) -> Iterator[dict[str, Any]]:
        for i in range(len(self._items) - 1, -1, -1):
            yield self._at(i)

    def __add__(self, other: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
        return [*self, *other]

    def __radd__(self, other: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
        return [*other, *self]

    def __repr__(self) -> str:
        return f"MessageList({len(self)} messages)"


def peek(messages: Sequence[dict[str, Any]], index: int) -> dict[str, Any]:
    """``messages[index]``, not kept parsed when ``messages`` is a MessageList."""
    return messages.peek(index) if isinstance(messages, MessageList) else messages[index]
