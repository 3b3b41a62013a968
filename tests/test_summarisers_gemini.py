"""The Gemini summariser through the real google-genai client against a local server."""

from __future__ import annotations

import json

import pytest

from inspector.compaction import prompts
from inspector.compaction.compress import CompressionStatus, compress
from inspector.compaction.summarisers import gemini_available, pick_summariser
from inspector.compaction.summarisers.gemini import GeminiSummariser
from inspector.compaction.summarisers.offline import OfflineSummariser
from tests.gemini_server import GeminiServer, error, hang, raw, reply

KEY = "AIzaTEST-secret-key-0123456789"
HISTORY = [
    {"role": "user", "parts": [{"text": "Please fix `parse()` in src/parse.py."}]},
    {"role": "model", "parts": [{"text": "Looking."}, {"functionCall": {"id": "c1", "name": "read_file",
                                                                        "args": {"file_path": "src/parse.py"}}}]},
    {"role": "user", "parts": [{"functionResponse": {"id": "c1", "name": "read_file",
                                                     "response": {"output": "def parse(): ..."}}}]},
    {"role": "model", "parts": [{"text": "It returns nothing."}]},
    {"role": "user", "parts": [{"text": "Now add a test."}]},
    {"role": "model", "parts": [{"text": "Done."}]},
]
SNAP = "<state_snapshot><overall_goal>fix parse</overall_goal></state_snapshot>"


class Sleeps:
    def __init__(self) -> None:
        self.waits: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)


def summariser(server: GeminiServer, **options: object) -> GeminiSummariser:
    return GeminiSummariser("gemini-2.5-flash", api_key=KEY, base_url=server.url, **options)  # type: ignore[arg-type]


async def run(server: GeminiServer, **options: object):  # type: ignore[no-untyped-def]
    return await compress(HISTORY, summariser(server, **options), model="gemini-2.5-flash", force=True,
                          split=4, instruction="mention the parser tests")


def assert_no_key(*texts: str) -> None:
    for text in texts:
        assert KEY not in text


async def test_requests_carry_prompt_history_anchor_and_verification_in_order() -> None:
    with GeminiServer([reply(SNAP + " draft", thought="private"), reply("  " + SNAP + "  ")]) as server:
        result = await run(server)
    assert result.status is CompressionStatus.COMPRESSED
    assert result.snapshot == SNAP and result.draft_snapshot == SNAP + " draft"  # thought parts are dropped
    first, second = server.bodies()
    for body in (first, second):
        assert server.texts(body["systemInstruction"]) == [prompts.COMPRESSION_SYSTEM_PROMPT]
        assert body["contents"][:4] == json.loads(json.dumps(HISTORY[:4]))
    assert len(first["contents"]) == 5
    anchor, focus = server.texts(first["contents"][4])
    assert anchor == prompts.anchor_text(False)
    assert focus == prompts.focus_text("mention the parser tests")
    assert [c["role"] for c in second["contents"]] == ["user", "model", "user", "model", "model", "user"]
    assert server.texts(second["contents"][4]) == [SNAP + " draft"]
    assert server.texts(second["contents"][5])[0] == prompts.VERIFY_REQUEST
    assert all(r["headers"]["x-goog-api-key"] == KEY for r in server.requests)
    assert result.new_history is not None and result.new_history[0]["parts"][0]["text"] == SNAP
    assert result.new_history[2:] == HISTORY[4:]
    assert_no_key(json.dumps(result.to_json()))


async def test_merge_instruction_when_history_holds_a_snapshot() -> None:
    history = [{"role": "user", "parts": [{"text": SNAP}]}, {"role": "model", "parts": [{"text": "ok"}]}, *HISTORY]
    with GeminiServer([reply(SNAP), reply(SNAP)]) as server:
        result = await compress(history, summariser(server), model="m", force=True, split=6)
    assert result.previous_snapshot == SNAP
    assert server.texts(server.bodies()[0]["contents"][-1])[0] == prompts.anchor_text(True)


async def test_blank_verification_falls_back_to_the_draft() -> None:
    with GeminiServer([reply(SNAP), reply("   \n")]) as server:
        result = await run(server)
    assert result.status is CompressionStatus.COMPRESSED and result.snapshot == SNAP


async def test_blank_summary_is_empty_summary() -> None:
    with GeminiServer([reply(""), reply(" ")]) as server:
        result = await run(server)
    assert result.status is CompressionStatus.COMPRESSION_FAILED_EMPTY_SUMMARY
    assert result.new_history is None and "empty" in result.message


async def test_429_is_retried_with_backoff() -> None:
    sleeps = Sleeps()
    script = [error(429, "RESOURCE_EXHAUSTED", "quota"), error(503, "UNAVAILABLE", "busy"), reply(SNAP), reply(SNAP)]
    with GeminiServer(script) as server:
        result = await run(server, sleep=sleeps, initial_delay=0.5)
    assert result.status is CompressionStatus.COMPRESSED
    assert sleeps.waits == [0.5, 1.0]
    assert len(server.requests) == 4


async def test_retries_are_bounded() -> None:
    sleeps = Sleeps()
    with GeminiServer([error(429, "RESOURCE_EXHAUSTED", "quota")] * 3) as server:
        result = await run(server, sleep=sleeps, max_attempts=3)
    assert result.status is CompressionStatus.COMPRESSION_FAILED_SUMMARISER_ERROR
    assert "429" in result.message and "after 3 attempts" in result.message
    assert len(server.requests) == 3 and len(sleeps.waits) == 2


async def test_500_fails_with_a_clear_message() -> None:
    with GeminiServer([error(500, "INTERNAL", "backend exploded")]) as server:
        result = await run(server, max_attempts=1)
    assert result.status is CompressionStatus.COMPRESSION_FAILED_SUMMARISER_ERROR
    assert "500" in result.message and "backend exploded" in result.message
    assert result.new_history is None


async def test_timeout() -> None:
    with GeminiServer([hang()]) as server:
        result = await run(server, timeout=0.3)
    assert result.status is CompressionStatus.COMPRESSION_FAILED_SUMMARISER_ERROR
    assert "did not answer within 0.3 s" in result.message


async def test_malformed_body() -> None:
    with GeminiServer([raw(b"<html>proxy error</html>")]) as server:
        result = await run(server)
    assert result.status is CompressionStatus.COMPRESSION_FAILED_SUMMARISER_ERROR
    assert "cannot be read" in result.message


async def test_an_error_echoing_the_key_is_scrubbed() -> None:
    with GeminiServer([error(400, "INVALID_ARGUMENT", f"API key {KEY} not valid")]) as server:
        result = await run(server)
    assert result.status is CompressionStatus.COMPRESSION_FAILED_SUMMARISER_ERROR
    assert "***" in result.message
    assert_no_key(result.message, json.dumps(result.to_json()))


async def test_cancellation_stops_the_call() -> None:
    import asyncio

    with GeminiServer([hang()]) as server:
        task = asyncio.create_task(run(server, timeout=30))
        while not server.requests:  # wait for the request to arrive, not for a fixed time
            await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task


def test_auto_picks_gemini_only_with_credentials() -> None:
    assert not gemini_available({})
    assert gemini_available({"GEMINI_API_KEY": "x"}) and gemini_available({"GOOGLE_API_KEY": "x"})
    assert gemini_available({"GOOGLE_GENAI_USE_VERTEXAI": "true", "GOOGLE_CLOUD_PROJECT": "p"})
    assert not gemini_available({"GOOGLE_GENAI_USE_VERTEXAI": "true"})
    assert isinstance(pick_summariser("auto", env={}), OfflineSummariser)
    picked = pick_summariser("auto", model="gemini-2.5-pro", env={"GEMINI_API_KEY": "x"})
    assert isinstance(picked, GeminiSummariser) and picked.model == "gemini-2.5-pro"
    with pytest.raises(ValueError):
        pick_summariser("openai")
