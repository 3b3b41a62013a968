"""Reading a JSONL recording the way ``loadConversationRecord`` replays it.

Two steps.  ``scan`` reads lines and turns each into a small item (a
message with the rows of its turns, a rewind, a ``$set``, metadata, a
skipped line); lines are independent, so a big file is scanned in parts, in
two processes at once (``reader``).  ``replay`` then applies the items in file
order: ids keep their first position, a repeated id replaces the message,
``$rewindTo`` drops a message and all after it (every message if the id is
unknown), a ``$set.messages`` checkpoint replaces them all, ``$set`` merges
metadata.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, Final

import orjson

from inspector.jsjson import JS_WHITESPACE
from inspector.session.errors import LoadWarning
from inspector.session.records import held_back_at_end, loads_line
from inspector.session.rows import BLOCK_ITEM, NO_ROWS, MessageRows, RowBlock
from inspector.session.validate import check_message, type_name
from inspector.session.yielding import let_others_run

_LINE_BREAK = re.compile(rb"\r\n|\r|\n")
_BLANK_BYTES = b" \t\n\r\v\f"
_RUN_BYTES = b" \t\n\v\f"  # blank bytes a line of a file without CR may hold, its newline included

Where = dict[str, Any] | tuple[int, int]  # a record held in memory, or its line's (start, end)
# One checked message: (id, where, rows, line, problem): where the rows of its turns are (``rows.RowsAt``: in
# its scan's block), () when it has none or there is a problem.
Message = tuple[str, Where, MessageRows, int, str | None]
# A Message's fields by name (a plain tuple, as marshal carries it between the reader's processes).
MESSAGE_ID: Final = 0
MESSAGE_WHERE: Final = 1
MESSAGE_ROWS: Final = 2
MESSAGE_LINE: Final = 3
MESSAGE_PROBLEM: Final = 4
# Every scan item starts with its kind ("m", "r", "s", "h", "w", "b"; see ``scan``), then the line, except "m"
# (the Message, which holds its line) and "b" (a block of rows, of many lines).
ITEM_KIND: Final = 0
ITEM_LINE: Final = 1
ITEM_MESSAGE: Final = 1  # "m": the Message
ITEM_TARGET: Final = 2  # "r": the id it rewinds to
ITEM_UPDATE: Final = 2  # "s" and "h": the metadata it sets
ITEM_LISTED: Final = 3  # "s" and "h": the Messages it lists (a checkpoint), or None
ITEM_TEXT: Final = 2  # "w": what the warning says
ITEM_READ: Final = 3  # "w": whether Gemini CLI reads the line all the same
ITEM_BLOCK_KEY: Final = 1  # "b": the block's key (``rows.RowBlock``), instead of a line
ITEM_PAYLOAD: Final = 2  # "b": its rows


def _c_count_newlines() -> Callable[[bytes, int, int], int] | None:
    try:
        from inspector._kernel import count_newlines as found
    except ImportError:  # built without a C compiler
        return None
    return found


_C_COUNT_NEWLINES = _c_count_newlines()


def count_newlines(data: bytes, start: int, stop: int) -> int:
    """``data.count(b"\\n", start, stop)`` (0 <= start <= stop), in C where it is built."""
    if _C_COUNT_NEWLINES is not None:
        return _C_COUNT_NEWLINES(data, start, stop)
    return data.count(b"\n", start, stop)


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


# With CR line ends (LF, CRLF or a lone CR, as Node's readline splits): a run of blank lines, or one line
# that holds something other than blanks, with its line break.
_CR_PIECE = re.compile(rb"(?P<blank>[ \t\x0b\x0c\r\n]*[\r\n])|[^\r\n]+(?:\r\n|\r|\n)?")


def _lines_holding_something(data: bytes, start: int, stop: int) -> list[tuple[int, int, int]]:
    """``(index, start, end)`` of each line of ``data[start:stop]`` that is not blank (LF, CRLF or
    a lone CR ending lines; ``index`` counted from 0), found a run of blank lines at a time."""
    found: list[tuple[int, int, int]] = []
    k = 0
    for match in _CR_PIECE.finditer(data, start, stop):
        begin, end = match.span()
        if match.start("blank") != -1:
            piece = data[begin:end]
            k += piece.count(b"\n") + piece.count(b"\r") - piece.count(b"\r\n")
            continue
        if data[end - 1] == 10:
            end -= 2 if end - 2 >= begin and data[end - 2] == 13 else 1
        elif data[end - 1] == 13:
            end -= 1
        found.append((k, begin, end))
        k += 1
    return found


def blank_run_start(data: bytes, low: int, end: int) -> int:
    """The start of the run of blank bytes (space, tab, LF, VT, FF) that ends at ``end``, at ``low``
    at the earliest: looked at backwards in doubling windows, so a run costs its length in C,
    and a line that only ends in blanks a few bytes."""
    size = 64
    stop = end
    while stop > low:
        begin = max(low, stop - size)
        kept = data[begin:stop].rstrip(_RUN_BYTES)
        if kept:
            return begin + len(kept)
        stop = begin
        size = min(size * 2, 1 << 20)
    return low


def is_blank(raw: bytes) -> bool:
    """Blank as JavaScript's ``trim`` sees it (Gemini CLI skips such lines)."""
    if not raw.strip(_BLANK_BYTES):
        return True
    if raw.isascii():
        return False
    return not raw.decode("utf-8", "replace").strip(JS_WHITESPACE)


def _message(record: dict[str, Any], where: Where, line: int, later: set[str], block: RowBlock,
             listed_as: str | None = None) -> Message:
    """A checked message; its figures only if no later record replaces it (``later``: ids seen after it).

    ``listed_as``: how a problem names it when it is an item of a list (else by its id)."""
    ident = record["id"]
    problem = check_message(record)
    if problem is not None:
        label = listed_as if listed_as is not None else f"message {ident!r}"
        return ident, where, NO_ROWS, line, f"{label}: {problem}"
    if ident in later:
        return ident, where, NO_ROWS, line, None  # replaced further down: its figures would be thrown away
    later.add(ident)
    return ident, where, block.add(record), line, None


def _listed(messages: list[Any], line: int, label: str, later: set[str], block: RowBlock,
            skipped: list[tuple[Any, ...]] | None = None) -> list[Message]:
    """The messages of a list a line holds; ``skipped`` gets a warning item for each entry that is no
    message (no object, or no id that is text), left out as Gemini CLI leaves it out."""
    found: list[Message] = []
    for i in range(len(messages) - 1, -1, -1):  # from the end, as scan reads lines
        m = messages[i]
        if isinstance(m, dict) and isinstance(m.get("id"), str):
            found.append(_message(m, m, line, later, block, f"{label}[{i}]"))
        elif skipped is not None:
            what = type_name(m) if not isinstance(m, dict) else f"an object whose id is {type_name(m.get('id'))}"
            skipped.append(("w", line, f"{label}[{i}] is {what}: left out, as Gemini CLI leaves it out", False))
    found.reverse()
    return found


def _read_without(raw: memoryview) -> tuple[Any] | None:
    """The record a last line holds once the start of a character cut off at its end is dropped, or None."""
    try:
        return (loads_line(raw),)
    except (json.JSONDecodeError, ValueError, RecursionError):
        return None


def scan(
    data: bytes, start: int = 0, stop: int | None = None, first_line: int = 1, *,
    base: int = 0, later: set[str] | None = None,
) -> list[tuple[Any, ...]]:
    """The items of the lines in ``data[start:stop]`` (line numbers from ``first_line``), in order.

    Lines are read from the last to the first so that a message Gemini CLI
    wrote again later (same id) is measured only once, in its final form;
    ``later`` carries the ids met so far when a file is scanned block by
    block from its end.  ``base``: the offset of ``data`` in the file (line
    places are kept as file offsets).

    Items: ``("m", Message)``, ``("r", line, target)``, ``("s", line, update, listed | None)``,
    ``("h", line, metadata, listed | None)``, ``("w", line, warning text, Gemini CLI reads the line)``,
    and last, when a message was measured, ``("b", key, payload)`` items: the rows of the messages,
    a piece at a time (``rows.RowBlock``: keys from the offset in the file of ``data[start]``).
    """
    items: list[tuple[Any, ...]] = []
    view = memoryview(data)
    size = len(data)
    stop = size if stop is None else stop
    if later is None:
        later = set()  # ids met further down the file (read from the end, to skip replaced copies)
    block = RowBlock(base + start)
    # From the last line up: each line's start found with rfind (with CR line ends, the lines that hold
    # something are listed first, with their numbers). A run of blank lines is passed over at once.
    holding = _lines_holding_something(data, start, stop) if data.find(b"\r", start, stop) != -1 else None
    k = count_newlines(data, start, stop) + (0 if stop == start or data[stop - 1] == 10 else 1)
    i = len(holding) if holding is not None else 0
    end = stop - 1 if stop > start and data[stop - 1] == 10 else stop
    lines_read = 0
    while True:
        if holding is not None:
            if i == 0:
                break
            i -= 1
            k, begin, line_end = holding[i]
        else:
            if k == 0:
                break
            k -= 1
            newline = data.rfind(b"\n", start, end)
            begin = newline + 1 if newline != -1 else start
            line_end = end
            end = begin - 1  # where the line above ends
            if line_end == begin or data[line_end - 1] in _RUN_BYTES:  # blank, or ends in blanks: maybe blank
                run = blank_run_start(data, start, line_end)
                if run <= begin:  # blank (Gemini CLI skips it), and so is every line above it down to ``run``
                    if run > start and data[run - 1] != 10:
                        run = data.find(b"\n", run, line_end) + 1  # the first blank line starts after
                    k -= count_newlines(data, run, line_end)  # (line k itself: the loop's own step)
                    end = run - 1
                    continue
        lines_read += 1
        if lines_read & 63 == 0:
            let_others_run()  # the app's event loop, when this runs in its worker thread
        number = first_line + k
        raw = view[begin:line_end]
        try:
            record = orjson.loads(raw)
        except orjson.JSONDecodeError:
            try:
                record = loads_line(raw)  # what orjson refuses and JavaScript may accept
            except RecursionError:
                items.append(("w", number, "nested deeper than this reader follows (Gemini CLI reads it): skipped "
                                           "here, and an apply is refused while it is", True))
                continue
            except (json.JSONDecodeError, ValueError) as exc:
                if is_blank(bytes(raw)):
                    continue
                last = line_end == size and view[size - 1:size] != b"\n"
                cut_off = held_back_at_end(raw) if last else 0
                recovered = _read_without(view[begin:line_end - cut_off]) if cut_off else None
                if recovered is None:
                    reason = f"{exc.msg} at column {exc.colno}" if isinstance(exc, json.JSONDecodeError) else str(exc)
                    what = "incomplete last line (still being written?)" if last else "not valid JSON"
                    items.append(("w", number, f"{what}: {reason}; skipped", False))
                    continue
                record = recovered[0]  # the line as Gemini CLI reads it: without the bytes of a character cut off
                line_end -= cut_off
        if type(record) is not dict:
            items.append(("w", number, f"{type_name(record)} where a record belongs: ignored, as Gemini CLI ignores it",
                          False))
            continue
        rewind = record.get("$rewindTo")
        if type(rewind) is str:
            items.append(("r", number, rewind))
            continue
        ident = record.get("id")
        if type(ident) is str:
            where = (begin + base, line_end + base)
            items.append(("m", _message(record, where, number, later, block)))
            continue
        update = record.get("$set")
        if isinstance(update, dict):
            checkpoint = update.get("messages")
            listed = None
            skipped: list[tuple[Any, ...]] = []
            if isinstance(checkpoint, list):
                listed = _listed(checkpoint, number, "$set.messages", later, block, skipped)
                update = {k: v for k, v in update.items() if k != "messages"}
            items.extend(skipped)  # (newest first, as every item here: reversed at the end, after the line's own)
            items.append(("s", number, update, listed))
            continue
        if isinstance(record.get("sessionId"), str) and isinstance(record.get("projectHash"), str):
            metadata = {k: v for k, v in record.items() if k != "messages"}
            messages = record.get("messages")
            skipped = []
            held = _listed(messages, number, "messages", later, block, skipped) if isinstance(messages, list) else None
            items.extend(skipped)
            items.append(("h", number, metadata, held))
            continue
        odd = _odd_key(record)  # none of the four kinds Gemini CLI reads, for a key of the wrong type
        if odd is not None:
            items.append(("w", number, f"{odd}: the record is ignored, as Gemini CLI ignores it", False))
    items.reverse()
    block.send()
    items.extend(block.items)
    return items


def _odd_key(record: dict[str, Any]) -> str | None:
    """Why a record that names a message, a rewind or an update cannot be one (a key of the wrong type;
    Gemini CLI's reader checks each and passes over the record), or None."""
    for key, wanted in (("id", str), ("$rewindTo", str), ("$set", dict)):
        if key in record and not isinstance(record[key], wanted):
            return f"its {key!r} is {type_name(record[key])}"
    return None


def unfinished_line(data: bytes, line: int) -> LoadWarning | None:
    """What reading the file now says of ``data``, its last line still without a newline (a
    writer is at it, or stopped mid-line), numbered ``line``: the warning the whole read gives
    (None: the line reads as it is, or is blank).  A live view shows it as ``analyze`` would."""
    for item in scan(data, 0, None, line):
        if item[ITEM_KIND] == "w":
            return LoadWarning(item[ITEM_LINE], item[ITEM_TEXT], item[ITEM_READ])
    return None


def line_count(data: bytes) -> int:
    """The lines of ``data`` as Node's readline counts them."""
    if b"\r" in data:  # every LF, CR and CRLF ends a line (counted in C, not line by line)
        breaks = data.count(b"\n") + data.count(b"\r") - data.count(b"\r\n")
        return breaks + (0 if data.endswith((b"\n", b"\r")) or not data else 1)
    return count_newlines(data, 0, len(data)) + (0 if data.endswith(b"\n") or not data else 1)


@dataclass
class Replayed:
    """The state after replaying every item."""

    metadata: dict[str, Any] = field(default_factory=dict)
    entries: dict[str, Message] = field(default_factory=dict)  # the messages kept, by id, in order
    warnings: list[LoadWarning] = field(default_factory=list)
    first_error: int | None = None
    problem: tuple[int, str] | None = None  # the first message that cannot be read: (line, what)
    blocks: dict[int, bytes] = field(default_factory=dict)  # the rows of the messages, by block (rows.RowBlock)


def _add(state: Replayed, messages: list[Message]) -> bool:
    entries = state.entries
    for message in messages:
        problem = message[MESSAGE_PROBLEM]
        if problem is not None:
            state.problem = (message[MESSAGE_LINE], problem)
            return False
        entries[message[MESSAGE_ID]] = message
    return True


def replay(items: list[tuple[Any, ...]]) -> Replayed:
    state = Replayed()
    entries = state.entries
    for item in items:
        kind = item[ITEM_KIND]
        if kind == "m":
            message: Message = item[ITEM_MESSAGE]
            problem = message[MESSAGE_PROBLEM]
            if problem is not None:
                state.problem = (message[MESSAGE_LINE], problem)
                break
            entries[message[MESSAGE_ID]] = message
        elif kind == "r":  # ("r", line, target)
            target = item[ITEM_TARGET]
            if target not in entries:
                entries.clear()
            else:  # the newest first, down to the target: each message is dropped once (a copy per rewind was
                while entries:  # quadratic: 60,000 rewinds took minutes)
                    if entries.popitem()[0] == target:
                        break
        elif kind == "s":  # ("s", line, update, listed messages | None)
            if item[ITEM_LISTED] is not None:
                entries.clear()
                if not _add(state, item[ITEM_LISTED]):
                    break
            state.metadata.update(item[ITEM_UPDATE])
        elif kind == "h":  # ("h", line, metadata, listed messages | None)
            state.metadata.update(item[ITEM_UPDATE])
            if item[ITEM_LISTED] is not None and not _add(state, item[ITEM_LISTED]):
                break
        elif kind == BLOCK_ITEM:  # ("b", key, payload)
            state.blocks[item[ITEM_BLOCK_KEY]] = item[ITEM_PAYLOAD]
        else:  # ("w", line, warning text, whether Gemini CLI reads the line)
            state.warnings.append(LoadWarning(item[ITEM_LINE], item[ITEM_TEXT], item[ITEM_READ]))
            if state.first_error is None:
                state.first_error = item[ITEM_LINE]
    return state


def collect(state: Replayed) -> tuple[list[Where], dict[str, int], list[MessageRows]]:
    """The replayed messages as the session keeps them: places, lines by id (in order), and the rows of
    their turns."""
    wheres: list[Where] = []
    lines: dict[str, int] = {}
    rows: list[MessageRows] = []
    for ident, where, per_message, line, _ in state.entries.values():
        wheres.append(where)
        lines[ident] = line
        rows.append(per_message)
    return wheres, lines, rows
