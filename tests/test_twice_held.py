"""``deciding.TwiceHeld``: the tool results held twice, kept up to date as turns are appended and the
last ones written again, equal to counting the whole history each time, even when ids share a hash."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from inspector.deciding import TwiceHeld


class SameHash(str):
    """An id whose hash every other ``SameHash`` shares (two different ids, one row key)."""

    __slots__ = ()

    def __hash__(self) -> int:
        return 7


def counted_whole(turns: list[tuple[Any, ...]]) -> int:
    """The rule, as the header states it: a result counts when an earlier result had its id."""
    seen: set[str] = set()
    total = 0
    for outputs in turns:
        for output in outputs:
            ident = output[4]
            if isinstance(ident, str) and ident:
                if ident in seen:
                    total += output[2]
                seen.add(ident)
    return total


IDS = st.sampled_from(["a", "b", "c", "", SameHash("x"), SameHash("y"), SameHash("z"), None, 5])
OUTPUT = st.builds(lambda ident, quarters: (0, 0, quarters, "read_file", ident, None), IDS,
                   st.integers(0, 1_000))
TURN = st.lists(OUTPUT, max_size=4).map(tuple)


@settings(max_examples=300, deadline=None)
@given(st.lists(TURN, max_size=12), st.lists(st.tuples(st.integers(0, 3), st.lists(TURN, max_size=4)), max_size=8))
def test_extended_turn_by_turn_it_counts_what_the_whole_history_counts(
        first: list[tuple[Any, ...]], steps: list[tuple[int, list[tuple[Any, ...]]]]) -> None:
    turns = list(first)
    held = TwiceHeld(turns)
    assert held.total == counted_whole(turns)
    for written_again, added in steps:
        keep = max(0, len(turns) - written_again)  # the last turns written again, then new ones
        held.cut(keep)
        turns = turns[:keep] + added
        held.grow(turns)
        assert held.total == counted_whole(turns), (keep, turns)
        assert list(held.per_turn) == [counted_whole(turns[:i + 1]) - counted_whole(turns[:i])
                                       for i in range(len(turns))]


def test_two_ids_of_one_hash_stay_two() -> None:
    x, y = SameHash("x"), SameHash("y")
    turns: list[tuple[Any, ...]] = [((0, 0, 10, "t", x, None),)]
    held = TwiceHeld(turns)
    turns.append(((0, 0, 20, "t", y, None),))  # same hash, another id: not held twice
    held.grow(turns)
    assert held.total == 0
    turns.append(((0, 0, 30, "t", y, None), (0, 0, 40, "t", x, None)))
    held.grow(turns)
    assert held.total == 70
