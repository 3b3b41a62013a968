"""A recording's messages as the reader's rows, kept a block of messages at a time, and made into columns.

``message_figures`` measures every turn a message becomes (``figures.content_figures``: a
*row* a turn).  The reader scans a file a block of lines at a time (``jsonl.scan``), and each
scan hands the rows of the messages it measures to a ``RowBlock``, which sends them a piece of
at most ``PIECE_ROWS`` turns at a time: made into columns, one per figure, the five small-tuple
figures packed (``packed.pack_sized``) into one ``bytes`` each, and marshalled once as one scan item
(``("b", key, payload)``, between the reader's processes too).  A message carries only where
its rows are in its piece (``RowsAt``).  Once the file is replayed, ``transpose`` makes the rows of the messages that
remain into the columns of a ``turn_index.TurnIndex``: a run of messages that follow each
other in one block (nearly every message) is copied a slice a column, not a turn at a time.
"""

from __future__ import annotations

import marshal
from array import array
from collections.abc import Sequence
from itertools import accumulate
from typing import Any, Final

from inspector.session.columns import CHUNK
from inspector.session.figures import (
    ROW_LENGTH,
    CallKey,
    TurnRow,
    content_figures,
    recorded_model,
    usage_of,
)
from inspector.session.history import message_contents, message_id
from inspector.session.packed import PackedColumn, pack_sized, sum_sized
from inspector.session.usage_store import packed_row

# The row's fields kept as ``packed.PackedColumn``s (responses, calls, answers, outputs, spread): the
# reader's blocks carry them packed; turn_index checks the names.
PACKED_AT: Final = (8, 10, 11, 13, 16)
# The row's other fields, the record id first.
PLAIN_AT: Final = tuple(k for k in range(ROW_LENGTH) if k not in PACKED_AT)

# Where a message's rows are: (its block's key, its place among the block's messages counted from the
# block's last). A message with no rows (no turns, or replaced by a later copy) has ``NO_ROWS``.
RowsAt = tuple[int, int]
MessageRows = RowsAt | tuple[()]
NO_ROWS: Final[tuple[()]] = ()
BLOCK_ITEM: Final = "b"  # the scan item that carries a block: ("b", key, payload)


def message_figures(message: dict[str, Any]) -> tuple[TurnRow, ...]:
    """The rows of every turn one message becomes (usage on its model turn)."""
    built = message_contents(message)
    if not built:
        return ()
    ident = message_id(message)
    gemini = message.get("type") == "gemini"
    usage = packed_row(usage_of(message)) if gemini else None  # (the row's form; TurnIndex unpacks it)
    model = recorded_model(message) if gemini else None
    keys: dict[CallKey, CallKey] = {}  # a call's key, shared with the response that answers it
    return tuple(content_figures(content, ident, is_result, None if is_result else usage,
                                 None if is_result else model, keys)
                 for content, is_result in built)


class RowBlock:
    """The rows of the messages one scan measures, added from the last message to the first (a scan
    reads lines from the end), sent a piece of at most ``PIECE_ROWS`` turns at a time (``items``): each
    piece is made into columns and marshalled once, so a scan holds at most a piece's rows as objects."""

    PIECE_ROWS = 1024

    def __init__(self, key: int) -> None:
        # this piece's key: the offset in the file of the scan's first byte (``key``) + the pieces sent before
        # it, unique in a read (a piece holds a message of at least one line: a scan of n bytes sends fewer
        # than n pieces)
        self.key = key
        self.rows: list[TurnRow] = []  # turn by turn, from the last
        self.sizes: list[int] = []  # each message's turn count, from the last message
        self.items: list[tuple[str, int, bytes]] = []  # the pieces sent

    def add(self, message: dict[str, Any]) -> MessageRows:
        """Measure ``message`` (one before every message added so far); where its rows are."""
        return self.add_rows(message_figures(message))

    def add_rows(self, rows: Sequence[TurnRow]) -> MessageRows:
        if not rows:
            return NO_ROWS
        if len(self.rows) >= self.PIECE_ROWS:
            self.send()
        found = self.rows
        for r in range(len(rows) - 1, -1, -1):
            found.append(rows[r])
        self.sizes.append(len(rows))
        return (self.key, len(self.sizes) - 1)

    def send(self) -> None:
        """The rows added so far as one more scan item (``("b", key, payload)``), and a new piece."""
        if not self.sizes:
            return
        self.rows.reverse()
        fields = list(zip(*self.rows, strict=True))  # (a tuple a field, in C)
        self.rows = []
        columns = [fields[k] for k in PLAIN_AT]
        joined = []
        lengths = []
        for k in PACKED_AT:
            data, value_lengths = pack_sized(fields[k])
            joined.append(data)
            lengths.append(value_lengths)
        sizes = array("I", reversed(self.sizes)).tobytes()
        self.sizes = []
        self.items.append((BLOCK_ITEM, self.key, marshal.dumps((sizes, columns, joined, lengths))))
        self.key += 1


def block_of(messages: Sequence[Sequence[TurnRow]], key: int = 0) -> tuple[list[MessageRows], dict[int, bytes]]:
    """Rows measured elsewhere (``figures.content_figures``), each message's, as one block: where each
    message's rows are, and the block by its key, as ``transpose`` takes them."""
    block = RowBlock(key)
    places = [block.add_rows(messages[m]) for m in range(len(messages) - 1, -1, -1)]
    places.reverse()
    block.send()
    return places, {item[1]: item[2] for item in block.items}


class _Block:
    """A piece of rows as ``RowBlock.send`` sent it, made into lists and arrays (the main process)."""

    def __init__(self, payload: bytes) -> None:
        sizes, self.columns, self.data, lengths = marshal.loads(payload)
        self.starts: list[int] = [0, *accumulate(array("I", sizes))]  # each message's first turn, and the end
        self.count = len(self.starts) - 1
        self.lengths: list[array[int]] = [array("I", raw) for raw in lengths]  # each packed value's bytes
        # where in its data the packed value at ``places[p]`` starts: runs are mostly read in order, so
        # each is found by adding the lengths from the last place asked
        self.places = [0] * len(lengths)
        self.offsets = [0] * len(lengths)

    def offset(self, p: int, place: int) -> int:
        """Where packed column ``p``'s value ``place`` (or the end, at ``len``) starts in its data."""
        at = self.places[p]
        found = self.offsets[p] + sum_sized(self.lengths[p], at, place) if place >= at \
            else sum_sized(self.lengths[p], 0, place)
        self.places[p], self.offsets[p] = place, found
        return found


class _Packer:
    """A packed column made a run of packed values at a time, cut into chunks of ``CHUNK`` values."""

    def __init__(self) -> None:
        self.column: PackedColumn[Any] = PackedColumn()
        self.data = bytearray()
        self.lengths = array("I")

    def add(self, block: _Block, p: int, start: int, stop: int) -> None:
        """Values ``start`` to ``stop`` of ``block``'s packed column ``p``."""
        view = memoryview(block.data[p])
        lengths = block.lengths[p]
        while start < stop:
            take = min(stop - start, CHUNK - len(self.lengths))
            self.data += view[block.offset(p, start):block.offset(p, start + take)]
            self.lengths += lengths[start:start + take]
            start += take
            if len(self.lengths) == CHUNK:
                self.flush()

    def flush(self) -> PackedColumn[Any]:
        if self.lengths:
            self.column.add_joined(bytes(self.data), self.lengths)
            self.data, self.lengths = bytearray(), array("I")
        return self.column


def transpose(per_message: list[MessageRows], blocks: dict[int, bytes]) -> tuple[list[Any], array[int]]:
    """Every message's rows as ``ROW_LENGTH`` columns, the ``PACKED_AT`` ones as ``PackedColumn``s, and
    where each message's turns start, in machine integers.  ``blocks``: the payload of each block by
    its key, taken out of it as the block is read (a block is made into lists once, and let go after
    its last message)."""
    left: dict[int, int] = {}  # each block's messages still to come
    for at in per_message:
        if at:
            left[at[0]] = left.get(at[0], 0) + 1
    columns: list[list[Any]] = [[] for _ in range(ROW_LENGTH)]
    packers = [_Packer() for _ in PACKED_AT]
    read: dict[int, _Block] = {}
    starts = [0]
    turns = 0
    count = len(per_message)
    k = 0
    while k < count:
        rows = per_message[k]
        if not rows:
            starts.append(turns)
            k += 1
            continue
        key, back = rows[0], rows[1]
        end = k + 1  # the run: the messages that follow this one in its block
        while end < count:
            following = per_message[end]
            if not following or following[0] != key or following[1] != back - (end - k):
                break
            end += 1
        block = read.get(key)
        if block is None:
            block = read[key] = _Block(blocks.pop(key))
        first = block.count - 1 - back
        stop = first + end - k
        shift = turns - block.starts[first]
        starts.extend([start + shift for start in block.starts[first + 1:stop + 1]])
        turns = starts[-1]
        _copy(block, first, stop, columns, packers)
        left[key] -= end - k
        if not left[key]:
            del read[key]
        k = end
    out: list[Any] = list(columns)
    for p in range(len(PACKED_AT)):
        out[PACKED_AT[p]] = packers[p].flush()
    return out, array("q", starts)


def _copy(block: _Block, first: int, stop: int, columns: list[list[Any]], packers: list[_Packer]) -> None:
    """The rows of ``block``'s messages ``first`` to ``stop`` added to the columns."""
    start, end = block.starts[first], block.starts[stop]
    for c in range(len(PLAIN_AT)):
        columns[PLAIN_AT[c]].extend(block.columns[c][start:end])
    for p in range(len(PACKED_AT)):
        packers[p].add(block, p, start, end)
