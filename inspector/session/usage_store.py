"""Every turn's recorded usage in machine integers: what ``figures.UsageColumn`` keeps.

A model turn's usage as Gemini CLI writes it is six whole numbers (``input``,
``output``, ``cached``, ``thoughts``, ``tool``, ``total``).  Kept as a tuple of
Python ints it costs ~280 bytes a turn (the tuple and six int objects); kept
here it costs 48 bytes and 8 for its slot.  A usage of any other shape (keys
missing or in another order, a number that is not a whole one, one beyond 64
bits) is kept as it was given, beside them.  Each turn's usage is handed out
as the same ``PackedUsage`` value it was given (a new tuple of equal ints).
"""

from __future__ import annotations

import struct
from array import array
from collections.abc import Iterable, Iterator
from typing import Any

from inspector.session.lazy import LazySequence

# Usage as kept per turn: the six values when the record has exactly USAGE_KEYS in
# that order (what Gemini CLI writes), else a copy of the object; None: no usage.
PackedUsage = tuple[Any, ...] | dict[str, Any] | None

def packed_row(usage: PackedUsage) -> bytes | PackedUsage:
    """How the reader's row carries a usage: six whole numbers within 64 bits as their 48 machine bytes
    (one small object instead of a tuple and six ints, while the reader's rows exist), else as it is."""
    if type(usage) is tuple and len(usage) == _WIDTH:
        a, b, c, d, e, f = usage
        # whole numbers only (not bools: array("q") takes True as 1), within 64 bits
        if type(a) is int and type(b) is int and type(c) is int and type(d) is int and type(e) is int \
                and type(f) is int:
            try:
                return _SIX.pack(a, b, c, d, e, f)
            except struct.error:  # beyond 64 bits
                pass
    return usage


_PIECE = 4096  # turns gathered before the arrays grow (~160 KiB of slots at most)
NO_USAGE = _NONE = -1  # a turn's slot: no usage
OTHER_USAGE = _OTHER = -2  # a turn's slot: its usage is in ``_other`` (not six whole numbers)
_WIDTH = 6  # len(figures.USAGE_KEYS)
_SIX = struct.Struct("=6q")  # six whole numbers as array("q") holds them: native order, 8 bytes each


class PackedUsages(LazySequence[PackedUsage]):
    """Every turn's ``PackedUsage``, turn ``i`` at ``i``, held in arrays of machine integers.

    A version made by ``head`` of every turn (a live append that changes no earlier turn) shares the
    arrays instead of copying them: each object reads only its own first ``len`` turns, and appends
    only while it is the one at the arrays' end (else it copies its part first)."""

    __slots__ = ("_count", "_other", "_slots", "_used", "_values")

    def __init__(self, packed: Iterable[bytes | PackedUsage] = ()) -> None:
        self._slots = array("q")  # per turn: where its six values start in _values, or _NONE / _OTHER
        self._values = array("q")
        self._other: dict[int, PackedUsage] = {}
        self._count = 0  # the turns this object holds (the arrays may hold more: a later version's)
        self._used = 0  # the values its turns use
        self.extend(packed)

    def _own(self) -> None:
        """Make the arrays this object's own when a later version has grown them past its part."""
        if len(self._slots) != self._count or len(self._values) != self._used:
            self._slots = self._slots[:self._count]
            self._values = self._values[:self._used]

    def append(self, packed: bytes | PackedUsage) -> None:
        """One more turn's usage: a ``PackedUsage``, or a reader's row's (``packed_row``)."""
        self.extend((packed,))

    def extend(self, packed: Iterable[bytes | PackedUsage]) -> None:
        """``append`` each, the arrays grown a piece of ``_PIECE`` turns at a time (an array's ``append``
        is a method call a turn: a whole read's usage column went through 5 of them a turn)."""
        found: list[int] = []  # this piece's slots
        rows: list[bytes] = []  # and its rows of six values
        used, turn = self._used, self._count  # (this object's: the arrays may hold a later version's too)
        for value in packed:
            row = value if value is None or type(value) is bytes else packed_row(value)  # type: ignore[arg-type]
            if row is None:
                found.append(_NONE)
            elif type(row) is bytes:
                found.append(used)
                used += _WIDTH
                rows.append(row)
            else:
                self._other[turn] = row  # type: ignore[assignment]
                found.append(_OTHER)
            turn += 1
            if len(found) == _PIECE:
                self._grow(found, rows)
        self._grow(found, rows)

    def _grow(self, found: list[int], rows: list[bytes]) -> None:
        """``found`` and ``rows`` added to the arrays, made this object's own first (nothing added:
        nothing copied), and both emptied."""
        if not found:
            return
        self._own()
        self._slots.extend(found)
        self._values.frombytes(b"".join(rows))
        self._count, self._used = len(self._slots), len(self._values)
        found.clear()
        rows.clear()

    def __len__(self) -> int:
        return self._count

    def held(self) -> tuple[array[int], array[int], dict[int, PackedUsage]]:
        """The arrays as held, for a fast pass in order (read-only; only the first ``len`` turns are this
        object's): per turn, where its six values start in the second (``values[slot:slot + 6]``), or
        ``NO_USAGE``, or ``OTHER_USAGE`` (its usage in the third, by turn)."""
        return self._slots, self._values, self._other

    def pieces(self, start: int, stop: int) -> tuple[list[int], int, list[int]]:
        """Turns ``start`` to ``stop`` (this object's) for a fast pass: their slots (as ``held``'s), where
        the values they point into begin, and those values, as lists (compiled, a list is read by place;
        an array's cell is an int object made and a generic lookup a read)."""
        slots = self._slots[start:min(stop, self._count)].tolist()
        first = next((slot for slot in slots if slot >= 0), -1)
        if first < 0:
            return slots, 0, []
        k = len(slots) - 1
        while slots[k] < 0:
            k -= 1
        return slots, first, self._values[first:slots[k] + _WIDTH].tolist()

    def _at(self, index: int) -> PackedUsage:
        slot = self._slots[index]
        if slot >= 0:
            return tuple(self._values[slot:slot + _WIDTH])
        return None if slot == _NONE else self._other[index]

    def __iter__(self) -> Iterator[PackedUsage]:
        """Every turn's usage in order: one pass, no index checked and looked up per turn."""
        other = self._other
        for start in range(0, self._count, _PIECE):  # (the arrays may be shared with a later version that grew them)
            slots, first, values = self.pieces(start, start + _PIECE)
            for k in range(len(slots)):
                slot = slots[k]
                if slot >= 0:
                    at = slot - first
                    yield (values[at], values[at + 1], values[at + 2], values[at + 3], values[at + 4], values[at + 5])
                else:
                    yield None if slot == _NONE else other[start + k]

    def __delitem__(self, index: slice) -> None:
        """``del usages[start:]``: every turn from ``start`` on dropped (the only deletion a grown
        recording needs)."""
        if not isinstance(index, slice) or index.stop is not None or index.step is not None:
            raise TypeError("only del usages[start:] is supported")
        start = range(self._count)[index].start
        if start == self._count:
            return
        end = self._used
        for i in range(start, self._count):
            slot = self._slots[i]
            if slot >= 0:
                end = slot
                break
        self._slots = self._slots[:start]  # (copies: the arrays may be shared with an earlier version)
        self._values = self._values[:end]
        for i in [k for k in self._other if k >= start]:
            del self._other[i]
        self._count, self._used = start, end

    def head(self, count: int) -> PackedUsages:
        """A new column of the first ``count`` turns' usage (all of them: the arrays shared)."""
        head = PackedUsages()
        head._other = {k: v for k, v in self._other.items() if k < count}
        if count >= self._count:
            head._slots, head._values, head._count, head._used = self._slots, self._values, self._count, self._used
            return head
        end = self._used
        for i in range(count, self._count):
            if self._slots[i] >= 0:
                end = self._slots[i]
                break
        head._slots = self._slots[:count]
        head._values = self._values[:end]
        head._count, head._used = count, end
        return head
