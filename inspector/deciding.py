"""Why the estimate and the recorded prompt differ, in one line.

The header's gauge shows what Gemini CLI compares with its threshold (the
prompt the API last recorded, else the estimate); the split line and the
table show Gemini CLI's estimate of the history.  They often differ a lot
(``long-migration.jsonl``: 525,821 recorded, 1,096,349 estimated, more than
the window), and each reason is measured, never guessed:

* tool results the history holds twice: Gemini CLI records a result with its
  call and, in the same recording, again as a message of its own; resumed,
  the history has both, while the API saw it once;
* turns after the newest request the API counted: not in its figure yet;
* the rest: the estimate counts characters (a quarter token per ASCII
  character), the API the model's tokens, and the API's figure includes the
  system prompt and tool declarations, which the estimate leaves out.
"""

from __future__ import annotations

import bisect
from array import array
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from inspector.format import compact_number, count_text, plural
from inspector.tokens import content_parts, part_quarters

if TYPE_CHECKING:
    from inspector.analysis import Analysis
    from inspector.session.figures import OutputFigures
    from inspector.session.turn_index import TurnIndex
    from inspector.session.turns import Turn


@dataclass(frozen=True)
class EstimateGap:
    """The estimate (environment turn + history) beside the recorded prompt, and what explains the gap."""

    estimated: int
    recorded: int
    history: int  # the estimate of the history alone: the table's and the split's total
    twice: int | None  # tokens of tool results whose call id an earlier result in the history has already
    # (None: still being counted, ``estimate_gap(count=False)``)
    unsent_turns: int  # turns after the newest turn with recorded usage
    unsent: int  # their estimate

    def reasons(self, short: bool = False, rounded: bool = False) -> list[str]:
        """What makes the gap, largest measured part first; ``short``: in a few words each,
        ``rounded``: with rounded figures (546k)."""
        number = compact_number if rounded else count_text
        found = []
        if self.twice is None:
            found.append("held twice: counting…" if short else
                         "counting the tool results the history holds twice…")
        elif self.twice:
            found.append(f"{number(self.twice)} {'' if rounded else 'results '}held twice" if short else
                         f"{number(self.twice)} of it is tool results the history holds twice "
                         "(recorded with the call and again as a message; the API saw them once)")
        if self.unsent_turns:
            found.append(f"{number(self.unsent)} not sent yet" if short else
                         f"{plural(self.unsent_turns, 'turn')} after the last request add {number(self.unsent)}")
        if self.twice is None:
            return found  # (what the rest is depends on the count)
        if self.estimated - self.twice - self.unsent > self.recorded:
            found.append("chars, not tokens" if short else
                         "the rest: the estimate counts characters, the API the model's tokens")
        else:
            found.append("API adds system prompt+tools" if short else
                         "the API's figure also holds the system prompt and tool declarations")
        return found

    def words(self, level: int = 0) -> str:
        """One line: the two figures and why they differ; ``level`` 0 in full, 1 shorter (exact figures),
        2 shortest (rounded figures)."""
        if level >= 2:
            return (f"est. {compact_number(self.history)} vs recorded {compact_number(self.recorded)}: "
                    + "; ".join(self.reasons(True, True)))
        if level == 1:
            return (f"estimate {count_text(self.history)} vs recorded {count_text(self.recorded)}: "
                    + "; ".join(self.reasons(True)))
        return (f"the split's {count_text(self.history)} (Gemini CLI's estimate of the history) differs from the "
                f"recorded {count_text(self.recorded)} (what it compares): " + "; ".join(self.reasons()))


def _outputs_of_turns(turns: Iterable[Turn]) -> Iterator[list[OutputFigures]]:
    """Per turn, its function responses as the turn index's masking figures name them (only the
    estimate and the id are read): for a history without a turn index."""
    for turn in turns:
        found: list[OutputFigures] = []
        for part in content_parts(turn.content):
            response = part.get("functionResponse") if type(part) is dict else None
            ident = response.get("id") if isinstance(response, dict) else None
            if response:
                found.append((0, 0, part_quarters(part), None, ident, None))
        yield found


def _id_of(output: OutputFigures) -> str | None:
    """The call id a function response names (None: none, or not text)."""
    ident = output[4]
    return ident if isinstance(ident, str) and ident else None


def _first_seen(outputs: Iterable[Sequence[OutputFigures]], start: int = 0,
                known: Callable[[str], bool] | None = None,
                per_turn: array[int] | None = None) -> tuple[int, dict[str, int]]:
    """The quarter tokens of the function responses of ``outputs`` (turns from ``start``) whose id an
    earlier response had, and the turn where each id not held before was first seen; ``known(id)``:
    whether a turn before ``start`` had it; ``per_turn``: gets each turn's figure."""
    first: dict[str, int] = {}
    total = 0
    for turn, figures in enumerate(outputs, start):
        counted = 0
        for output in figures:  # (most turns hold none)
            ident = _id_of(output)
            if ident is None:
                continue
            if ident in first or (known is not None and known(ident)):
                counted += output[2]
            else:
                first[ident] = turn
        total += counted
        if per_turn is not None:
            per_turn.append(counted)
    return total, first


def twice_held_quarters(analysis: Analysis, index: TurnIndex | None = None) -> int:
    """Quarter tokens of the function responses whose call id an earlier response already had."""
    if analysis.twice_held is not None:
        return analysis.twice_held  # kept up to date by a live extension (TwiceHeld)
    by_index = index is not None and len(index) == len(analysis.turns)
    return _first_seen(index.outputs if index is not None and by_index else _outputs_of_turns(analysis.turns))[0]


class TwiceHeld:
    """``twice_held_quarters`` kept up to date while turns are appended and the last ones written
    again (``inspector.live.extend``), without an object per response: each id's first turn is a
    row of two sorted columns of machine integers, (the id's ``hash``, the turn), and a hash found
    there is checked against the ids that turn's responses name (so two ids of equal hash stay two)."""

    def __init__(self, outputs: Sequence[Sequence[OutputFigures]]) -> None:
        self.outputs = outputs  # the turn index's masking figures the ids are checked against
        self.hashes = array("q")
        self.turns = array("q")
        self.per_turn = array("q")  # quarters counted at each turn
        self.total, first = _first_seen(outputs, per_turn=self.per_turn)  # (``first``: kept as the columns below)
        for key, turn in sorted((hash(ident), turn) for ident, turn in first.items()):
            self.hashes.append(key)
            self.turns.append(turn)

    def _rows(self, key: int) -> range:
        return range(bisect.bisect_left(self.hashes, key), bisect.bisect_right(self.hashes, key))

    def _known(self, ident: str) -> bool:
        """Whether a turn counted so far had ``ident`` (each row of its hash checked against its turn's ids)."""
        return any(any(_id_of(output) == ident for output in self.outputs[self.turns[row]])
                   for row in self._rows(hash(ident)))

    def cut(self, first: int) -> None:
        """Forget turns ``first`` on (the index they were read from is still ``outputs``)."""
        for figures in self.outputs[first:len(self.per_turn)]:
            for output in figures:
                ident = _id_of(output)
                if ident is None:
                    continue
                for row in reversed(self._rows(hash(ident))):
                    if self.turns[row] >= first:
                        del self.hashes[row]
                        del self.turns[row]
        self.total -= sum(self.per_turn[first:])
        del self.per_turn[first:]

    def grow(self, outputs: Sequence[Sequence[OutputFigures]]) -> None:
        """Count the turns of ``outputs`` (the extended index's) after those counted so far."""
        start = len(self.per_turn)
        self.outputs = outputs
        added, first = _first_seen(outputs[start:], start, self._known, self.per_turn)
        self.total += added
        for ident, turn in first.items():
            key = hash(ident)
            at = bisect.bisect_right(self.hashes, key)
            self.hashes.insert(at, key)
            self.turns.insert(at, turn)


def estimate_gap(analysis: Analysis, index: TurnIndex | None = None, count: bool = True) -> EstimateGap | None:
    """Why the estimate differs from the recorded prompt; None without one, or when they agree.
    ``count=False``: the results held twice (a pass over every turn) left pending unless known."""
    context = analysis.context
    recorded = context.recorded_prompt_tokens
    if recorded is None or recorded == context.estimated_tokens:
        return None
    last = next((i for i in range(len(analysis.turns) - 1, analysis.fresh_from - 1, -1)
                 if (analysis.recorded.input_tokens(i) or 0) > 0), len(analysis.turns) - 1)
    turns = len(analysis.turns)
    twice = twice_held_quarters(analysis, index) // 4 if count or analysis.twice_held is not None else None
    return EstimateGap(context.estimated_tokens, recorded, analysis.total_estimated_tokens, twice,
                       turns - 1 - last, analysis.tokens_between(last + 1, turns))
