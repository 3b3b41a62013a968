"""The agentic split: split points before a model turn.

A long agent run is often one user prompt followed by hundreds of model and
tool turns.  The reference only splits before a user prompt, so for such a
run its only candidate is 0 and it can never compact.  Splitting before a
model turn works too - the new history is ``[user: snapshot, model turn, ...]``,
which still alternates - as long as no function call is separated from its
response.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from inspector.compaction.pairs import AgenticCandidates
from inspector.jsjson import truthy
from inspector.session.figures import CallKey, pair_key


def crossing_free_model_turns(roles: list[str], calls: Sequence[tuple[CallKey, ...]],
                              answers: Sequence[tuple[CallKey, ...]]) -> list[int]:
    """Model turns (never 0) no call/response pair spans, from per-turn keys (``pairs.AgenticCandidates``,
    which pairs as ``pairs.Pairing`` does)."""
    candidates = AgenticCandidates()
    for i, (role, called, answered) in enumerate(zip(roles, calls, answers, strict=True)):  # (read in order)
        candidates.add(i, role, called, answered)
    return candidates.found


def _keys(content: dict[str, Any], field: str) -> list[CallKey]:
    keys = []
    for part in content.get("parts") or []:
        value = part.get(field) if isinstance(part, dict) else None
        key = pair_key(value) if truthy(value) else None
        if key is not None:
            keys.append(key)
    return keys


def agentic_candidates(contents: list[dict[str, Any]]) -> list[int]:
    """Indices of model turns the kept part may start with (never 0)."""
    return crossing_free_model_turns(
        [str(c.get("role", "")) for c in contents],
        [tuple(_keys(c, "functionCall")) for c in contents],
        [tuple(_keys(c, "functionResponse")) for c in contents],
    )


def snapshot_turns(snapshot: str, first_kept: dict[str, Any] | None, acknowledgement: str) -> list[dict[str, Any]]:
    """The turns that stand before the kept part: the snapshot, and an
    acknowledgement only when the kept part starts with a user turn."""
    turns = [{"role": "user", "parts": [{"text": snapshot}]}]
    if first_kept is None or first_kept.get("role") != "model":
        turns.append({"role": "model", "parts": [{"text": acknowledgement}]})
    return turns
