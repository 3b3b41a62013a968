"""The agentic split: split points before a model turn.

A long agent run is often one user prompt followed by hundreds of model and
tool turns.  The reference only splits before a user prompt, so for such a
run its only candidate is 0 and it can never compact.  Splitting before a
model turn works too - the new history is ``[user: snapshot, model turn, ...]``,
which still alternates - as long as no function call is separated from its
response.
"""

from __future__ import annotations

from array import array
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from inspector.compaction.pairs import AgenticCandidates
from inspector.jsjson import truthy
from inspector.session.figures import CallKey, pair_key


def crossing_free_model_turns(roles: list[str], calls: Sequence[tuple[CallKey, ...]],
                              answers: Sequence[tuple[CallKey, ...]]) -> list[int]:
    """Model turns (never 0) no call/response pair spans, from per-turn keys (``pairs.AgenticCandidates``,
    which pairs as ``pairs.Pairing`` does)."""
    return agentic_pass(roles, calls, answers, False).candidates


@dataclass(frozen=True)
class AnsweredCalls:
    """Which call each function response of a history answers, as the agentic pass paired them.

    Calls and responses are counted in the order of the turns, each turn's keys in order
    (``TurnIndex.calls`` / ``answers``); ``call_of[r]`` is the place of the call response ``r``
    answers, or -1 when it answers none.  ``answers``: the column they were paired from (a reader
    of pairs checks that it reads the same one).  By place, each call's and each response's turn
    and name (its key's), so that a reader needs neither column again."""

    answers: Sequence[tuple[CallKey, ...]]
    call_of: array[int]
    call_turns: array[int]
    call_names: list[str | None]
    answer_turns: array[int]
    answer_names: list[str | None]


@dataclass(frozen=True)
class AgenticPass:
    """One pass over a history's keys: the agentic split's candidates, and (when asked) the pairs."""

    candidates: list[int]
    answered: AnsweredCalls | None


def agentic_pass(roles: Sequence[str], calls: Sequence[tuple[CallKey, ...]],
                 answers: Sequence[tuple[CallKey, ...]], record: bool = True) -> AgenticPass:
    """The model turns (never 0) no call/response pair spans, and with ``record`` which call each
    response answers (``AnsweredCalls``): the one pairing of a whole history that both read."""
    candidates = AgenticCandidates(record)
    for i, (role, called, answered) in enumerate(zip(roles, calls, answers, strict=True)):  # (read in order)
        candidates.add(i, role, called, answered)
    found = candidates.answered
    if found is None:
        return AgenticPass(candidates.found, None)
    return AgenticPass(candidates.found, AnsweredCalls(answers, found, candidates.call_turns, candidates.call_names,
                                                       candidates.answer_turns, candidates.answer_names))


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
