"""A set of turn numbers kept as the sorted list it came from."""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Iterator, Sequence
from collections.abc import Set as AbstractSet


class TurnSet(AbstractSet[int]):
    """Turn numbers held as a sorted list and asked by bisection: a live append hands on the
    analysis's own list instead of building a set of every candidate again."""

    __slots__ = ("_sorted",)

    def __init__(self, ordered: Sequence[int]) -> None:
        self._sorted = ordered

    def __contains__(self, turn: object) -> bool:
        if not isinstance(turn, int):
            return False
        at = bisect.bisect_left(self._sorted, turn)
        return at < len(self._sorted) and self._sorted[at] == turn

    def __iter__(self) -> Iterator[int]:
        return iter(self._sorted)

    def __len__(self) -> int:
        return len(self._sorted)

    @classmethod
    def _from_iterable(cls, items: Iterable[int]) -> frozenset[int]:  # type: ignore[override]
        return frozenset(items)  # what | & - make of it
