"""One typed request, one context rule: what a user meets through ``compact`` and ``analyze``.

* After ``compact --apply``, ``analyze --json`` and ``compact --json`` give
  the same recorded prompt and make the same threshold decision (they used
  to disagree: one ignored usage recorded before the compaction).
* Every option ``compact`` accepts is honoured; a combination that cannot
  work is refused with one line, exit 2, nothing written.
"""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from inspector.analysis import analyze
from inspector.cli import main
from inspector.compaction.agentic import agentic_candidates
from inspector.compaction.request import CompactionRequest, RequestError, compaction_context
from inspector.context import ContextFigures
from inspector.session import load
from inspector.tokens import estimate_contents
from inspector.tui.running import parse_target
from tests.conftest import SAMPLES

SESSIONS = sorted(p for p in SAMPLES.iterdir() if p.suffix in (".json", ".jsonl"))


@pytest.fixture(autouse=True)
def no_credentials(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("GEMINI_API_KEY", "GOOGLE_API_KEY", "GOOGLE_GENAI_USE_VERTEXAI", "GOOGLE_CLOUD_PROJECT"):
        monkeypatch.delenv(name, raising=False)


def run_json(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict]:
    code = main(list(args))
    out = capsys.readouterr().out
    return code, json.loads(out)


def copy(tmp_path: Path, source: Path) -> Path:
    target = tmp_path / source.name
    shutil.copyfile(source, target)
    return target


def agree(capsys: pytest.CaptureFixture[str], path: Path) -> tuple[dict, dict]:
    _, analysed = run_json(capsys, "analyze", str(path), "--json")
    _, compacted = run_json(capsys, "compact", str(path), "--json", "--provider", "offline")
    assert compacted["recorded_prompt_tokens"] == analysed["recorded_prompt_tokens"], path.name
    refused_below = compacted["status"] == "NOOP" and "under the threshold" in compacted["message"]
    assert refused_below == (not analysed["context_tokens"] >= analysed["threshold"] * analysed["token_limit"])
    if refused_below:
        assert f"{analysed['context_tokens']:,} tokens" in compacted["message"]
    return analysed, compacted


@pytest.mark.parametrize("source", SESSIONS, ids=lambda p: p.name)
def test_analyze_and_compact_agree_before_and_after_an_apply(
    source: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = copy(tmp_path, source)
    agree(capsys, path)
    code = main(["compact", str(path), "--force", "--provider", "offline", "--apply"])
    capsys.readouterr()
    if code != 0:
        pytest.skip(f"{source.name}: nothing to apply")
    analysed, _ = agree(capsys, path)
    assert analysed["recorded_prompt_tokens"] is None  # usage before the compaction no longer counts


def test_the_context_estimate_is_what_compress_compares(tmp_path: Path) -> None:
    """Without recorded usage, both sides count the environment turn Gemini CLI sends with the history."""
    session = load(SAMPLES / "gemini-cli-0.61-three-prompts.jsonl")
    analysis = analyze(session)
    context = compaction_context(session, analysis)
    contents = [t.content for t in analysis.turns]
    assert context.environment is not None and analysis.environment_quarters > 0
    assert analysis.context.estimated_tokens == estimate_contents([context.environment, *contents])
    assert analysis.context.estimated_tokens > analysis.total_estimated_tokens


def test_staged_with_agentic_honours_the_agentic_split(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = copy(tmp_path, SAMPLES / "coding-task.jsonl")
    _, plain = run_json(capsys, "compact", str(path), "--json", "--force", "--strategy", "staged",
                        "--target", "10", "--provider", "offline")
    _, agentic = run_json(capsys, "compact", str(path), "--json", "--force", "--strategy", "staged",
                          "--target", "10", "--agentic", "--provider", "offline")
    candidates = agentic_candidates([t.content for t in analyze(load(path)).turns])
    assert agentic["split_point"] in candidates
    assert agentic["split_point"] != plain["split_point"]


@pytest.mark.parametrize(("args", "words"), [
    (["--split", "3", "--agentic"], "choose one"),
    (["--target", "0.2"], "staged strategy's goal"),
    (["--split", "-1"], "below 0"),
    (["--timeout", "0"], "timeout must be above 0"),
    (["--timeout", "inf"], "timeout must be above 0 seconds, and finite"),
])
def test_combinations_that_cannot_work_are_refused(
    args: list[str], words: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = copy(tmp_path, SAMPLES / "coding-task.jsonl")
    before = path.read_bytes()
    code = main(["compact", str(path), "--provider", "offline", "--apply", *args])
    err = capsys.readouterr().err.strip()
    assert code == 2 and words in err and len(err.splitlines()) == 1
    assert path.read_bytes() == before and not any(p.name.startswith(".") for p in tmp_path.iterdir())


@pytest.mark.parametrize(("args", "named"), [
    (["--split", "26"], "split 26"),
    (["--agentic"], "the agentic split"),
    (["--instruction", "keep the auth details"], "a focus instruction"),
    (["--strategy", "staged", "--target", "10"], "target 10"),
])
def test_a_choice_about_the_summary_is_not_dropped_below_the_threshold(
    args: list[str], named: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Unforced, ``compact`` does what Gemini CLI would do now; below the threshold that is nothing.
    A split, target or focus given then would be silently dropped: it is refused, saying why, and
    honoured with --force."""
    path = copy(tmp_path, SAMPLES / "coding-task.jsonl")
    assert not analyze(load(path)).context.over_threshold
    before = path.read_bytes()
    code = main(["compact", str(path), "--provider", "offline", "--apply", *args])
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1, err
    assert f"{named} given, but Gemini CLI would not compress now" in err and "use --force" in err
    assert path.read_bytes() == before
    assert main(["compact", str(path), "--provider", "offline", "--json", "--force", *args]) == 0
    assert json.loads(capsys.readouterr().out)["status"] == "COMPRESSED"


def test_gemini_asked_for_without_credentials_is_refused_before_anything(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("GEMINI_API_KEY", "GOOGLE_API_KEY", "GOOGLE_GENAI_USE_VERTEXAI", "GOOGLE_GENAI_USE_ENTERPRISE"):
        monkeypatch.delenv(name, raising=False)
    path = copy(tmp_path, SAMPLES / "coding-task.jsonl")
    before = path.read_bytes()
    code = main(["compact", str(path), "--provider", "gemini", "--force", "--apply"])
    captured = capsys.readouterr()
    err = captured.err.strip()
    assert code == 2 and len(err.splitlines()) == 1 and not captured.out
    assert err.startswith("session-inspector: Gemini cannot run: no GEMINI_API_KEY") and "--provider offline" in err
    assert path.read_bytes() == before


def test_a_request_is_checked_once_for_both_faces() -> None:
    with pytest.raises(RequestError):
        CompactionRequest(strategy="fastest")
    with pytest.raises(RequestError):
        CompactionRequest(provider="openai")
    request = CompactionRequest(strategy="staged", target=0.2, instruction="   ", compare=False)
    assert request.instruction is None and request.target == 0.2
    assert CompactionRequest(compare=True, target=0.2).target == 0.2  # compare runs staged too
    for target in (math.inf, math.nan, 0.0, -3.0):  # the CLI's --target 1e400 is inf: refused, never an overflow
        with pytest.raises(RequestError, match="the target must be"):
            CompactionRequest(strategy="staged", target=target)
        with pytest.raises(ValueError, match="the target must be"):
            parse_target(repr(target))


@given(threshold=st.floats(0.01, 1.0), limit=st.sampled_from([32_768, 1_048_576, 2_097_152, 1_000_003]))
def test_the_threshold_shown_is_the_fewest_tokens_that_reach_it(threshold: float, limit: int) -> None:
    """A prompt of exactly the tokens shown as the threshold compresses, one fewer does not: the
    figure every face prints ("< threshold N") never contradicts the decision beside it."""
    shown = ContextFigures(None, 0, limit, threshold).threshold_tokens
    at, below = ContextFigures(shown, 0, limit, threshold), ContextFigures(shown - 1, 0, limit, threshold)
    assert at.over_threshold and not below.over_threshold
    assert f">= threshold {shown:,}" in at.reason() and f"< threshold {shown:,}" in below.reason()
