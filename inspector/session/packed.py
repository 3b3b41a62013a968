"""A per-turn column of small values kept as their marshalled bytes: no Python object a turn.

Five of a turn's figures are small tuples (its function responses, calls,
responses' keys, tool outputs, spread; see ``turn_index.TurnIndex``).  Kept as
objects they cost a tuple a turn, a tuple per entry and the ints and text in
it: ~57 MiB on a 105 MB recording of 173,000 turns, much of it the call ids,
kept once per column.  A ``PackedColumn`` keeps each turn's value as its
``marshal`` bytes, in chunks of ``columns.CHUNK`` turns (one ``bytes`` and one
array of end offsets a chunk), ~12 MiB for the same turns, and makes the value
again when a turn is read (a new, equal tuple each time).  An empty tuple, the
value of most turns in most of these columns, takes no bytes and is read
without unmarshalling.

The reader packs each value as it measures the turn (``figures.pack``), so its blocks
of rows carry them joined between its processes (``rows.RowBlock``), and ``rows.transpose``
cuts them into chunks (``add_joined``).
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
from inspector.session.figures import pack
from inspector.session.lazy import LazyList

T = TypeVar("T")


def py_unpack_values(data: bytes | bytearray, ends: array[int]) -> list[Any]:
    """Every value of one chunk: value ``k`` is ``marshal.loads(data[ends[k - 1]:ends[k]])``, or ``()``
    where it takes no bytes (``_kernel.unpack_values`` is the same in C, where it is built)."""
    found: list[Any] = []
    start = 0
    for end in ends:
        found.append(marshal.loads(data[start:end]) if end != start else ())
        start = end
    return found


def _c_unpack_values() -> Callable[[bytes | bytearray, array[int]], list[Any]]:
    try:
        from inspector._kernel import unpack_values
    except ImportError:  # built without a C compiler
        return py_unpack_values
    return unpack_values


unpack_values = _c_unpack_values()


class PackedColumn(LazyList[T]):
    """A read-only sequence (to its readers) of packed values, grown by ``extend`` and cut by
    ``del column[start:]``; ``head(n)`` is a new column of the first ``n`` that shares every full chunk."""

    __slots__ = ("_data", "_ends", "_length")

    def __init__(self, values: Iterable[T] = ()) -> None:
        self._data: list[bytes | bytearray] = []  # each chunk's values, packed one after the other
        self._ends: list[array[int]] = []  # each chunk's values' end offsets in its data
        self._length = 0
        self.extend(values)

    @classmethod
    def of(cls, items: Sequence[bytes | T]) -> PackedColumn[T]:
        """A column of ``items``, each packed already (``bytes``: ``figures.pack``'s) or a value."""
        column: PackedColumn[T] = cls()
        for k in range(0, len(items), CHUNK):
            column.add_chunk([item if type(item) is bytes else pack(item) for item in items[k:k + CHUNK]])
        return column

    def add_chunk(self, raws: list[bytes]) -> None:
        """Add at most ``CHUNK`` packed values as a chunk of their own, to a column of full chunks only."""
        self.add_joined(b"".join(raws), array("I", map(len, raws)))

    def add_joined(self, data: bytes, lengths: array[int]) -> None:
        """Add at most ``CHUNK`` packed values, joined in ``data`` (``lengths``: each one's), as a chunk of
        their own, to a column of full chunks only (``rows.transpose`` makes a whole read's columns so: a
        join a chunk, no bytes object kept a value)."""
        assert not self._length & MASK and len(lengths) <= CHUNK, "a chunk follows full chunks only"
        if not lengths:
            return
        self._data.append(data if len(lengths) == CHUNK else bytearray(data))  # (a partial one: its own)
        self._ends.append(array("I", accumulate(lengths)))
        self._length += len(lengths)

    def __len__(self) -> int:
        return self._length

    def _at(self, index: int) -> T:
        ends = self._ends[index >> SHIFT]
        k = index & MASK
        start = ends[k - 1] if k else 0
        end = ends[k]
        if start == end:
            return ()  # type: ignore[return-value]  # (an empty tuple, packed as no bytes)
        value: T = marshal.loads(self._data[index >> SHIFT][start:end])
        return value

    def __iter__(self) -> Iterator[T]:
        """Every value in order, made a chunk at a time (one call each, in C where it is built)."""
        return chain.from_iterable(map(unpack_values, self._data, self._ends))

    def __reversed__(self) -> Iterator[T]:
        return chain.from_iterable(map(reversed, map(unpack_values, reversed(self._data), reversed(self._ends))))

    def raw(self) -> Iterator[bytes]:
        """Every value as packed (``figures.pack``), in order."""
        for data, ends in zip(self._data, self._ends, strict=True):
            start = 0
            for end in ends:
                yield bytes(data[start:end])
                start = end

    def extend(self, values: Iterable[T]) -> None:
        """Add ``values`` (another ``PackedColumn``'s are copied as packed, not made again)."""
        self._extend_raw(values.raw() if isinstance(values, PackedColumn) else (pack(v) for v in values))

    def append(self, value: T) -> None:
        self._extend_raw((pack(value),))

    def _extend_raw(self, raws: Iterable[bytes]) -> None:
        data_list, ends_list = self._data, self._ends
        open_chunk = self._length & MASK != 0  # (a partial chunk is this column's own)
        data = data_list[-1] if open_chunk else None
        ends = ends_list[-1] if open_chunk else None
        length = self._length
        for raw in raws:
            if data is None or ends is None:
                data, ends = bytearray(), array("I")
                data_list.append(data)
                ends_list.append(ends)
            assert isinstance(data, bytearray)
            data += raw
            ends.append(len(data))
            length += 1
            if len(ends) == CHUNK:
                data_list[-1] = bytes(data)  # full: never changed again, shared by later versions
                data = ends = None
        self._length = length

    def __delitem__(self, index: slice) -> None:
        """``del column[start:]``: every value from ``start`` on dropped; a full chunk cut into is
        copied, never changed."""
        if not isinstance(index, slice) or index.stop is not None or index.step is not None:
            raise TypeError("only del column[start:] is supported")
        start = range(self._length)[index].start if self._length else 0
        whole, rest = start >> SHIFT, start & MASK
        del self._data[whole + (1 if rest else 0):]
        del self._ends[whole + (1 if rest else 0):]
        if rest:
            self._data[whole], self._ends[whole] = self._cut(whole, rest)
        self._length = start

    def _cut(self, chunk: int, count: int) -> tuple[bytearray, array[int]]:
        """A copy of the first ``count`` values of chunk ``chunk``."""
        ends = self._ends[chunk][:count]
        return bytearray(self._data[chunk][:ends[-1] if count else 0]), ends

    def head(self, count: int) -> PackedColumn[T]:
        """A new column of the first ``count`` values: the full chunks shared, the partial one copied."""
        count = max(0, min(count, self._length))
        head: PackedColumn[T] = PackedColumn()
        whole, rest = count >> SHIFT, count & MASK
        head._data, head._ends = self._data[:whole], self._ends[:whole]
        if rest:
            data, ends = self._cut(whole, rest)
            head._data.append(data)
            head._ends.append(ends)
        head._length = count
        return head

    def held_bytes(self) -> int:
        """The bytes its chunks hold (values and offsets)."""
        return sum(len(d) for d in self._data) + sum(e.itemsize * len(e) for e in self._ends)

    def __repr__(self) -> str:
        return f"PackedColumn({len(self)} values)"
