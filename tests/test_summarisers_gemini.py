"""The Gemini summariser through the real google-genai client against a local server."""

from __future__ import annotations

import json

import pytest

from inspector.compaction import prompts
from inspector.compaction.compress import CompressionStatus, CompressOptions, compress
from inspector.compaction.summarisers import gemini_available, pick_summariser
from inspector.compaction.summarisers.gemini import GeminiSummariser
from inspector.compaction.summarisers.offline import OfflineSummariser
from tests.gemini_server import GeminiServer, error, hang, raw, reply, verified_claims

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
    return await compress(HISTORY, summariser(server, **options), CompressOptions(
        model="gemini-2.5-flash", force=True, split=4, instruction="mention the parser tests"
    ))


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
        result = await compress(history, summariser(server), CompressOptions(model="m", force=True, split=6))
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


# -- which provider, and why (decided before anything is sent) -------------------------------------------------

def test_the_choice_names_the_variable_never_its_value() -> None:
    from inspector.compaction.summarisers import choose_provider

    choice = choose_provider("auto", {"GEMINI_API_KEY": KEY})
    assert (choice.provider, choice.backend, choice.key_variable) == ("gemini", "api_key", "GEMINI_API_KEY")
    assert "GEMINI_API_KEY" in choice.reason and KEY not in str(choice.to_json())
    both = choose_provider("auto", {"GEMINI_API_KEY": KEY, "GOOGLE_API_KEY": KEY + "2"})
    assert both.key_variable == "GOOGLE_API_KEY" and "the SDK uses GOOGLE_API_KEY" in both.reason
    vertex = choose_provider("auto", {"GOOGLE_GENAI_USE_VERTEXAI": "True", "GOOGLE_CLOUD_PROJECT": "proj",
                                      "GOOGLE_CLOUD_LOCATION": "europe-west4", "GEMINI_API_KEY": KEY})
    assert (vertex.backend, vertex.project, vertex.location) == ("vertex", "proj", "europe-west4")
    assert vertex.label() == "Vertex AI (proj, europe-west4)" and "Application Default Credentials" in vertex.reason
    assert choose_provider("auto", {"GOOGLE_GENAI_USE_VERTEXAI": "1", "GOOGLE_CLOUD_PROJECT": "p"}).location == "global"
    express = choose_provider("auto", {"GOOGLE_GENAI_USE_VERTEXAI": "true", "GOOGLE_API_KEY": KEY})
    assert express.backend == "vertex_key" and KEY not in express.reason
    half = choose_provider("auto", {"GOOGLE_GENAI_USE_VERTEXAI": "true"})
    assert half.provider == "offline" and "GOOGLE_CLOUD_PROJECT is not" in half.reason
    none = choose_provider("auto", {})
    assert none.provider == "offline" and not none.sends and "nothing is sent" in none.reason
    asked = choose_provider("gemini", {})
    assert asked.provider == "gemini" and asked.problem and asked.problem.startswith("Gemini cannot run")
    assert choose_provider("offline", {"GEMINI_API_KEY": KEY}).provider == "offline"
    assert choose_provider("auto", {"GOOGLE_GENAI_USE_ENTERPRISE": "false", "GOOGLE_GENAI_USE_VERTEXAI": "true",
                                    "GOOGLE_CLOUD_PROJECT": "p"}).provider == "offline"


@pytest.fixture
def vertex_env(tmp_path, monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    for name in ("GEMINI_API_KEY", "GOOGLE_API_KEY", "GOOGLE_GENAI_USE_ENTERPRISE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("GOOGLE_GENAI_USE_VERTEXAI", "true")
    monkeypatch.setenv("GOOGLE_CLOUD_PROJECT", "compaction-proj")
    monkeypatch.setenv("GOOGLE_CLOUD_LOCATION", "us-central1")
    return tmp_path


async def test_vertex_ai_with_application_default_credentials(vertex_env, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The real SDK and google-auth: a service-account key signs a JWT, the loopback server trades it for a token."""
    with GeminiServer([reply(SNAP), reply(SNAP)]) as server:
        monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(server.service_account_file(vertex_env)))
        summariser = pick_summariser("auto", model="gemini-2.5-pro", base_url=server.url)
        assert isinstance(summariser, GeminiSummariser)
        result = await compress(HISTORY, summariser, CompressOptions(model="gemini-2.5-pro", force=True, split=4))
    assert result.status is CompressionStatus.COMPRESSED and result.snapshot == SNAP
    assert [(r["project"], r["location"], r["model"]) for r in server.requests] == \
        [("compaction-proj", "us-central1", "gemini-2.5-pro")] * 2
    assert all(r["headers"]["authorization"] == f"Bearer {server.access_token}" for r in server.requests)
    assert all("x-goog-api-key" not in r["headers"] for r in server.requests)
    (grant,) = server.token_requests  # one token, reused for both calls
    assert grant["grant_type"] == "urn:ietf:params:oauth:grant-type:jwt-bearer"
    claims = verified_claims(grant["assertion"], server.public_key)
    assert claims["iss"] == "compactor@test-project.iam.gserviceaccount.com"
    assert claims["scope"] == "https://www.googleapis.com/auth/cloud-platform"


async def test_vertex_ai_without_credentials_is_one_clear_line(vertex_env, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(vertex_env / "missing.json"))
    with GeminiServer([reply(SNAP)]) as server:
        result = await compress(HISTORY, pick_summariser("auto", base_url=server.url), CompressOptions(model="m",
                                                                                                       force=True,
                                                                                                       split=4))
    assert result.status is CompressionStatus.COMPRESSION_FAILED_SUMMARISER_ERROR
    assert "Vertex AI credentials" in result.message and "\n" not in result.message
    assert server.requests == []  # nothing was sent without a token


# -- a key echoed back is masked in whatever is shown or written (12.8) ------------------------------------------

def _echo_forms(key: str) -> tuple[str, str]:
    import base64

    plain = base64.b64encode(f"debug: key={key}".encode()).decode()
    return plain, base64.urlsafe_b64encode(f"k {key}".encode()).decode()


async def test_a_key_echoed_in_a_200_reply_is_masked() -> None:
    plain_b64, url_b64 = _echo_forms(KEY)
    echo = f"<state_snapshot><key_knowledge>- the key is {KEY}; {plain_b64}; {url_b64}</key_knowledge></state_snapshot>"
    with GeminiServer([reply(echo), reply(echo)]) as server:
        result = await run(server)
    assert result.status is CompressionStatus.COMPRESSED
    dumped = json.dumps(result.to_json())
    for secret_form in (KEY, plain_b64[12:40], url_b64[4:36]):
        assert secret_form not in dumped
    assert "***" in (result.snapshot or "")
