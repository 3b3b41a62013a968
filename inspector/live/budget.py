"""The tool-output budget and the split points after lines were appended, without a full walk.

The budget walks from the newest tool output to the oldest.  Once the tokens
it counted exceed the budget, every older output is cut and every older part
moves the reference's counter by one: that region looks the same after an
append, only its counter numbers (and so the saved files' names) are shifted.
So an extended plan is a fresh walk over the newest outputs, down to the first
output both walks cut, followed by the earlier plan from there with its
numbers shifted (``ShiftedTruncations``, built one by one when read).

The split points are found with prefix sums of the turns' JSON lengths and
a bisection over the candidate turns instead of a pass over every turn.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from inspector.compaction.budget import (
    Truncation,
    TruncationPlan,
    cut_output,
    truncated_content,
    walk_budget,
)
from inspector.jsjson import js_json_len, js_string_json_len
from inspector.session.figures import ResponseFigures
from inspector.session.lazy import LazyList

Position = tuple[int, int]  # (turn, part)


class ShiftedTruncations(LazyList[Truncation]):
    """``head`` (fresh truncations), then ``base[start:]`` with every counter number moved by ``delta``."""

    __slots__ = ("base", "base_changed", "delta", "head", "make", "start")

    def __init__(self, head: list[Truncation], base: TruncationPlan, start: int, delta: int,
                 make: Callable[[Truncation, int], Truncation], base_changed: list[int]) -> None:
        self.head = head
        self.base = base
        self.start = start
        self.delta = delta
        self.make = make  # (a base truncation, its new number) -> the truncation now
        self.base_changed = base_changed  # where in ``base`` the truncations that change a turn's JSON are

    def json_changes(self, output_path: Callable[[str, int], str]) -> Iterator[tuple[int, int, str]]:
        """(turn, index, file named in its excerpt or "") of every truncation that changes a turn's JSON."""
        for index, found in enumerate(self.head):
            if found.changes_json:
                yield found.turn, index, found.output_file if found.cut else ""
        offset = len(self.head) - self.start
        for j in self.base_changed[bisect.bisect_left(self.base_changed, self.start):]:
            found = self.base[j]
            yield found.turn, j + offset, output_path(found.tool, found.seq + self.delta) if found.cut else ""

    def __len__(self) -> int:
        return len(self.head) + len(self.base) - self.start

    def position(self, index: int) -> Position:
        if index < len(self.head):
            found = self.head[index]
            return found.turn, found.part
        return self.base.position(self.start + index - len(self.head))

    def seq(self, index: int) -> int:
        if index < len(self.head):
            return self.head[index].seq
        return self.base.seq(self.start + index - len(self.head)) + self.delta

    def _at(self, index: int) -> Truncation:
        if index < len(self.head):
            return self.head[index]
        original = self.base[self.start + index - len(self.head)]
        if self.delta == 0:
            return original
        return self.make(original, original.seq + self.delta)



def as_shifted(plan: Sequence[Truncation], make: Callable[[Truncation, int], Truncation]) -> ShiftedTruncations:
    """A plan as a ``ShiftedTruncations`` (a plain list: all of it as the base, unshifted)."""
    if isinstance(plan, ShiftedTruncations):
        return plan
    base = plan if isinstance(plan, TruncationPlan) else TruncationPlan(items=plan)  # (its columns kept, not copied)
    return ShiftedTruncations([], base, 0, 0, make, base.changing_json())


def replan(
    responses: Sequence[Sequence[ResponseFigures]],
    text_of: Callable[[int, int], str],
    output_path: Callable[[str, int], str],
    max_chars: int,
    old_plan: ShiftedTruncations,
    old_saturated: Position | None,
    first_changed: int,
) -> tuple[Sequence[Truncation], Position | None]:
    """The budget plan of ``responses``, reusing ``old_plan`` (the plan before turns from
    ``first_changed`` on changed, with the same ``max_chars``) where it must be the same.

    Returns the plan and where its walk went over the budget."""

    def stop(turn: int, part: int, saturated: bool) -> bool:
        # Both walks are over the budget here and for every older part: the old plan holds the rest.
        return saturated and turn < first_changed and old_saturated is not None and (turn, part) < old_saturated

    walk = walk_budget(responses, text_of, output_path, max_chars, stop=stop)
    if walk.stopped_at is None:
        return walk.truncations, walk.saturated_at
    target = (-walk.stopped_at[0], -walk.stopped_at[1])
    index = bisect.bisect_left(range(len(old_plan)), target,
                               key=lambda j: (-old_plan.position(j)[0], -old_plan.position(j)[1]))
    if index >= len(old_plan) or old_plan.position(index) != walk.stopped_at:
        raise AssertionError("the old plan misses an output both walks cut")  # cannot happen: see stop()
    delta = walk.seq + 1 - old_plan.seq(index)

    def make(original: Truncation, seq: int) -> Truncation:
        if original.cut:  # the excerpt names the file, which has a new number
            return cut_output(original.turn, original.part, original.tool, original.full_text,
                              output_path(original.tool, seq), max_chars, original.original_tokens, seq)
        return Truncation(original.turn, original.part, original.tool, output_path, text_of,
                          original.original_tokens, original.new_tokens, seq=seq,
                          changes_json=original.changes_json)

    head = [make(t, t.seq + delta) if delta else t for t in old_plan.head[index:]]
    start = old_plan.start + max(0, index - len(old_plan.head))
    return (ShiftedTruncations(walk.truncations + head, old_plan.base, start, old_plan.delta + delta, make,
                               old_plan.base_changed), walk.saturated_at)


def changed_weights(
    plan: ShiftedTruncations, output_path: Callable[[str, int], str], json_chars: Sequence[int],
    content_of: Callable[[int], dict[str, Any]], known: dict[int, tuple[int, tuple[tuple[int, str], ...]]],
) -> dict[int, int]:
    """How much each turn whose JSON the budget changes grows or shrinks (new length - old).

    ``known``: earlier results, turn -> (change, its cuts as (part, file named in the excerpt
    or "")); a turn whose outputs are cut the same way keeps its change, moved
    by the difference in length of the files named (an excerpt names its file
    once, between a space and a line break, so its JSON length is the sum of
    the pieces').  Updated in place.
    """
    by_turn: dict[int, list[tuple[int, str]]] = {}
    for turn, index, named in plan.json_changes(output_path):
        by_turn.setdefault(turn, []).append((index, named))
    deltas: dict[int, int] = {}
    for turn, found in by_turn.items():
        shape = tuple((plan.position(index)[1], named) for index, named in found)
        seen = known.get(turn)
        if seen is not None and [(p, n == "") for p, n in seen[1]] == [(p, n == "") for p, n in shape]:
            delta = seen[0] + sum(_escaped_difference(a[1], b[1]) for a, b in zip(seen[1], shape, strict=True))
        else:
            cuts = [plan[index] for index, _ in found]
            delta = js_json_len(truncated_content(content_of(turn), cuts)) - json_chars[turn]
        known[turn] = (delta, shape)
        deltas[turn] = delta
    for turn in [t for t in known if t not in deltas]:
        del known[turn]
    return deltas


def _escaped_difference(old: str, new: str) -> int:
    """``js_string_json_len(new) - js_string_json_len(old)``, without a walk over the common folder
    when both end in a plain ASCII file name (what ``output_file_name`` makes)."""
    if old == new:
        return 0
    cut = old.rfind("/") + 1
    if cut and old[:cut] == new[:cut] and _plain(old[cut:]) and _plain(new[cut:]):
        return len(new) - len(old)
    return js_string_json_len(new) - js_string_json_len(old)


def _plain(name: str) -> bool:
    """Characters JSON writes as they are (printable ASCII, no quote or backslash)."""
    return name.isascii() and name.isprintable() and '"' not in name and "\\" not in name
