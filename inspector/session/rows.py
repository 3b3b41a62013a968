"""A recording's messages as the reader's rows, and the rows as columns.

``message_figures`` measures every turn a message becomes (``figures.content_figures``: a
*row* a turn); the reader keeps a message's rows as one marshalled bytes object
(``message_rows``) until ``transpose`` makes every message's rows into the columns of a
``turn_index.TurnIndex``, a message at a time.  Five of a row's figures are small tuples, kept
packed (``packed.PackedColumn``) from the moment they are measured.
"""

from __future__ import annotations

import marshal
from array import array
from collections.abc import Iterable
from typing import Any, Final

from inspector.session.columns import MASK
from inspector.session.figures import (
    ROW_LENGTH,
    CallKey,
    TurnRow,
    content_figures,
    pack,
    recorded_model,
    usage_of,
)
from inspector.session.history import message_contents, message_id
from inspector.session.packed import PackedColumn
from inspector.session.usage_store import packed_row

# The row's fields kept as ``packed.PackedColumn``s (responses, calls, answers, outputs, spread): the
# reader's rows carry them packed (``packed_figures``); turn_index checks the names.
PACKED_AT: Final = (8, 10, 11, 13, 16)


def message_figures(message: dict[str, Any], record_id: bool = True) -> tuple[TurnRow, ...]:
    """The rows of every turn one message becomes (usage on its model turn); ``record_id=False``: each
    row's record id left None (``message_rows``: the message carries it)."""
    built = message_contents(message)
    if not built:
        return ()
    ident = message_id(message) if record_id else None
    gemini = message.get("type") == "gemini"
    usage = packed_row(usage_of(message)) if gemini else None  # (the row's form; TurnIndex unpacks it)
    model = recorded_model(message) if gemini else None
    keys: dict[CallKey, CallKey] = {}  # a call's key, shared with the response that answers it
    return tuple(
        packed_figures(content_figures(content, ident, is_result, None if is_result else usage,
                                   None if is_result else model, keys))
        for content, is_result in built
    )


# A message's rows as the reader keeps them until they are made into columns: ``message_rows``'s bytes (its
# record id left out), or the rows themselves (with it).
MessageRows = bytes | tuple[TurnRow, ...]


def message_rows(message: dict[str, Any]) -> MessageRows:
    """``message_figures`` of a recording's message (its id is text) as one object while the reader's items
    live: the rows marshalled, their record id left out (``transpose`` puts the message's back).  A row
    as objects took ~500 bytes (the tuple, its ints and packed figures), marshalled ~250."""
    rows = message_figures(message, record_id=False)
    return marshal.dumps(rows) if rows else ()


def packed_figures(row: TurnRow) -> TurnRow:
    """A row whose ``PACKED_AT`` fields are packed (``packed.pack``): the form the reader keeps and sends."""
    return (*row[:8], pack(row[8]), row[9], pack(row[10]), pack(row[11]), row[12], pack(row[13]), row[14], row[15],
            pack(row[16]))


def transpose(per_message: Iterable[MessageRows], ids: Iterable[str | None] | None = None,
              ) -> tuple[list[Any], array[int]]:
    """Every message's rows as ``ROW_LENGTH`` columns, the ``PACKED_AT`` ones as ``PackedColumn``s (a row
    may carry them packed or not), and where each message's turns start, in machine integers (compiled).
    A message's rows given as ``message_rows``'s bytes are made one message at a time, their record id
    the message's in ``ids`` (in the same order), and their packed figures joined a chunk of turns at a
    time (never a bytes object kept a turn: the reader's peak is here)."""
    columns: list[list[Any]] = [[] for _ in range(ROW_LENGTH)]
    plain = [k for k in range(1, ROW_LENGTH) if k not in PACKED_AT]
    packed_columns: list[PackedColumn[Any]] = [PackedColumn() for _ in PACKED_AT]
    pending: list[list[bytes]] = [[] for _ in PACKED_AT]  # each packed column's values of the chunk under way
    fields = len(PACKED_AT)
    starts = array("q", [0])
    at = 0
    named = iter(ids) if ids is not None else None
    for found in per_message:
        ident = next(named) if named is not None else None
        packed = isinstance(found, bytes)
        assert named is not None or not packed, "a message's packed rows need its id"
        rows: tuple[TurnRow, ...] = marshal.loads(found) if isinstance(found, bytes) else found
        for row in rows:
            columns[0].append(ident if packed else row[0])
            for k in plain:
                columns[k].append(row[k])
            for p in range(fields):
                value = row[PACKED_AT[p]]
                pending[p].append(value if type(value) is bytes else pack(value))
            at += 1
            if not at & MASK:  # a chunk's worth: joined now
                for p in range(fields):
                    packed_columns[p].add_chunk(pending[p])
                    pending[p] = []
        starts.append(at)
    out: list[Any] = list(columns)
    for p in range(fields):
        packed_columns[p].add_chunk(pending[p])
        out[PACKED_AT[p]] = packed_columns[p]
    return out, starts
