"""Figures after a compaction: agentic candidates, and usage that predates it."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from inspector.analysis import analyze
from inspector.compaction.agentic import agentic_candidates
from inspector.compaction.compress import CompressionStatus
from inspector.compaction.request import CompactionRequest
from inspector.compaction.strategies import compact_session
from inspector.compaction.summarisers.offline import OfflineSummariser
from inspector.session import history, load
from inspector.store import apply_compaction
from tests.test_store import PATHS, copy_session


@pytest.mark.parametrize("source", PATHS, ids=lambda p: p.name)
def test_agentic_candidates_from_figures_equal_those_from_contents(source: Path) -> None:
    session = load(source)
    result = analyze(session)
    assert result.agentic_candidates == agentic_candidates([t.content for t in history(session)])
    assert all(result.turns[i].role == "model" for i in result.agentic_candidates)


def compacted(path: Path) -> None:
    """Compact at the last split that keeps a turn (a prompt, else a model turn), so that model turns
    with usage are kept."""
    session = load(path)
    figures = analyze(session)
    split = max(c for c in [*figures.candidates, *figures.agentic_candidates] if 0 < c < len(figures.turns))
    result = asyncio.run(compact_session(session, CompactionRequest(force=True, split=split),
                                         OfflineSummariser(model=session.model)))
    assert result.status is CompressionStatus.COMPRESSED, result.message
    apply_compaction(session, history(session), result)


@pytest.mark.parametrize("name", ["long-migration.jsonl", "legacy-pomodoro.json"])
def test_usage_recorded_before_a_compaction_no_longer_counts(name: str, tmp_path: Path) -> None:
    path = copy_session(next(p for p in PATHS if p.name == name), tmp_path)
    before = analyze(load(path))
    assert before.recorded_prompt_tokens is not None
    compacted(path)
    after = analyze(load(path))
    # the kept records still carry their old usage, shown per turn ...
    assert any(after.recorded[i] for i in range(len(after.turns)))
    # ... but it describes the history before the compaction, so it no longer decides
    assert after.recorded_prompt_tokens is None
    assert after.context_tokens == after.context.estimated_tokens >= after.total_estimated_tokens
    assert not after.would_compress
    if name.endswith(".jsonl"):
        # Gemini CLI records the next turn with fresh usage: that one counts
        with path.open("a", encoding="utf-8") as out:
            out.write(json.dumps({"id": "next", "timestamp": "2027-01-01T00:00:00.000Z", "type": "gemini",
                                  "content": "ok", "model": "gemini-2.5-pro",
                                  "tokens": {"input": 12345, "output": 1, "cached": 0, "total": 12346}}) + "\n")
        assert analyze(load(path)).recorded_prompt_tokens == 12345
