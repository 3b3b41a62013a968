"""Where Gemini CLI splits the history: ``findCompressSplitPoint``.

The weights are ``JSON.stringify(content).length`` per turn.  A turn can start
the kept part only if it is a user turn without a function response.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from itertools import accumulate
from typing import Any

from inspector.session.figures import holds_part, may_end_summary, may_start_kept_part

# Gemini CLI keeps the newest 30%: it passes 1 - 0.3, which is the double 0.7.
PRESERVE_FRACTION = 0.3
COMPRESS_FRACTION = 1 - PRESERVE_FRACTION


def split_kind(split: int, reference: int | None, before_model_turn: bool) -> str:
    """How a split is named on every screen: "reference" (Gemini CLI's own, ``reference``), "agentic"
    (before a model turn: ``before_model_turn``) or "chosen" (before another prompt)."""
    if split == reference:
        return "reference"
    return "agentic" if before_model_turn else "chosen"


def is_split_candidate(content: dict[str, Any]) -> bool:
    """A user turn that is not a tool result can begin the kept history (``figures.may_start_kept_part``)."""
    return may_start_kept_part(content.get("role"), holds_part(content, "functionResponse"))


def ends_safely(content: dict[str, Any] | None) -> bool:
    """A last model turn without a function call: everything may be summarised (``figures.may_end_summary``)."""
    return content is not None and may_end_summary(content.get("role"), holds_part(content, "functionCall"))


def find_split_point(
    weights: Sequence[int],
    candidates: Sequence[bool],
    last_is_safe_end: bool,
    fraction: float = COMPRESS_FRACTION,
) -> int:
    """``findCompressSplitPoint`` over precomputed weights and candidate flags."""
    if fraction <= 0 or fraction >= 1:
        raise ValueError("fraction must be between 0 and 1")
    flagged = [i for i, flag in enumerate(candidates) if flag]
    return split_point([0, *accumulate(weights)], flagged, last_is_safe_end, {}, fraction)


def split_point(prefix: Sequence[int], flagged: Sequence[int], safe_end: bool, deltas: dict[int, int],
                fraction: float = COMPRESS_FRACTION) -> int:
    """``findCompressSplitPoint`` from prefix sums of the JSON lengths (``prefix[i]``: turns before
    ``i``), the turns flagged as candidates (in order), and per-turn changes of the lengths (``deltas``):
    the first flagged turn with at least ``fraction`` of the weight before it, else the end when the
    last turn may end a summarised history, else the last flagged turn (0 when none)."""
    count = len(prefix) - 1
    changed = sorted(deltas)
    target = (prefix[count] + sum(deltas.values())) * fraction
    # Between two changed turns the lengths before a turn differ from the prefix sums by a constant.
    bounds = [0, *(c + 1 for c in changed), count + 1]
    shift = 0
    for k in range(len(bounds) - 1):
        if k:
            shift += deltas[changed[k - 1]]
        lo = bisect.bisect_left(flagged, bounds[k])
        hi = bisect.bisect_left(flagged, bounds[k + 1])
        if lo == hi:
            continue
        at = bisect.bisect_left(flagged, target, lo, hi, key=lambda i, s=shift: prefix[i] + s)  # type: ignore[misc]
        if at < hi:
            return flagged[at]
    if safe_end:
        return count
    return flagged[-1] if flagged else 0
