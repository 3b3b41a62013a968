"""A per-turn column that versions of a growing recording share: copy on write, a chunk at a time.

A live append makes a new version of the session's turn index: the old
version stays as it was (a worker may still read it), the new one is the old
one cut at the first changed turn and grown by the new turns.  With lists,
each version held a whole copy of every column (17 lists of a pointer a turn,
~23 MiB on the 107 MB bench session), and the app copied them ahead of the
next append.  A ``Column`` keeps its items in chunks of ``CHUNK`` items:
a full chunk is never changed and is shared by every version that holds it;
only the last, partial chunk is a version's own.  So a version is made by
copying a list of chunk pointers and at most one chunk, whatever the
session's length.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import TypeVar, overload

from inspector.session.lazy import LazyList

T = TypeVar("T")

SHIFT = 12
CHUNK = 1 << SHIFT  # items a chunk (4,096: 32 KiB of pointers)
MASK = CHUNK - 1

# The typecode of an array of whole numbers that are never below 0 (turns, places, counts): CPython
# stores an unsigned item straight from the int, but a signed one ("q") through argument parsing,
# ~50 ns more an item (an append ~80 ns against ~30 ns).
NATURAL = "Q"


class Column(LazyList[T]):
    """A read-only sequence (to its readers) grown by ``extend`` and cut by ``del column[start:]``;
    ``head(n)`` is a new column of the first ``n`` items that shares every full chunk."""

    __slots__ = ("_chunks", "_length")

    def __init__(self, items: Iterable[T] = ()) -> None:
        self._chunks: list[list[T]] = []
        self._length = 0
        self.extend(items)

    def __len__(self) -> int:
        return self._length

    def _at(self, index: int) -> T:
        return self._chunks[index >> SHIFT][index & MASK]

    @overload
    def __getitem__(self, index: int) -> T: ...

    @overload
    def __getitem__(self, index: slice) -> list[T]: ...

    def __getitem__(self, index: int | slice) -> T | list[T]:
        if type(index) is int and 0 <= index < self._length:
            return self._chunks[index >> SHIFT][index & MASK]
        return super().__getitem__(index)

    def __iter__(self) -> Iterator[T]:
        for chunk in self._chunks:
            yield from chunk

    def tolist(self) -> list[T]:
        """Every item, in a new list (a chunk at a time)."""
        out: list[T] = []
        for chunk in self._chunks:
            out += chunk
        return out

    def extend(self, items: Iterable[T]) -> None:
        chunks = self._chunks
        last = chunks[-1] if chunks and len(chunks[-1]) < CHUNK else None  # (a partial chunk is this column's own)
        length = self._length
        for item in items:
            if last is None:
                last = []
                chunks.append(last)
            last.append(item)
            length += 1
            if len(last) == CHUNK:
                last = None
        self._length = length

    def append(self, item: T) -> None:
        self.extend((item,))

    def __delitem__(self, index: slice) -> None:
        """``del column[start:]``: every item from ``start`` on dropped (the only deletion a grown
        recording needs); a full chunk cut into is copied, never changed."""
        if not isinstance(index, slice) or index.stop is not None or index.step is not None:
            raise TypeError("only del column[start:] is supported")
        start = range(self._length)[index].start if self._length else 0
        whole, rest = start >> SHIFT, start & MASK
        del self._chunks[whole + (1 if rest else 0):]
        if rest:
            self._chunks[whole] = self._chunks[whole][:rest]
        self._length = start

    def head(self, count: int) -> Column[T]:
        """A new column of the first ``count`` items: the full chunks shared, the partial one copied."""
        count = max(0, min(count, self._length))
        head: Column[T] = Column()
        whole, rest = count >> SHIFT, count & MASK
        head._chunks = self._chunks[:whole]
        if rest:
            head._chunks.append(self._chunks[whole][:rest])
        head._length = count
        return head

    @classmethod
    def of(cls, items: Sequence[T], count: int | None = None) -> Column[T]:
        """A column of the first ``count`` (default all) of ``items`` (one copy of the pointers)."""
        count = len(items) if count is None else count
        column: Column[T] = cls()
        column._chunks = [list(items[k:min(k + CHUNK, count)]) for k in range(0, count, CHUNK)]
        column._length = count
        return column

    def __repr__(self) -> str:
        return f"Column({len(self)} items)"
