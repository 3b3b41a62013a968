"""compress(): the branches the differential test cannot reach, and the project's additions."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from inspector.compaction.compress import CompressionStatus, CompressOptions, InvalidSplit, compress
from inspector.compaction.prompts import ACKNOWLEDGEMENT
from inspector.compaction.request import CompactionRequest
from inspector.compaction.strategies import compact_session
from inspector.compaction.summarisers.offline import OfflineSummariser
from inspector.session import load
from inspector.tokens import estimate_contents

REPO = Path(__file__).resolve().parents[1]
SNAP = "<state_snapshot><overall_goal>g</overall_goal></state_snapshot>"


class Fixed:
    name = "fixed"
    model = "fixed-model"

    def __init__(self, *replies: str) -> None:
        self.replies = list(replies)
        self.calls: list[list[dict[str, Any]]] = []

    async def summarise(self, system_prompt: str, contents: list[dict[str, Any]]) -> str:
        self.calls.append(contents)
        return self.replies[len(self.calls) - 1]


class Forever:
    name = "forever"
    model = None

    def __init__(self) -> None:
        self.started = asyncio.Event()

    async def summarise(self, system_prompt: str, contents: list[dict[str, Any]]) -> str:
        self.started.set()
        await asyncio.Event().wait()
        return ""


def text(role: str, value: str) -> dict[str, Any]:
    return {"role": role, "parts": [{"text": value}]}


def chat(n: int = 6, size: int = 400) -> list[dict[str, Any]]:
    return [text("user" if i % 2 == 0 else "model", f"turn {i} " + "x" * size) for i in range(n)]


async def test_empty_history_is_noop_even_when_forced() -> None:
    result = await compress([], Fixed(), CompressOptions(force=True))
    assert result.status is CompressionStatus.NOOP and result.original_token_count == 0


async def test_threshold_uses_the_recorded_prompt_when_known() -> None:
    history = chat()
    below = await compress(history, Fixed(SNAP, SNAP), CompressOptions(model="gemini-2.5-pro",
                                                                       recorded_prompt_tokens=1000))
    assert below.status is CompressionStatus.NOOP and "threshold" in below.message
    above = await compress(history, Fixed(SNAP, SNAP), CompressOptions(model="gemini-2.5-pro",
                                                                       recorded_prompt_tokens=600_000))
    assert above.status is CompressionStatus.COMPRESSED
    # like for like: both counts are estimates; the recorded figure is reported beside them
    assert above.original_token_count == estimate_contents(history)
    assert above.new_token_count == estimate_contents(above.new_history or [])
    assert above.recorded_prompt_tokens == 600_000


async def test_environment_turn_counts_on_both_sides_and_is_never_summarised() -> None:
    env = text("user", "<session_context>\nworkspace: /w\n</session_context>")
    fixed = Fixed(SNAP, SNAP)
    result = await compress(chat(), fixed, CompressOptions(force=True, environment=env))
    assert result.original_token_count == estimate_contents([env, *chat()])
    assert result.new_token_count == estimate_contents([env, *(result.new_history or [])])
    assert all(env not in call for call in fixed.calls)
    assert result.new_history is not None and result.new_history[1] == text("model", ACKNOWLEDGEMENT)


async def test_user_split_must_be_a_candidate() -> None:
    history = chat()
    result = await compress(history, Fixed(SNAP, SNAP), CompressOptions(force=True, split=2))
    assert result.split_point == result.kept_from == 2 and result.new_history is not None
    assert result.new_history[2:] == history[2:]
    with pytest.raises(InvalidSplit, match="the history has 6 turns"):
        await compress(history, Fixed(), CompressOptions(force=True, split=9))


async def test_agentic_split_keeps_a_model_turn_right_after_the_snapshot() -> None:
    history = chat()
    result = await compress(history, Fixed(SNAP, SNAP), CompressOptions(force=True, split=3))
    assert result.status is CompressionStatus.COMPRESSED and result.new_history is not None
    assert result.new_history[0] == text("user", SNAP)
    assert result.new_history[1:] == history[3:]  # no acknowledgement: the roles still alternate
    assert result.split_kind == "agentic"  # a split before a model turn is named so on every screen


async def test_a_split_between_a_call_and_its_result_is_refused() -> None:
    call = {"role": "model", "parts": [{"functionCall": {"id": "c1", "name": "ls", "args": {}}}]}
    answer = {"role": "user", "parts": [{"functionResponse": {"id": "c1", "name": "ls", "response": {"output": "a"}}}]}
    history = [text("user", "go " * 400), call, answer, text("model", "done " * 400)]
    with pytest.raises(InvalidSplit, match="turn 2 is a user turn holding tool results"):
        await compress(history, Fixed(), CompressOptions(force=True, split=2))
    result = await compress(history, Fixed(SNAP, SNAP), CompressOptions(force=True, split=1))  # before the call: fine
    assert result.new_history is not None and result.new_history[1:] == history[1:]


async def test_agentic_option_splits_a_single_prompt_agent_run() -> None:
    history = [text("user", "do everything")]
    for n in range(20):
        history += [{"role": "model", "parts": [{"functionCall": {"id": f"c{n}", "name": "run", "args": {"n": n}}}]},
                    {"role": "user", "parts": [{"functionResponse": {"id": f"c{n}", "name": "run",
                                                                     "response": {"output": "y" * 800}}}]}]
    # it ends on a tool result, as a run that is still going does
    reference = await compress(history, Fixed(SNAP, SNAP), CompressOptions(force=True))
    assert reference.status is CompressionStatus.NOOP and reference.split_point == 0
    agentic = await compress(history, Fixed(SNAP, SNAP), CompressOptions(force=True, agentic=True))
    assert agentic.status is CompressionStatus.COMPRESSED and agentic.split_kind == "agentic"
    point = agentic.split_point
    assert point is not None and history[point]["role"] == "model"
    assert agentic.new_history == [text("user", SNAP), *history[point:]]
    assert agentic.new_token_count < agentic.original_token_count


async def test_split_zero_summarises_nothing() -> None:
    result = await compress(chat(), Fixed(), CompressOptions(force=True, split=0))
    assert result.status is CompressionStatus.NOOP and result.new_history is None


async def test_inflated_result_keeps_the_history() -> None:
    result = await compress(chat(4, 10), Fixed(SNAP * 20, ""), CompressOptions(force=True))
    assert result.status is CompressionStatus.COMPRESSION_FAILED_INFLATED_TOKEN_COUNT
    assert result.new_history is None and result.new_token_count > result.original_token_count
    assert result.snapshot == SNAP * 20  # still shown to the user


def _big_tool_history() -> list[dict[str, Any]]:
    return [
        text("user", "Read the dump."),
        {"role": "model", "parts": [{"functionCall": {"id": "1", "name": "read_file", "args": {"file_path": "d"}}}]},
        {"role": "user", "parts": [{"functionResponse": {"id": "1", "name": "read_file",
                                                         "response": {"output": "line\n" * 220_000}}}]},
        text("model", "It is big."),
        text("user", "Summarise it."),
        text("model", "Done."),
    ]


async def test_summariser_gets_the_truncated_part_when_the_original_does_not_fit(tmp_path: Path) -> None:
    fixed = Fixed(SNAP, SNAP)
    result = await compress(_big_tool_history(), fixed, CompressOptions(model="gemma-4-31b-it", force=True,
                                                                        temp_dir=tmp_path))
    assert result.summarised_with == "truncated" and result.split_point == 4
    sent = fixed.calls[0][2]["parts"][0]["functionResponse"]["response"]["output"]
    assert sent.startswith("Output too large.") and str(tmp_path / "tool-outputs" / "read_file_1.txt") in sent
    assert [t.output_file for t in result.truncations] == [str(tmp_path / "tool-outputs" / "read_file_1.txt")]
    assert not (tmp_path / "tool-outputs").exists()  # planned, not written


async def test_summariser_gets_the_original_part_when_it_fits(tmp_path: Path) -> None:
    fixed = Fixed(SNAP, SNAP)
    result = await compress(_big_tool_history(), fixed, CompressOptions(model="gemini-2.5-pro", force=True,
                                                                        temp_dir=tmp_path))
    assert result.summarised_with == "original"
    assert fixed.calls[0][2] == _big_tool_history()[2]


async def test_previous_failure_only_truncates(tmp_path: Path) -> None:
    result = await compress(_big_tool_history(), Fixed(), CompressOptions(has_failed_attempt=True,
                                                                          recorded_prompt_tokens=600_000,
                                                                          temp_dir=tmp_path))
    assert result.status is CompressionStatus.CONTENT_TRUNCATED and result.kept_from == 0
    assert result.new_history is not None and len(result.new_history) == 6
    nothing = await compress(chat(), Fixed(), CompressOptions(has_failed_attempt=True, recorded_prompt_tokens=600_000))
    assert nothing.status is CompressionStatus.NOOP
    forced = await compress(chat(), Fixed(SNAP, SNAP), CompressOptions(has_failed_attempt=True, force=True))
    assert forced.status is CompressionStatus.COMPRESSED


async def test_cancel_stops_compression() -> None:
    summariser = Forever()
    task = asyncio.create_task(compress(chat(), summariser, CompressOptions(force=True)))
    await summariser.started.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


async def test_compress_session_reads_what_the_session_says() -> None:
    path = REPO / "sample_sessions" / "gemini-cli-0.61-compress.jsonl"
    if not path.exists():
        pytest.skip("sample session missing")
    session = load(path)
    result = await compact_session(session, CompactionRequest(force=True), OfflineSummariser())
    assert result.source_sha256 == session.sha256
    assert result.recorded_prompt_tokens is not None
    assert result.previous_snapshot is not None and "<state_snapshot>" in result.previous_snapshot
    assert result.status is CompressionStatus.COMPRESSED and result.facts is not None
    assert result.to_json()["status"] == "COMPRESSED"
