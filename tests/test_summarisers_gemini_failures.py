"""Every way Gemini can answer badly, as a user with a key meets it: ``compact --provider gemini``
against the loopback server through the real google-genai client.

For each: one line saying what happened (the HTTP status, the finishReason or blockReason) and what
to do, exit 1, the session untouched, the key nowhere, no traceback.
"""

from __future__ import annotations

import json
import shutil
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from inspector.cli import main
from inspector.compaction.compress import CompressionStatus, CompressOptions, compress
from inspector.compaction.summarisers.gemini import GeminiSummariser
from tests.gemini_server import GeminiServer, Reply, error, hang, reply

KEY = "AIzaMoreFailures-0123456789abcdefXYZ"
SAMPLE = Path(__file__).resolve().parents[1] / "sample_sessions" / "coding-task.jsonl"
SNAP = "<state_snapshot><overall_goal>fix parse</overall_goal></state_snapshot>"
HISTORY = [
    {"role": "user", "parts": [{"text": "Please fix `parse()` in src/parse.py. " * 50}]},
    {"role": "model", "parts": [{"text": "It returns nothing. " * 50}]},
    {"role": "user", "parts": [{"text": "Now add a test."}]},
    {"role": "model", "parts": [{"text": "Done."}]},
]


class Sleeps:
    def __init__(self) -> None:
        self.waits: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)


def answer(parts: list[dict[str, Any]] | None, finish: str | None = "STOP", **extra: Any) -> Reply:
    """A 200 reply with one candidate of ``parts`` (None: no content) ending with ``finish``."""
    candidate: dict[str, Any] = {"index": 0}
    if parts is not None:
        candidate["content"] = {"role": "model", "parts": parts}
    if finish is not None:
        candidate["finishReason"] = finish
    return Reply(200, json.dumps({"candidates": [candidate], **extra}).encode())


@pytest.fixture
def session(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for name in ("GOOGLE_API_KEY", "GOOGLE_GENAI_USE_VERTEXAI", "GOOGLE_GENAI_USE_ENTERPRISE", "GOOGLE_CLOUD_PROJECT"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("GEMINI_API_KEY", KEY)
    monkeypatch.setitem(GeminiSummariser.__init__.__kwdefaults__, "sleep", Sleeps())  # retries never wait
    chats = tmp_path / "chats"
    chats.mkdir()
    return Path(shutil.copyfile(SAMPLE, chats / SAMPLE.name))


def compact(session: Path, url: str, capsys: pytest.CaptureFixture[str], *extra: str) -> tuple[int, dict[str, Any],
                                                                                                 str]:
    """``compact --json --apply`` of ``session`` against ``url``: exit code, the JSON, stderr; and checks what
    every failure must leave: nothing written, the key nowhere, no traceback."""
    before = session.read_bytes()
    code = main(["compact", str(session), "--force", "--provider", "gemini", "--base-url", url, "--timeout", "5",
                 "--json", "--apply", *extra])
    out, err = capsys.readouterr()
    assert session.read_bytes() == before
    assert [p.name for p in session.parent.parent.rglob("*") if p.is_file()] == [session.name]
    for text in (out, err):
        assert KEY not in text and "Traceback" not in text
    return code, json.loads(out), err


# What the server answers (both calls get it), and the words the user must read.
CASES = {
    "429": ([error(429, "RESOURCE_EXHAUSTED", "Resource has been exhausted (e.g. check quota).")] * 4,
            ["HTTP 429", "after 4 attempts", "quota", "try again"]),
    "500": ([error(500, "INTERNAL", "An internal error has occurred.")] * 4, ["HTTP 500", "try again later"]),
    "503": ([error(503, "UNAVAILABLE", "The model is overloaded.")] * 4, ["HTTP 503", "overloaded", "try again later"]),
    "400": ([error(400, "INVALID_ARGUMENT", "Request contains an invalid argument.")],
            ["HTTP 400", "Request contains an invalid argument", "--provider offline"]),
    "403": ([error(403, "PERMISSION_DENIED", "Method doesn't allow unregistered callers.")],
            ["HTTP 403", "credentials were refused", "check the key in GEMINI_API_KEY"]),
    "400-bad-key": ([error(400, "INVALID_ARGUMENT", "API key not valid. Please pass a valid API key.")],
                    ["HTTP 400", "credentials were refused", "check the key in GEMINI_API_KEY"]),
    "max-tokens": ([answer([{"text": "<state_snapshot><overall_goal>fix the pa"}], "MAX_TOKENS")] * 2,
                   ["cut off", "finishReason MAX_TOKENS", "output token limit"]),
    "safety": ([answer([], "SAFETY")] * 2, ["finishReason SAFETY", "safety filters", "--provider offline"]),
    "safety-no-content": ([answer(None, "SAFETY")] * 2, ["finishReason SAFETY"]),
    "safety-half-written": ([answer([{"text": "<state_snapshot><overall_goal>"}], "SAFETY")] * 2,
                            ["finishReason SAFETY", "cut off"]),
    "blocked": ([Reply(200, json.dumps({"promptFeedback": {"blockReason": "PROHIBITED_CONTENT"}}).encode())] * 2,
                ["blocked the request", "promptFeedback.blockReason PROHIBITED_CONTENT"]),
    "no-candidates": ([Reply(200, b'{"candidates": []}')] * 2, ["no candidate"]),
    "recitation": ([answer([], "RECITATION")] * 2, ["finishReason RECITATION"]),
}


@pytest.mark.parametrize("case", list(CASES))
def test_each_bad_answer_is_one_line_saying_what_and_what_to_do(case: str, session: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    script, words = CASES[case]
    with GeminiServer(list(script)) as server:
        code, report, err = compact(session, server.url, capsys)
    assert code == 1
    assert report["status"].startswith("COMPRESSION_FAILED")
    message = report["message"]
    assert "\n" not in message and "; " in message, message  # what happened; what to do
    for word in words:
        assert word in message, (word, message)
    assert "nothing was written" in err


def test_retries_are_said_as_they_happen(session: Path, capsys: pytest.CaptureFixture[str]) -> None:
    script = [error(503, "UNAVAILABLE", "busy"), error(429, "RESOURCE_EXHAUSTED", "quota"), reply(SNAP), reply(SNAP)]
    with GeminiServer(script) as server:
        code = main(["compact", str(session), "--force", "--provider", "gemini", "--base-url", server.url, "--json"])
    out, err = capsys.readouterr()
    assert code == 0 and json.loads(out)["status"] == "COMPRESSED"
    lines = err.splitlines()
    assert lines == ["session-inspector: Gemini answered HTTP 503 UNAVAILABLE; trying again in 1 s (attempt 2 of 4)",
                     "session-inspector: Gemini answered HTTP 429 RESOURCE_EXHAUSTED; trying again in 2 s "
                     "(attempt 3 of 4)"]


def test_a_model_that_does_not_exist(session: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with GeminiServer(answer=lambda body: error(404, "NOT_FOUND", "models/gemini-nope-9 is not found")) as server:
        code, report, _ = compact(session, server.url, capsys, "--model", "gemini-nope-9")
    assert code == 1 and {r["model"] for r in server.requests} == {"gemini-nope-9"}
    assert "HTTP 404" in report["message"] and "no model 'gemini-nope-9'" in report["message"]
    assert "--model" in report["message"].split(";")[-1]


def test_a_timeout(session: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with GeminiServer([hang()]) as server:
        code = main(["compact", str(session), "--force", "--provider", "gemini", "--base-url", server.url,
                     "--timeout", "0.5", "--json"])
    report = json.loads(capsys.readouterr().out)
    assert code == 1 and "did not answer within 0.5 s" in report["message"] and "--timeout" in report["message"]


def test_connection_refused_names_where_and_why(session: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with socket.socket() as sock:  # a port nobody listens on once it is closed
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    code, report, _ = compact(session, f"http://127.0.0.1:{port}", capsys)
    message = report["message"]
    assert code == 1 and f"cannot reach Gemini at 127.0.0.1:{port} (Connection refused)" in message
    assert "SSLContext" not in message and "--base-url" in message


def test_a_huge_error_message_is_cut(session: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with GeminiServer([error(400, "INVALID_ARGUMENT", "x" * 1_000_000)]) as server:
        code, report, _ = compact(session, server.url, capsys)
    assert code == 1 and "HTTP 400" in report["message"] and len(report["message"]) < 1000


# -- what the server asks before a retry -------------------------------------------------------------------------

class HeaderServer:
    """A loopback server answering each POST with the next (status, headers, body)."""

    def __init__(self, script: list[tuple[int, dict[str, str], bytes]]) -> None:
        self.script, self.count = list(script), 0
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                status, headers, body = outer.script.pop(0)
                outer.count += 1
                if status == 0:  # the connection drops before any answer
                    self.close_connection = True
                    return
                self.send_response(status)
                for name, value in {"Content-Type": "application/json", **headers}.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def __enter__(self) -> HeaderServer:
        threading.Thread(target=self.httpd.serve_forever, args=(0.02,), daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def quota(headers: dict[str, str], details: list[dict[str, Any]] | None = None) -> tuple[int, dict[str, str], bytes]:
    body = {"error": {"code": 429, "message": "quota", "status": "RESOURCE_EXHAUSTED", "details": details or []}}
    return 429, headers, json.dumps(body).encode()


def ok(text: str) -> tuple[int, dict[str, str], bytes]:
    return 200, {}, reply(text).body


async def test_retry_after_is_waited_when_longer_than_the_backoff() -> None:
    sleeps = Sleeps()
    with HeaderServer([quota({"Retry-After": "9"}), ok(SNAP), ok(SNAP)]) as server:
        summariser = GeminiSummariser("gemini-2.5-flash", api_key=KEY, base_url=server.url, sleep=sleeps)
        result = await compress(HISTORY, summariser, CompressOptions(model="gemini-2.5-flash", force=True, split=2))
    assert result.status is CompressionStatus.COMPRESSED and sleeps.waits == [9.0] and server.count == 3


async def test_retry_info_in_the_body_is_waited() -> None:
    sleeps = Sleeps()
    info = [{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "12s"}]
    with HeaderServer([quota({}, info), ok(SNAP), ok(SNAP)]) as server:
        summariser = GeminiSummariser("gemini-2.5-flash", api_key=KEY, base_url=server.url, sleep=sleeps)
        result = await compress(HISTORY, summariser, CompressOptions(model="gemini-2.5-flash", force=True, split=2))
    assert result.status is CompressionStatus.COMPRESSED and sleeps.waits == [12.0]


async def test_a_retry_after_past_the_longest_wait_fails_at_once_and_says_it() -> None:
    sleeps = Sleeps()
    with HeaderServer([quota({"Retry-After": "3600"}), ok(SNAP), ok(SNAP)]) as server:
        summariser = GeminiSummariser("gemini-2.5-flash", api_key=KEY, base_url=server.url, sleep=sleeps)
        result = await compress(HISTORY, summariser, CompressOptions(model="gemini-2.5-flash", force=True, split=2))
    assert result.status is CompressionStatus.COMPRESSION_FAILED_SUMMARISER_ERROR
    assert sleeps.waits == [] and server.count == 1
    assert "HTTP 429" in result.message and "3600 s" in result.message and "Retry-After" in result.message


async def test_without_retry_after_the_backoff_doubles_and_stops() -> None:
    sleeps = Sleeps()
    with HeaderServer([quota({})] * 3) as server:
        summariser = GeminiSummariser("gemini-2.5-flash", api_key=KEY, base_url=server.url, sleep=sleeps,
                                      max_attempts=3, initial_delay=0.5)
        result = await compress(HISTORY, summariser, CompressOptions(model="gemini-2.5-flash", force=True, split=2))
    assert result.status is CompressionStatus.COMPRESSION_FAILED_SUMMARISER_ERROR
    assert sleeps.waits == [0.5, 1.0] and server.count == 3
    assert "after 3 attempts 0.5, 1 s apart" in result.message


# -- the verification call ---------------------------------------------------------------------------------------

async def test_a_blocked_verification_leaves_the_draft_and_says_why() -> None:
    with GeminiServer([reply(SNAP), answer([], "SAFETY")]) as server:
        summariser = GeminiSummariser("gemini-2.5-flash", api_key=KEY, base_url=server.url)
        result = await compress(HISTORY, summariser, CompressOptions(model="gemini-2.5-flash", force=True, split=2))
    assert result.status is CompressionStatus.COMPRESSED and result.snapshot == SNAP
    assert result.verification_note is not None and "finishReason SAFETY" in result.verification_note
    assert result.to_json()["verification_problem"] == result.verification_problem


async def test_a_cut_off_verification_fails_rather_than_stand_cut() -> None:
    with GeminiServer([reply(SNAP), answer([{"text": "<state_snapshot><overall_goal>fi"}], "MAX_TOKENS")]) as server:
        summariser = GeminiSummariser("gemini-2.5-flash", api_key=KEY, base_url=server.url)
        result = await compress(HISTORY, summariser, CompressOptions(model="gemini-2.5-flash", force=True, split=2))
    assert result.status is CompressionStatus.COMPRESSION_FAILED_SUMMARISER_ERROR
    assert "finishReason MAX_TOKENS" in result.message and result.new_history is None


async def test_a_key_in_a_block_message_or_a_finish_reason_is_masked() -> None:
    blocked = Reply(200, json.dumps({"promptFeedback": {"blockReason": "OTHER",
                                                        "blockReasonMessage": f"key {KEY} is flagged"}}).encode())
    with GeminiServer([blocked]) as server:
        summariser = GeminiSummariser("gemini-2.5-flash", api_key=KEY, base_url=server.url)
        result = await compress(HISTORY, summariser, CompressOptions(model="gemini-2.5-flash", force=True, split=2))
    assert result.status is CompressionStatus.COMPRESSION_FAILED_EMPTY_SUMMARY
    assert "blockReason OTHER: key *** is flagged" in result.message and KEY not in json.dumps(result.to_json())
    with GeminiServer([answer([], f"WEIRD_{KEY}")]) as server:
        summariser = GeminiSummariser("gemini-2.5-flash", api_key=KEY, base_url=server.url)
        result = await compress(HISTORY, summariser, CompressOptions(model="gemini-2.5-flash", force=True, split=2))
    assert "finishReason" in result.message and KEY not in json.dumps(result.to_json())


async def test_retry_after_as_a_date() -> None:
    import email.utils
    import time

    sleeps = Sleeps()
    when = email.utils.formatdate(time.time() + 20, usegmt=True)
    with HeaderServer([quota({"Retry-After": when}), ok(SNAP), ok(SNAP)]) as server:
        summariser = GeminiSummariser("gemini-2.5-flash", api_key=KEY, base_url=server.url, sleep=sleeps)
        result = await compress(HISTORY, summariser, CompressOptions(model="gemini-2.5-flash", force=True, split=2))
    assert result.status is CompressionStatus.COMPRESSED and len(sleeps.waits) == 1
    assert 10 < sleeps.waits[0] <= 21  # the date's seconds from now (whole seconds, and the time the call took)


def test_a_verification_that_throws_a_whole_draft_away_says_so(session: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    with GeminiServer([reply(SNAP), reply("I'm sorry, I can't help with that.")]) as server:
        code, report, err = compact(session, server.url, capsys)
    assert code == 1 and report["status"] == "COMPRESSED"  # Gemini CLI would keep the refusal: it is not applied
    assert "no <state_snapshot>" in report["snapshot_problem"]
    assert "the draft was a whole snapshot, which the verification call replaced" in report["snapshot_problem"]
    assert "nothing was written" in err
    with GeminiServer([reply("I can't."), reply("Still no.")]) as server:  # no whole draft: nothing more to say
        code, report, err = compact(session, server.url, capsys)
    assert code == 1 and "draft" not in report["snapshot_problem"]


async def test_a_dropped_connection_is_retried_and_said() -> None:
    from inspector.progress import Progress, Reporter

    sleeps, said = Sleeps(), []

    def heard(progress: Progress) -> None:
        said.append(progress.stage)

    with HeaderServer([(0, {}, b""), ok(SNAP), ok(SNAP)]) as server:
        summariser = GeminiSummariser("gemini-2.5-flash", api_key=KEY, base_url=server.url, sleep=sleeps)
        result = await compress(HISTORY, summariser, CompressOptions(
            model="gemini-2.5-flash", force=True, split=2
        ), reporter=Reporter(on_progress=heard))
    assert result.status is CompressionStatus.COMPRESSED and sleeps.waits == [1.0] and server.count == 3
    (retry,) = [stage for stage in said if stage.startswith("retry: ")]
    assert retry.startswith(f"retry: cannot reach Gemini at {server.url} (") and \
        retry.endswith("; trying again in 1 s (attempt 2 of 4)")


def test_empty_answers_say_both_calls_gave_nothing(session: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with GeminiServer([reply(""), reply("  \n")]) as server:
        code, report, err = compact(session, server.url, capsys)
    assert code == 1 and report["status"] == "COMPRESSION_FAILED_EMPTY_SUMMARY" and len(server.bodies()) == 2
    assert "neither the draft nor the verification call answered any text; try again" in report["message"]
    assert "nothing was written" in err


async def test_the_token_limit_after_a_whole_snapshot_keeps_it() -> None:
    whole = SNAP + "\n\nThe snapshot above covers every turn; in the next ste"
    with GeminiServer([answer([{"text": whole}], "MAX_TOKENS")] * 2) as server:
        summariser = GeminiSummariser("gemini-2.5-flash", api_key=KEY, base_url=server.url)
        result = await compress(HISTORY, summariser, CompressOptions(model="gemini-2.5-flash", force=True, split=2))
    assert result.status is CompressionStatus.COMPRESSED and result.snapshot_problem is None
    assert result.snapshot is not None and result.snapshot.startswith(SNAP)


def test_escapes_and_markup_in_gemini_s_words_reach_the_terminal_as_text(session: Path,
                                                                          capsys: pytest.CaptureFixture[str]) -> None:
    words = "bad \x1b]0;pwned\x07 \x1b[2J [bold]x[/] [link=http://e.vil]here[/link]"
    with GeminiServer([error(400, "INVALID_ARGUMENT", words)]) as server:
        code = main(["compact", str(session), "--force", "--provider", "gemini", "--base-url", server.url])
    out, err = capsys.readouterr()
    assert code == 1 and "HTTP 400" in out
    assert "\x1b]" not in out + err and "\x07" not in out + err and "\x1b[2J" not in out + err
    assert "[bold]x[/]" in out.replace("\n", "")


def test_a_blocked_verification_under_the_staged_strategy_says_why(session: Path, capsys: pytest.CaptureFixture[str],
                                                                   ) -> None:
    """The staged strategy's summary stage keeps the reason the verification gave no text, as the
    reference strategy does (it said only that the verification answered nothing)."""
    snapshot = "<state_snapshot><overall_goal>fix the orders</overall_goal></state_snapshot>"
    with GeminiServer([reply(snapshot), answer([], "SAFETY")] * 4) as server:
        code = main(["compact", str(session), "--force", "--provider", "gemini", "--base-url", server.url,
                     "--json", "--strategy", "staged", "--target", "0.01"])
        report = json.loads(capsys.readouterr().out)
    assert code == 0 and report["status"] == "COMPRESSED"  # the draft stands, as Gemini CLI keeps it
    if report.get("verification_answered") is not False:
        pytest.fail(f"the case is not met: the staged run's summary stage never verified ({report.get('status')})")
    assert "finishReason SAFETY" in (report.get("verification_problem") or ""), report.get("verification_problem")


def test_a_comparison_where_every_strategy_failed_offers_nothing_to_apply(
        session: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """It said "apply one with: ... --apply" under two failures."""
    with GeminiServer([error(403, "PERMISSION_DENIED", "API key not valid")] * 8) as server:
        code = main(["compact", str(session), "--force", "--provider", "gemini", "--base-url", server.url,
                     "--compare"])
    out, err = capsys.readouterr()
    assert code == 1 and "HTTP 403" in out + err, out + err
    assert "apply one with" not in out
