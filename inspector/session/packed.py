"""A per-turn column of small values kept as their marshalled bytes: no Python object a turn.

Five of a turn's figures are small tuples (its function responses, calls,
responses' keys, tool outputs, spread; see ``turn_index.TurnIndex``).  Kept as
objects they cost a tuple a turn, a tuple per entry and the ints and text in
it: ~57 MiB on a 105 MB recording of 173,000 turns, much of it the call ids,
kept once per column.  A ``PackedColumn`` keeps each turn's value as its
``marshal`` bytes, in chunks of ``columns.CHUNK`` turns (one ``bytes`` and one
array of the values' byte lengths a chunk), ~12 MiB for the same turns, and
makes the value again when a turn is read (a new, equal tuple each time).  A
chunk read in order walks its lengths; the first turn read by place in a chunk
adds up its end offsets, kept while the chunk is.  An empty tuple, the
value of most turns in most of these columns, takes no bytes and is read
without unmarshalling.

The reader packs a piece of turns' values a column at a time (``pack_sized``), so its blocks
of rows carry them joined between its processes (``rows.RowBlock``), and ``rows.transpose``
cuts them into chunks (``add_joined``): bytes and lengths copied a slice at a time, no
offset added up.
Versions of a growing recording share full chunks, as ``columns.Column``'s
do: a full chunk is never changed; only the last, partial one is a version's
own (``head`` copies it, ``del column[start:]`` copies a full chunk it cuts).

Every value these columns hold is made of JSON's values and tuples (a tool's
name and a call's id are as recorded), which ``marshal`` writes and reads back
exactly.
"""

from __future__ import annotations

import marshal
from array import array
from collections.abc import Callable, Iterable, Iterator, Sequence
from itertools import accumulate, chain
from typing import Any, TypeVar

from inspector.session.columns import CHUNK, MASK, SHIFT
from inspector.session.lazy import LazyList

T = TypeVar("T")


def py_pack_sized(values: Sequence[Any]) -> tuple[bytes, bytes]:
    """``values`` packed one after the other, and each one's byte length as an ``array("I")``'s bytes:
    a value's bytes are what ``marshal.loads`` reads back as it, the empty tuple's are none
    (``_kernel.pack_sized`` is the same in C, where it is built: the bytes differ, not what they read as)."""
    raws = [marshal.dumps(value) if type(value) is not tuple or value else b"" for value in values]
    return b"".join(raws), array("I", map(len, raws)).tobytes()


def _c_pack_sized() -> Callable[[Sequence[Any]], tuple[bytes, bytes]]:
    try:
        from inspector._kernel import pack_sized
    except ImportError:  # built without a C compiler
        return py_pack_sized
    return pack_sized


pack_sized = _c_pack_sized()


def py_sum_sized(lengths: array[int], start: int, stop: int) -> int:
    """Where a run of packed values from ``start`` to ``stop`` ends, counted from where it starts:
    ``sum(lengths[start:stop])`` (``_kernel.sum_sized`` in C, where it is built, makes no int a length)."""
    return sum(lengths[start:stop])


def _c_sum_sized() -> Callable[[array[int], int, int], int]:
    try:
        from inspector._kernel import sum_sized
    except ImportError:  # built without a C compiler
        return py_sum_sized
    return sum_sized


sum_sized = _c_sum_sized()


def pack(value: Any) -> bytes:
    """One value as a ``PackedColumn`` keeps it (``pack_sized``'s)."""
    return pack_sized((value,))[0]


def py_unpack_sized(data: bytes | bytearray, lengths: array[int]) -> list[Any]:
    """Every value of one chunk, one after the other in ``data``: value ``k`` is the ``marshal.loads`` of
    its ``lengths[k]`` bytes, or ``()`` where it takes none (``_kernel.unpack_sized`` is the same in C,
    where it is built)."""
    found: list[Any] = []
    start = 0
    for length in lengths:
        found.append(marshal.loads(data[start:start + length]) if length else ())
        start += length
    return found


def _c_unpack_sized() -> Callable[[bytes | bytearray, array[int]], list[Any]]:
    try:
        from inspector._kernel import unpack_sized
    except ImportError:  # built without a C compiler
        return py_unpack_sized
    return unpack_sized


unpack_sized = _c_unpack_sized()


class PackedColumn(LazyList[T]):
    """A read-only sequence (to its readers) of packed values, grown by ``extend`` and cut by
    ``del column[start:]``; ``head(n)`` is a new column of the first ``n`` that shares every full chunk."""

    __slots__ = ("_data", "_ends", "_length", "_lengths")

    def __init__(self, values: Iterable[T] = ()) -> None:
        self._data: list[bytes | bytearray] = []  # each chunk's values, packed one after the other
        self._lengths: list[array[int]] = []  # each chunk's values' byte lengths
        self._ends: list[array[int] | None] = []  # each chunk's values' end offsets, once a value is read by place
        self._length = 0
        self.extend(values)

    @classmethod
    def of(cls, items: Sequence[bytes | T]) -> PackedColumn[T]:
        """A column of ``items``, each packed already (``bytes``: ``pack``'s) or a value."""
        column: PackedColumn[T] = cls()
        for k in range(0, len(items), CHUNK):
            column.add_chunk([item if type(item) is bytes else pack(item) for item in items[k:k + CHUNK]])
        return column

    def add_chunk(self, raws: list[bytes]) -> None:
        """Add at most ``CHUNK`` packed values as a chunk of their own, to a column of full chunks only."""
        self.add_joined(b"".join(raws), array("I", map(len, raws)))

    def add_joined(self, data: bytes, lengths: array[int]) -> None:
        """Add at most ``CHUNK`` packed values, joined in ``data`` (``lengths``: each one's, kept as given),
        as a chunk of their own, to a column of full chunks only (``rows.transpose`` makes a whole read's
        columns so: a join a chunk, no bytes object kept a value)."""
        assert not self._length & MASK and len(lengths) <= CHUNK, "a chunk follows full chunks only"
        if not lengths:
            return
        self._data.append(data if len(lengths) == CHUNK else bytearray(data))  # (a partial one: its own)
        self._lengths.append(lengths)
        self._ends.append(None)
        self._length += len(lengths)

    def __len__(self) -> int:
        return self._length

    def _ends_of(self, chunk: int) -> array[int]:
        ends = self._ends[chunk]
        if ends is None:
            ends = self._ends[chunk] = array("I", accumulate(self._lengths[chunk]))
        return ends

    def _at(self, index: int) -> T:
        k = index & MASK
        length = self._lengths[index >> SHIFT][k]
        if not length:
            return ()  # type: ignore[return-value]  # (an empty tuple, packed as no bytes)
        end = self._ends_of(index >> SHIFT)[k]
        value: T = marshal.loads(self._data[index >> SHIFT][end - length:end])
        return value

    def __iter__(self) -> Iterator[T]:
        """Every value in order, made a chunk at a time (one call each, in C where it is built)."""
        return chain.from_iterable(map(unpack_sized, self._data, self._lengths))

    def __reversed__(self) -> Iterator[T]:
        return chain.from_iterable(map(reversed, map(unpack_sized, reversed(self._data), reversed(self._lengths))))

    def raw(self) -> Iterator[bytes]:
        """Every value as packed (``pack``), in order."""
        for data, lengths in zip(self._data, self._lengths, strict=True):
            start = 0
            for length in lengths:
                yield bytes(data[start:start + length])
                start += length

    def extend(self, values: Iterable[T]) -> None:
        """Add ``values`` (another ``PackedColumn``'s are copied as packed, not made again)."""
        self._extend_raw(values.raw() if isinstance(values, PackedColumn) else (pack(v) for v in values))

    def append(self, value: T) -> None:
        self._extend_raw((pack(value),))

    def _extend_raw(self, raws: Iterable[bytes]) -> None:
        data_list, lengths_list = self._data, self._lengths
        open_chunk = self._length & MASK != 0  # (a partial chunk is this column's own)
        data = data_list[-1] if open_chunk else None
        lengths = lengths_list[-1] if open_chunk else None
        if open_chunk:
            self._ends[-1] = None  # (it grows)
        length = self._length
        for raw in raws:
            if data is None or lengths is None:
                data, lengths = bytearray(), array("I")
                data_list.append(data)
                lengths_list.append(lengths)
                self._ends.append(None)
            assert isinstance(data, bytearray)
            data += raw
            lengths.append(len(raw))
            length += 1
            if len(lengths) == CHUNK:
                data_list[-1] = bytes(data)  # full: never changed again, shared by later versions
                data = lengths = None
        self._length = length

    def __delitem__(self, index: slice) -> None:
        """``del column[start:]``: every value from ``start`` on dropped; a full chunk cut into is
        copied, never changed."""
        if not isinstance(index, slice) or index.stop is not None or index.step is not None:
            raise TypeError("only del column[start:] is supported")
        start = range(self._length)[index].start if self._length else 0
        whole, rest = start >> SHIFT, start & MASK
        keep = whole + (1 if rest else 0)
        del self._data[keep:], self._lengths[keep:], self._ends[keep:]
        if rest:
            self._data[whole], self._lengths[whole] = self._cut(whole, rest)
            self._ends[whole] = None
        self._length = start

    def _cut(self, chunk: int, count: int) -> tuple[bytearray, array[int]]:
        """A copy of the first ``count`` values of chunk ``chunk``."""
        lengths = self._lengths[chunk][:count]
        return bytearray(self._data[chunk][:sum(lengths)]), lengths

    def head(self, count: int) -> PackedColumn[T]:
        """A new column of the first ``count`` values: the full chunks shared, the partial one copied."""
        count = max(0, min(count, self._length))
        head: PackedColumn[T] = PackedColumn()
        whole, rest = count >> SHIFT, count & MASK
        head._data, head._lengths, head._ends = self._data[:whole], self._lengths[:whole], self._ends[:whole]
        if rest:
            data, lengths = self._cut(whole, rest)
            head._data.append(data)
            head._lengths.append(lengths)
            head._ends.append(None)
        head._length = count
        return head

    def held_bytes(self) -> int:
        """The bytes its chunks hold (values, lengths and the end offsets added up)."""
        return (sum(len(d) for d in self._data) + sum(n.itemsize * len(n) for n in self._lengths)
                + sum(e.itemsize * len(e) for e in self._ends if e is not None))

    def __repr__(self) -> str:
        return f"PackedColumn({len(self)} values)"
