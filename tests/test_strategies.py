"""Both strategies and the agentic split, end to end: compact, apply, resume in
Gemini CLI's own loader (Node), revert byte for byte."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from inspector.analysis import analyze
from inspector.cli import main
from inspector.compaction.agentic import agentic_candidates
from inspector.compaction.compress import CompressionStatus
from inspector.compaction.request import CompactionRequest, compaction_context
from inspector.compaction.strategies import compact_session, compare, resolve_target
from inspector.compaction.summarisers.offline import OfflineSummariser
from inspector.jsjson import js_stringify
from inspector.session import history, load
from inspector.store import apply_compaction, revert
from tests.reference.compare import compare_file
from tests.test_store import PATHS, copy_session

REAL = Path(__file__).resolve().parents[2] / "shared" / "real-sessions"
AGENT_RUN = REAL / "BrianV1981__aim__docs__benchmarks__raw_logs__control_flash_run4_oom.json"


def run(strategy: str, path: Path, **options: Any) -> tuple[Any, Any, Any]:
    session = load(path)
    turns = history(session)
    request = CompactionRequest(strategy=strategy, force=True, **options)
    result = asyncio.run(compact_session(session, request, OfflineSummariser(model=session.model)))
    return session, turns, result


def reference_history(reference: Any, path: Path) -> list[str]:
    answer = reference.call("load", path=str(path))
    assert answer["kind"] is not None, f"{path}: Gemini CLI cannot load the applied file"
    return list(answer["history"])


@pytest.mark.differential
@pytest.mark.parametrize("source", PATHS, ids=lambda p: p.name)
def test_staged_apply_resumes_in_gemini_cli_and_reverts(source: Path, tmp_path: Path, reference: Any) -> None:
    path = copy_session(source, tmp_path)
    original = path.read_bytes()
    session, turns, result = run("staged", path, target=10)  # 10 tokens: every stage runs
    if result.status is CompressionStatus.NOOP:
        assert not any(stage.applied for stage in result.stages or [])
        pytest.skip(f"nothing for the staged strategy to do here ({result.message})")
    assert result.status is CompressionStatus.COMPRESSED, result.message
    assert result.new_token_count < result.original_token_count
    entry = apply_compaction(session, turns, result)
    assert entry.info.note and entry.info.note.startswith("strategy: staged")
    assert reference_history(reference, path) == [js_stringify(c) for c in result.new_history]
    compare_file(reference, path)
    revert(path)
    assert path.read_bytes() == original


@pytest.mark.differential
@pytest.mark.parametrize("source", [p for p in PATHS if p.name in {"coding-task.jsonl", "legacy-pomodoro.json",
                                                                    "gemini-cli-0.61-tool-calls.jsonl"}],
                         ids=lambda p: p.name)
def test_agentic_split_apply_resumes_in_gemini_cli(source: Path, tmp_path: Path, reference: Any) -> None:
    path = copy_session(source, tmp_path)
    original = path.read_bytes()
    session, turns, result = run("reference", path, agentic=True)
    assert result.split_kind == "agentic"
    assert result.split_point in agentic_candidates([t.content for t in turns])
    assert turns[result.split_point].role == "model"
    assert result.status is CompressionStatus.COMPRESSED, result.message
    apply_compaction(session, turns, result)
    assert reference_history(reference, path) == [js_stringify(c) for c in result.new_history]
    revert(path)
    assert path.read_bytes() == original


@pytest.mark.differential
@pytest.mark.skipif(not AGENT_RUN.exists(), reason="the shared real sessions are not beside this checkout")
def test_agentic_split_compacts_a_one_prompt_agent_run(tmp_path: Path, reference: Any) -> None:
    path = copy_session(AGENT_RUN, tmp_path)
    session, turns, reference_result = run("reference", path)
    assert reference_result.status is CompressionStatus.NOOP and reference_result.split_point == 0
    session, turns, result = run("reference", path, agentic=True)
    assert result.status is CompressionStatus.COMPRESSED
    assert result.new_token_count < result.original_token_count // 2
    apply_compaction(session, turns, result)
    assert reference_history(reference, path) == [js_stringify(c) for c in result.new_history]


def test_resolve_target() -> None:
    assert resolve_target(0.2, 1_000_000, 500_000) == 200_000
    assert resolve_target(30_000, 1_000_000, 500_000) == 30_000
    assert resolve_target(None, 1_000_000, 100_000) == 30_000  # 30% of the current size
    assert resolve_target(None, 1_000_000, 2_000_000) == 250_000  # capped at a quarter of the window


def test_compare_runs_both_strategies_on_the_same_history() -> None:
    source = next(p for p in PATHS if p.name == "long-migration.jsonl")
    session = load(source)
    turns = history(session)
    context = compaction_context(session, analyze(session))
    comparison = asyncio.run(compare(CompactionRequest(compare=True), context, turns,
                                     OfflineSummariser(model=session.model)))
    assert set(comparison.results) == {"reference", "staged"}
    for name, result in comparison.results.items():
        assert result.status is CompressionStatus.COMPRESSED, (name, result.message)
        assert result.new_token_count < result.original_token_count
        assert 0 < (comparison.recall[name] or 0) <= 1
    staged = comparison.results["staged"]
    assert [s.name for s in staged.stages or [] if s.applied][:2] == ["duplicates", "prune"]


def test_cli_compare_and_its_refusal_to_apply(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    source = next(p for p in PATHS if p.name == "coding-task.jsonl")
    path = copy_session(source, tmp_path)
    before = path.read_bytes()
    assert main(["compact", str(path), "--compare", "--force", "--provider", "offline", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert set(out["compare"]) == {"reference", "staged"}
    assert out["compare"]["staged"]["stages"][0]["stage"] == "duplicates"
    assert out["compare"]["reference"]["history_fact_recall"] is not None
    assert main(["compact", str(path), "--compare", "--apply", "--provider", "offline"]) == 2
    assert "apply one with --strategy" in capsys.readouterr().err
    assert path.read_bytes() == before


def _recast_calls(value: Any, recast: Any) -> Any:
    """``value`` (a JSONL line's record) with the (id, name) of every tool call and function call
    or response in it ``recast``."""
    if isinstance(value, list):
        return [_recast_calls(item, recast) for item in value]
    if not isinstance(value, dict):
        return value
    out = {key: _recast_calls(item, recast) for key, item in value.items()}
    for key in ("functionCall", "functionResponse"):
        inner = out.get(key)
        if isinstance(inner, dict) and "id" in inner:
            inner["id"], inner["name"] = recast(inner["id"], inner["name"])
    for call in out.get("toolCalls") or []:
        call["id"], call["name"] = recast(call["id"], call["name"])
    return out


RECASTS = {
    "ids are objects": lambda ident, name: ({"call": ident}, name),
    "ids are lists": lambda ident, name: ([ident, 1], name),
    "ids are numbers": lambda ident, name: (int.from_bytes(ident.encode()[-6:], "big"), name),
}


@pytest.mark.parametrize("recast", RECASTS.values(), ids=RECASTS.keys())
@pytest.mark.parametrize("sample", ["long-migration.jsonl", "gemini-cli-0.61-tool-calls.jsonl"])
def test_calls_whose_ids_are_not_text_pair_as_text_ones_do(
        tmp_path: Path, sample: str, recast: Any, capsys: pytest.CaptureFixture[str]) -> None:
    # Gemini CLI loads such a file (nothing it does with a history reads the ids' type); the
    # inspector used to stop with "unhashable type" while finding the agentic split points.
    from inspector.compaction.pairs import pair_calls

    source = Path(__file__).resolve().parents[1] / "sample_sessions" / sample
    lines = source.read_text(encoding="utf-8").splitlines()
    recast_lines = [json.dumps(_recast_calls(json.loads(line), recast)) for line in lines]
    path = tmp_path / sample
    path.write_text("\n".join(recast_lines) + "\n", encoding="utf-8")
    plain, odd = analyze(load(source)), analyze(load(path))
    assert odd.agentic_candidates == plain.agentic_candidates
    assert pair_calls([t.content for t in odd.turns]) == pair_calls([t.content for t in plain.turns])
    assert agentic_candidates([t.content for t in odd.turns]) == odd.agentic_candidates  # as a checkpoint is read
    assert main(["analyze", "--json", str(path)]) == 0
    assert json.loads(capsys.readouterr().out)["agentic_split_candidates"] == plain.agentic_candidates


def _recast_call_names(value: Any, recast: Any) -> Any:
    """``value`` with the name of every tool call and function call in it ``recast`` (responses
    keep theirs: a response's name must be text, and the loader says so)."""
    if isinstance(value, list):
        return [_recast_call_names(item, recast) for item in value]
    if not isinstance(value, dict):
        return value
    out = {key: _recast_call_names(item, recast) for key, item in value.items()}
    inner = out.get("functionCall")
    if isinstance(inner, dict) and "name" in inner:
        inner["name"] = recast(inner["name"])
    for call in out.get("toolCalls") or []:
        call["name"] = recast(call["name"])
    return out


NAME_RECASTS = {
    "names are objects": lambda name: {"tool": name},
    "names are lists": lambda name: [name],
    "names are numbers": lambda name: 7,
}


@pytest.mark.parametrize("recast", NAME_RECASTS.values(), ids=NAME_RECASTS.keys())
@pytest.mark.parametrize("sample", ["coding-task.jsonl", "gemini-cli-0.61-tool-calls.jsonl",
                                    "checkpoint-bare-array.json"])
def test_every_strategy_runs_on_calls_whose_names_are_not_text(
        tmp_path: Path, sample: str, recast: Any, capsys: pytest.CaptureFixture[str]) -> None:
    # Gemini CLI loads such a file; the staged strategy's duplicate-reads stage used to stop
    # with "unhashable type" looking the name up among the read tools (and so did --compare).
    source = Path(__file__).resolve().parents[1] / "sample_sessions" / sample
    path = tmp_path / sample
    if source.suffix == ".jsonl":
        lines = source.read_text(encoding="utf-8").splitlines()
        path.write_text("\n".join(json.dumps(_recast_call_names(json.loads(line), recast)) for line in lines) + "\n",
                        encoding="utf-8")
    else:
        path.write_text(json.dumps(_recast_call_names(json.loads(source.read_text(encoding="utf-8")), recast)),
                        encoding="utf-8")
    before = path.read_bytes()
    assert main(["compact", str(path), "--provider", "offline", "--force", "--compare", "--json"]) == 0
    compared = json.loads(capsys.readouterr().out)["compare"]
    assert set(compared) == {"reference", "staged"}
    for strategy in (["--strategy", "staged"], ["--agentic"], []):
        code = main(["compact", str(path), "--provider", "offline", "--force", "--apply", *strategy])
        err = capsys.readouterr().err
        assert code in (0, 1) and "Traceback" not in err
        if path.read_bytes() != before:
            assert main(["revert", str(path)]) == 0
            assert path.read_bytes() == before
