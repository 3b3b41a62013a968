"""Reading a JSONL recording the way ``loadConversationRecord`` replays it.

Two steps.  ``scan`` reads lines and turns each into a small item (a
message with its figures, a rewind, a ``$set``, metadata, a skipped line);
lines are independent, so a big file is scanned in two halves at once (a
forked process takes the second half; see ``scan_file``).  ``replay`` then
applies the items in file order: ids keep their first position, a repeated id
replaces the message, ``$rewindTo`` drops a message and all after it (every
message if the id is unknown), a ``$set.messages`` checkpoint replaces them
all, ``$set`` merges metadata.
"""

from __future__ import annotations

import json
import marshal
import os
import re
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from inspector.jsjson import JS_WHITESPACE
from inspector.session.errors import LoadWarning
from inspector.session.figures import TurnFigures, message_figures
from inspector.session.records import loads_line
from inspector.session.validate import check_message

_LINE_BREAK = re.compile(rb"\r\n|\r|\n")
_BLANK_BYTES = b" \t\n\r\v\f"
PARALLEL_MIN_BYTES = 8 << 20  # below this a second process costs more than it saves

Where = dict[str, Any] | tuple[int, int]  # a record held in memory, or its line's (start, end)
# One checked message: (id, where, figures, line, problem); figures are () when there is a problem.
Message = tuple[str, Where, tuple[TurnFigures, ...], int, str | None]


def line_spans(data: bytes, start: int = 0, stop: int | None = None) -> Iterator[tuple[int, int]]:
    """(start, end) of every line as Node's readline splits them (LF, CRLF, lone CR)."""
    size = len(data) if stop is None else stop
    if b"\r" not in data:
        find = data.find
        while start < size:
            end = find(b"\n", start, size)
            if end == -1:
                end = size
            yield start, end
            start = end + 1
        return
    for match in _LINE_BREAK.finditer(data, start, size):
        yield start, match.start()
        start = match.end()
    if start < size:
        yield start, size


def is_blank(raw: bytes) -> bool:
    """Blank as JavaScript's ``trim`` sees it (Gemini CLI skips such lines)."""
    if not raw.strip(_BLANK_BYTES):
        return True
    if raw.isascii():
        return False
    return not raw.decode("utf-8", "replace").strip(JS_WHITESPACE)


def _message(record: dict[str, Any], where: Where, line: int, label: str, later: set[str]) -> Message:
    """A checked message; its figures only if no later record replaces it (``later``: ids seen after it)."""
    ident = record["id"]
    problem = check_message(record)
    if problem:
        return ident, where, (), line, f"{label}: {problem}"
    if ident in later:
        return ident, where, (), line, None  # replaced further down: its figures would be thrown away
    later.add(ident)
    return ident, where, message_figures(record), line, None


def _listed(messages: list[Any], line: int, label: str, later: set[str]) -> list[Message]:
    found: list[Message] = []
    for i in range(len(messages) - 1, -1, -1):  # from the end, as scan reads lines
        m = messages[i]
        if isinstance(m, dict) and isinstance(m.get("id"), str):
            found.append(_message(m, m, line, f"{label}[{i}]", later))
    found.reverse()
    return found


def scan(data: bytes, start: int = 0, stop: int | None = None, first_line: int = 1) -> list[tuple[Any, ...]]:
    """The items of the lines in ``data[start:stop]`` (line numbers from ``first_line``), in order.

    Lines are read from the last to the first so that a message Gemini CLI
    wrote again later (same id) is measured only once, in its final form.

    Items: ``("m", Message)``, ``("r", line, target)``, ``("s", line, update, listed | None)``,
    ``("h", line, metadata, listed | None)``, ``("w", line, warning text)``.
    """
    items: list[tuple[Any, ...]] = []
    view = memoryview(data)
    size = len(data)
    later: set[str] = set()  # ids met further down the file (read from the end, to skip replaced copies)
    spans = list(enumerate(line_spans(data, start, stop), start=first_line))
    for number, (begin, end) in reversed(spans):
        raw = view[begin:end]
        try:
            record = loads_line(raw)
        except (json.JSONDecodeError, RecursionError, ValueError) as exc:
            if is_blank(bytes(raw)):
                continue
            reason = f"{exc.msg} at column {exc.colno}" if isinstance(exc, json.JSONDecodeError) else str(exc)
            last = end == size and not data.endswith(b"\n")
            what = "incomplete last line (still being written?)" if last else "not valid JSON"
            items.append(("w", number, f"{what}: {reason}; skipped"))
            continue
        if type(record) is not dict:
            continue
        rewind = record.get("$rewindTo")
        if type(rewind) is str:
            items.append(("r", number, rewind))
            continue
        ident = record.get("id")
        if type(ident) is str:
            items.append(("m", _message(record, (begin, end), number, f"message {ident!r}", later)))
            continue
        update = record.get("$set")
        if isinstance(update, dict):
            checkpoint = update.get("messages")
            listed = None
            if isinstance(checkpoint, list):
                listed = _listed(checkpoint, number, "$set.messages", later)
                update = {k: v for k, v in update.items() if k != "messages"}
            items.append(("s", number, update, listed))
            continue
        if isinstance(record.get("sessionId"), str) and isinstance(record.get("projectHash"), str):
            metadata = {k: v for k, v in record.items() if k != "messages"}
            messages = record.get("messages")
            items.append(("h", number, metadata, _listed(messages, number, "messages", later)
                          if isinstance(messages, list) else None))
    items.reverse()
    return items


def scan_file(data: bytes) -> tuple[list[tuple[Any, ...]], int]:
    """Every item of ``data`` and its line count; big files in two processes at once.

    The second half goes to a forked child (which shares ``data`` without a
    copy) and comes back through a pipe, marshalled.  Only done from a single-threaded process
    (the command line): forking a threaded one (the app) is not safe.
    """
    lines = _line_count(data)
    if not _parallel_ok(data):
        return scan(data), lines
    # The child also has to send its items back: give it a little less than half.
    middle = data.find(b"\n", len(data) * 53 // 100) + 1
    if middle <= 0 or middle >= len(data):
        return scan(data), lines
    first_of_second = data.count(b"\n", 0, middle) + 1
    reader, writer = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: scan the second half, send it, leave at once
        status = 0
        try:
            os.close(reader)
            payload = marshal.dumps(scan(data, middle, None, first_of_second))
            with os.fdopen(writer, "wb") as out:
                out.write(payload)
        except BaseException:
            status = 1
        finally:
            os._exit(status)
    os.close(writer)
    try:
        first = scan(data, 0, middle, 1)
    finally:
        with os.fdopen(reader, "rb") as incoming:
            payload = incoming.read()
        _, status = os.waitpid(pid, 0)
    if status != 0 or not payload:
        return first + scan(data, middle, None, first_of_second), lines
    second: list[tuple[Any, ...]] = marshal.loads(payload)
    return first + second, lines


def _line_count(data: bytes) -> int:
    if b"\r" in data:
        return sum(1 for _ in line_spans(data))
    return data.count(b"\n") + (0 if data.endswith(b"\n") or not data else 1)


def _parallel_ok(data: bytes) -> bool:
    if len(data) < PARALLEL_MIN_BYTES or b"\r" in data or not hasattr(os, "fork"):
        return False
    if os.environ.get("SESSION_INSPECTOR_SERIAL") or (os.cpu_count() or 1) < 2:
        return False
    return threading.active_count() == 1


@dataclass
class Replayed:
    """The state after replaying every item."""

    metadata: dict[str, Any] = field(default_factory=dict)
    entries: dict[str, tuple[Where, tuple[TurnFigures, ...], int]] = field(default_factory=dict)
    warnings: list[LoadWarning] = field(default_factory=list)
    first_error: int | None = None
    problem: tuple[int, str] | None = None  # the first message that cannot be read: (line, what)


def replay(items: list[tuple[Any, ...]]) -> Replayed:
    state = Replayed()
    entries = state.entries

    def add(messages: list[Message]) -> bool:
        for ident, where, figures, line, problem in messages:
            if problem is not None:
                state.problem = (line, problem)
                return False
            entries[ident] = (where, figures, line)
        return True

    for item in items:
        kind = item[0]
        if kind == "m":
            if not add([item[1]]):
                break
        elif kind == "r":
            target = item[2]
            if target not in entries:
                entries.clear()
            else:
                kept = {}
                for ident, entry in entries.items():
                    if ident == target:
                        break
                    kept[ident] = entry
                entries.clear()
                entries.update(kept)
        elif kind == "s":
            if item[3] is not None:
                entries.clear()
                if not add(item[3]):
                    break
            state.metadata.update(item[2])
        elif kind == "h":
            state.metadata.update(item[2])
            if item[3] is not None and not add(item[3]):
                break
        else:  # "w"
            state.warnings.append(LoadWarning(item[1], item[2]))
            if state.first_error is None:
                state.first_error = item[1]
    return state
