"""The agentic split: split points before a model turn.

A long agent run is often one user prompt followed by hundreds of model and
tool turns.  The reference only splits before a user prompt, so for such a
run its only candidate is 0 and it can never compact.  Splitting before a
model turn works too - the new history is ``[user: snapshot, model turn, ...]``,
which still alternates - as long as no function call is separated from its
response.
"""

from __future__ import annotations

from typing import Any

from inspector.compaction.pairs import pair_calls


def agentic_candidates(contents: list[dict[str, Any]]) -> list[int]:
    """Indices of model turns the kept part may start with (never 0)."""
    crossing = [0] * (len(contents) + 1)
    for (response_turn, _), (call_turn, _) in pair_calls(contents).items():
        # splitting at any i in (call_turn, response_turn] would separate them
        if response_turn > call_turn:
            crossing[call_turn + 1] += 1
            crossing[response_turn + 1] -= 1
    open_pairs = 0
    found: list[int] = []
    for i, content in enumerate(contents):
        open_pairs += crossing[i]
        if i > 0 and content.get("role") == "model" and open_pairs == 0:
            found.append(i)
    return found


def snapshot_turns(snapshot: str, first_kept: dict[str, Any] | None, acknowledgement: str) -> list[dict[str, Any]]:
    """The turns that stand before the kept part: the snapshot, and an
    acknowledgement only when the kept part starts with a user turn."""
    turns = [{"role": "user", "parts": [{"text": snapshot}]}]
    if first_kept is None or first_kept.get("role") != "model":
        turns.append({"role": "model", "parts": [{"text": acknowledgement}]})
    return turns
