"""The store's typed plan: what a compaction result asks for is read field by field, none dropped."""

from __future__ import annotations

from pathlib import Path

import pytest

from inspector.compaction.compress import CompressionResult, CompressionStatus
from inspector.session import history, load
from inspector.store import ApplyPlan, StoreError, apply_compaction, apply_plan, plan_of, read_history
from tests.test_store import PATHS, compacted, copy_session


def _session(tmp_path: Path) -> Path:
    matches = [p for p in PATHS if p.name == "coding-task.jsonl"]
    if not matches:
        pytest.skip("sample coding-task.jsonl not present")
    return copy_session(matches[0], tmp_path)


def test_plan_of_reads_every_field_the_journal_keeps(tmp_path: Path) -> None:
    path = _session(tmp_path)
    session = load(path)
    turns = history(session)
    new, _ = compacted(turns, 4)
    result = CompressionResult(
        CompressionStatus.COMPRESSED, 1000, 200, recorded_prompt_tokens=900, split_point=4, kept_from=4,
        provider="offline", model="m", snapshot="<state_snapshot>\n</state_snapshot>", new_history=new,
        duration_seconds=1.5,
        source_sha256=session.sha256, strategy="staged", split_kind="agentic",
    )
    plan = plan_of(result, len(turns))
    assert plan is not None
    assert plan.sources == (None, None, *range(4, len(turns)))
    assert (plan.info.split_point, plan.info.tokens_before, plan.info.tokens_after) == (4, 1000, 200)
    assert plan.info.recorded_prompt_tokens == 900 and plan.info.note == "strategy: agentic split"
    entry = apply_plan(session, turns, plan)
    assert entry.records_reused > 0, "kept turns keep their records"
    [again] = read_history(path).entries
    assert again.info == plan.info


def test_a_plan_needs_one_source_per_turn_and_a_result_without_history_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="one source per new turn"):
        ApplyPlan(({"role": "user", "parts": []},), ())
    path = _session(tmp_path)
    session = load(path)
    turns = history(session)
    result = CompressionResult(CompressionStatus.NOOP, 10, 10)
    assert plan_of(result, len(turns)) is None
    with pytest.raises(StoreError, match="nothing to apply"):
        apply_compaction(session, turns, result)
