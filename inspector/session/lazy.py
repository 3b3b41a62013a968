"""Read-only sequences whose items are made when read: one place for the sequence protocol.

A subclass gives ``__len__`` and ``_at(i)`` (the item at ``0 <= i < len``); ``LazySequence`` answers
``x[i]`` (negative indexes counted from the end, ``IndexError`` past either end), ``x[a:b:c]`` (a list)
and iteration.  ``LazyList`` is also equal to a list of equal items (and to another of its own kind),
and so is unhashable, as a list is.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TypeVar, overload

T = TypeVar("T")


class LazySequence(Sequence[T]):
    """``x[i]``, ``x[a:b]`` and iteration from ``__len__`` and ``_at``."""

    __slots__ = ()

    def _at(self, index: int) -> T:
        raise NotImplementedError

    @overload
    def __getitem__(self, index: int) -> T: ...

    @overload
    def __getitem__(self, index: slice) -> list[T]: ...

    def __getitem__(self, index: int | slice) -> T | list[T]:
        size = len(self)
        if isinstance(index, slice):
            return [self._at(i) for i in range(size)[index]]
        if index < 0:
            index += size
        if not 0 <= index < size:
            raise IndexError(f"{type(self).__name__} index out of range")
        return self._at(index)

    def __iter__(self) -> Iterator[T]:
        for i in range(len(self)):
            yield self._at(i)


class LazyList(LazySequence[T]):
    """A ``LazySequence`` compared as a list is."""

    __slots__ = ()

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (list, type(self))):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]
