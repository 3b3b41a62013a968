"""What an apply writes, as the store's own typed plan.

``apply_plan(session, turns, plan)`` is the one way a compaction reaches the
disk; ``plan_of(result)`` reads a ``compress()`` result into a plan, field by
typed field, so nothing the compaction said is guessed at or dropped.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from inspector.compaction.budget import Truncation
from inspector.compaction.compress import CompressionResult
from inspector.compaction.staged import stages_used
from inspector.session.history import Turn
from inspector.session.loader import Session
from inspector.store import files
from inspector.store.apply import apply_history
from inspector.store.errors import StoreError
from inspector.store.journal import JournalEntry, JournalInfo

Content = dict[str, Any]


@dataclass(frozen=True)
class ApplyPlan:
    """A new history for a session, and what the journal says about it.

    ``sources[i]`` is the index of the original turn ``new_history[i]``
    copies (its records are kept), or None for a turn made up anew.
    """

    new_history: tuple[Content, ...]
    sources: tuple[int | None, ...]
    truncations: tuple[Truncation, ...] = ()
    info: JournalInfo = field(default_factory=JournalInfo)
    source_sha256: str | None = None  # the bytes the preview was made from

    def __post_init__(self) -> None:
        if len(self.sources) != len(self.new_history):
            raise ValueError("an ApplyPlan needs one source per new turn")


def plan_of(result: CompressionResult, turn_count: int) -> ApplyPlan | None:
    """The plan a compaction result asks for (None if it has no new history)."""
    if result.new_history is None:
        return None
    new_history = tuple(result.new_history)
    sources: list[int | None] = [None] * len(new_history)
    if result.sources is not None and len(result.sources) == len(new_history):
        # the staged strategy says, turn by turn, which original turn each one copies
        sources = [i if i is not None and 0 <= i < turn_count else None for i in result.sources]
    elif result.kept_from is not None and 0 <= result.kept_from <= turn_count:
        kept = range(result.kept_from, turn_count)
        start = len(new_history) - len(kept)
        if start >= 0:
            for offset, index in enumerate(kept):
                sources[start + offset] = index
    info = JournalInfo(
        status=result.status.value,
        split_point=result.split_point,
        tokens_before=result.original_token_count,
        tokens_after=result.new_token_count,
        recorded_prompt_tokens=result.recorded_prompt_tokens,
        provider=result.provider,
        model=result.model,
        duration_seconds=result.duration_seconds,
        snapshot=result.snapshot,
        note=_strategy_note(result),
    )
    return ApplyPlan(new_history, tuple(sources), tuple(result.truncations), info, result.source_sha256)


def _strategy_note(result: CompressionResult) -> str | None:
    """``strategy: staged (duplicates, prune)`` for the journal; None for the reference."""
    agentic = result.split_kind == "agentic"
    if result.strategy == "reference" and not agentic:
        return None
    stages = stages_used(result.stages or [])
    kind = "agentic split" if agentic else result.strategy
    return f"strategy: {kind}" + (f" ({', '.join(stages)})" if stages else "")


def apply_plan(
    session: Session,
    turns: Sequence[Turn],
    plan: ApplyPlan,
    *,
    expected_sha256: str | None = None,
    allow_grown: bool = False,
    hook: files.WriteHook | None = None,
    now: Callable[[], datetime] | None = None,
) -> JournalEntry:
    """Write ``plan`` to ``session``'s file (``turns`` is the history the preview was made from)."""
    sources = [turns[i] if i is not None and 0 <= i < len(turns) else None for i in plan.sources]
    return apply_history(
        session, turns, list(plan.new_history), sources,
        truncations=plan.truncations,
        journal=plan.info,
        expected_sha256=expected_sha256 or plan.source_sha256,
        allow_grown=allow_grown,
        hook=hook,
        now=now,
    )


def apply_compaction(
    session: Session,
    turns: Sequence[Turn],
    result: CompressionResult,
    *,
    expected_sha256: str | None = None,
    allow_grown: bool = False,
    hook: files.WriteHook | None = None,
    now: Callable[[], datetime] | None = None,
) -> JournalEntry:
    """Apply a ``compress()`` result: its new history, kept turns keep their records."""
    problem = result.snapshot_problem
    if problem is not None:
        raise StoreError(session.path, f"not applied: {problem}", "snapshot")
    plan = plan_of(result, len(turns))
    if plan is None:
        raise StoreError(session.path, f"nothing to apply (the compaction ended {result.status.value})", "nothing")
    return apply_plan(session, turns, plan, expected_sha256=expected_sha256, allow_grown=allow_grown, hook=hook,
                      now=now)
