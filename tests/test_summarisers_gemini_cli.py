"""``--provider gemini-cli``: the real Gemini CLI 0.61.0 from npm writes the snapshot, in its
``--fake-responses`` mode (no network), through a ``gemini`` on PATH that adds the flag.

Gemini CLI signs in here with an API key the wrapper alone knows (a Google sign-in checks its
tokens over the network), in a temporary home (``GEMINI_CLI_HOME``): the product runs it as it
runs the user's, with nothing for tests in it."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
from pathlib import Path

import pytest

from inspector.cli import main
from inspector.compaction.prompts import COMPRESSION_SYSTEM_PROMPT, VERIFY_REQUEST
from inspector.compaction.summarisers import choose_provider
from inspector.compaction.summarisers.base import EmptyAnswer, SummariserError
from inspector.compaction.summarisers.gemini_cli import (
    MAX_STDIN_BYTES,
    GeminiCliSummariser,
    parse_answer,
    render_input,
)
from tests.reference.gemini_cli import gemini_cli, wrapper_on_path
from tests.reference.install import Missing

REPO = Path(__file__).resolve().parents[1]
SAMPLE = REPO / "sample_sessions" / "gemini-cli-0.61-compress.jsonl"
DRAFT = "<state_snapshot>\n<overall_goal>the draft's goal</overall_goal>\n</state_snapshot>"
FINAL = "<state_snapshot>\n<overall_goal>the checked goal</overall_goal>\n</state_snapshot>"
API_KEY_SETTINGS = {"security": {"auth": {"selectedType": "gemini-api-key"}}}
GOOGLE_SETTINGS = {"security": {"auth": {"selectedType": "oauth-personal"}}}


@pytest.fixture(scope="module")
def gemini() -> Path:
    found = gemini_cli()
    if isinstance(found, Missing):
        pytest.skip(found.reason)
    return found


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A user's home for Gemini CLI (settings naming an API key), and no key in this process."""
    folder = tmp_path / "home"
    (folder / ".gemini").mkdir(parents=True)
    (folder / ".gemini" / "settings.json").write_text(json.dumps(API_KEY_SETTINGS), encoding="utf-8")
    monkeypatch.setenv("GEMINI_CLI_HOME", str(folder))
    for name in ("GEMINI_API_KEY", "GOOGLE_API_KEY", "GOOGLE_GENAI_USE_VERTEXAI", "GOOGLE_CLOUD_PROJECT",
                 "GOOGLE_GENAI_USE_GCA"):
        monkeypatch.delenv(name, raising=False)
    return folder


@pytest.fixture
def session(tmp_path: Path) -> Path:
    copy = tmp_path / "project" / "chats" / SAMPLE.name
    copy.parent.mkdir(parents=True)
    shutil.copyfile(SAMPLE, copy)
    return copy


def on_path(monkeypatch: pytest.MonkeyPatch, folder: Path) -> None:
    """PATH holds ``folder`` and the system's own programs (node, bash), nothing else named gemini."""
    node = shutil.which("node")
    assert node is not None
    monkeypatch.setenv("PATH", os.pathsep.join([str(folder), os.path.dirname(node), "/usr/bin", "/bin"]))


def wrapper(tmp_path: Path, gemini: Path, *answers: list[str], env: dict[str, str] | None = None) -> Path:
    return wrapper_on_path(tmp_path / "bin", gemini, answers, {"GEMINI_API_KEY": "wrapper-only-key", **(env or {})})


def failing_wrapper(tmp_path: Path, gemini: Path) -> Path:
    """A wrapper whose Gemini CLI has no answer to give: it fails and writes the whole request it built
    into its error report, kept in the wrapper's folder (its own TMPDIR)."""
    reports = tmp_path / "bin" / "reports"
    reports.mkdir(parents=True)
    return wrapper(tmp_path, gemini, [], env={"TMPDIR": str(reports)})


def request_sent(script: Path) -> dict:
    """The request Gemini CLI built, from its error report (its stderr is cut when a message is long)."""
    for report in sorted((script.parent / "reports").glob("gemini-client-error-*.json")):
        message = json.loads(report.read_text(encoding="utf-8"))["error"]["message"]
        if "got request:" in message:
            return json.loads(message.split("got request:", 1)[1])
    raise AssertionError("no error report holds the request")


def recorded_sessions(home: Path) -> list[Path]:
    return sorted((home / ".gemini" / "tmp").glob("*/chats/**/*.json*"))


def compact(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict, str]:
    code = main(["compact", *args, "--json"])
    captured = capsys.readouterr()
    return code, json.loads(captured.out), captured.err


def test_compact_end_to_end_draft_then_verification_tokens_counted_no_session_left(
        tmp_path: Path, home: Path, session: Path, gemini: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    bin_dir = wrapper(tmp_path, gemini, [DRAFT], [FINAL]).parent
    on_path(monkeypatch, bin_dir)
    before = session.read_bytes()
    code, data, err = compact(capsys, str(session), "--provider", "gemini-cli", "--force")
    assert code == 0, err
    assert data["status"] == "COMPRESSED" and data["provider"] == "gemini-cli"
    assert data["draft_snapshot"] == DRAFT and data["snapshot"] == FINAL  # the verification's answer stands
    assert data["provider_choice"]["program"] == str(bin_dir / "gemini")
    # two runs, each counted as Gemini CLI reported it (1000 then 2000 prompt tokens, the answer's length)
    assert data["summariser_tokens"] == {"calls": 2, "prompt": 3000, "output": len(DRAFT) + len(FINAL),
                                         "thoughts": 0, "cached": 0, "total": 3000 + len(DRAFT) + len(FINAL)}
    assert (bin_dir / "calls").read_text().strip() == "2"
    # the second run is the verification: the draft, then the request to check it, on standard input
    second = (bin_dir / "stdin-2").read_text(encoding="utf-8")
    assert DRAFT.split("\n")[1] in second and second.rstrip().endswith(VERIFY_REQUEST)
    argv = (bin_dir / "argv-1").read_text().split("\n")
    assert argv[argv.index("--output-format") + 1] == "json" and "--session-id" in argv
    assert recorded_sessions(home) == [], "the runs' sessions are removed from the user's Gemini CLI history"
    assert session.read_bytes() == before


def test_the_request_holds_our_prompt_the_turns_and_no_tool(
        tmp_path: Path, home: Path, gemini: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """With no answer to give, Gemini CLI fails and says the request it built: the system prompt is
    ours alone, it declares no tool, the turns and the request are its user text.  The failure is one
    line, and the failed run's session is removed too."""
    script = failing_wrapper(tmp_path, gemini)
    on_path(monkeypatch, script.parent)
    summariser = GeminiCliSummariser("gemini-2.5-flash", program=str(script), timeout=60)
    contents = [{"role": "user", "parts": [{"text": "please rename get_user in api/users.py"}]},
                {"role": "model", "parts": [{"text": "Renamed it to fetch_user."}]},
                {"role": "user", "parts": [{"text": "Write a new <state_snapshot>."}]}]
    with pytest.raises(SummariserError) as raised:
        asyncio.run(summariser.summarise(COMPRESSION_SYSTEM_PROMPT, contents))
    assert "\n" not in str(raised.value) and str(raised.value).startswith("Gemini CLI answered with an error")
    request = request_sent(script)
    assert request["model"] == "gemini-2.5-flash"
    assert request["config"]["systemInstruction"] == COMPRESSION_SYSTEM_PROMPT.strip()
    assert request["config"]["tools"] == [{"functionDeclarations": []}]
    text = "\n".join(p["text"] for c in request["contents"] for p in c["parts"])
    assert '{"role":"user","parts":[{"text":"please rename get_user in api/users.py"}]}' in text
    assert text.rstrip().endswith("Write a new <state_snapshot>.")
    assert recorded_sessions(home) == [] and summariser.removed


def test_refused_without_gemini_on_path(tmp_path: Path, home: Path, session: Path,
                                        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    before = session.read_bytes()
    code = main(["compact", str(session), "--provider", "gemini-cli", "--force", "--json"])
    captured = capsys.readouterr()
    assert code == 2 and captured.out == ""
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and "no gemini was found on PATH" in lines[0]
    assert session.read_bytes() == before


def test_apply_writes_the_gemini_cli_snapshot(tmp_path: Path, home: Path, session: Path, gemini: Path,
                                              monkeypatch: pytest.MonkeyPatch,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    on_path(monkeypatch, wrapper(tmp_path, gemini, [DRAFT], [FINAL]).parent)
    code, data, err = compact(capsys, str(session), "--provider", "gemini-cli", "--force", "--apply")
    assert code == 0, err
    assert data["applied"]["written"] is True and Path(data["applied"]["backup_path"]).is_file()
    written = session.read_text(encoding="utf-8")
    assert "the checked goal" in written and "the draft's goal" not in written
    assert recorded_sessions(home) == []
    assert main(["revert", str(session)]) == 0
    assert "the checked goal" not in session.read_text(encoding="utf-8")


def test_auto_picks_a_gemini_cli_signed_in_with_google(tmp_path: Path, home: Path, session: Path, gemini: Path,
                                                       monkeypatch: pytest.MonkeyPatch,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    """No key, no Vertex AI settings, ``gemini`` on PATH and signed in with Google: ``auto`` runs it and
    says so on stderr, with what is sent where.  (The wrapper runs this Gemini CLI in a home of its own
    that signs in with a key: a Google sign-in would check its tokens over the network.)"""
    (home / ".gemini" / "settings.json").write_text(json.dumps(GOOGLE_SETTINGS), encoding="utf-8")
    (home / ".gemini" / "oauth_creds.json").write_text('{"refresh_token": "not-a-real-one"}', encoding="utf-8")
    child_home = tmp_path / "child-home"
    (child_home / ".gemini").mkdir(parents=True)
    (child_home / ".gemini" / "settings.json").write_text(json.dumps(API_KEY_SETTINGS), encoding="utf-8")
    script = wrapper(tmp_path, gemini, [DRAFT], [FINAL], env={"GEMINI_CLI_HOME": str(child_home)})
    on_path(monkeypatch, script.parent)
    code, data, err = compact(capsys, str(session), "--force")
    assert code == 0, err
    assert data["provider"] == "gemini-cli" and data["snapshot"] == FINAL
    said = err.strip().splitlines()
    assert len(said) == 1 and said[0].startswith("session-inspector: provider: Gemini CLI")
    assert "signed in with Google" in said[0]
    assert "sent to Gemini through" in said[0] and str(script) in said[0]
    assert (script.parent / "calls").read_text().strip() == "2"


def test_auto_choice_follows_the_sign_in_files(tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "gemini").write_text("#!/bin/sh\nexit 0\n", encoding="utf-8")
    (bin_dir / "gemini").chmod(0o755)
    cli_home = tmp_path / "home"
    (cli_home / ".gemini").mkdir(parents=True)
    env = {"PATH": str(bin_dir), "GEMINI_CLI_HOME": str(cli_home)}

    assert choose_provider("auto", env).provider == "offline"  # no settings
    (cli_home / ".gemini" / "settings.json").write_text(json.dumps(GOOGLE_SETTINGS), encoding="utf-8")
    lacking = choose_provider("auto", env)
    assert lacking.provider == "offline" and "oauth_creds.json" in lacking.reason  # no tokens yet
    (cli_home / ".gemini" / "oauth_creds.json").write_text("{}", encoding="utf-8")
    signed_in = choose_provider("auto", env)
    assert signed_in.provider == "gemini-cli" and signed_in.sends and signed_in.program == str(bin_dir / "gemini")
    assert choose_provider("auto", {**env, "GEMINI_API_KEY": "k"}).provider == "gemini"  # a key comes first
    assert choose_provider("auto", {**env, "PATH": str(tmp_path)}).provider == "offline"  # no gemini on PATH
    (cli_home / ".gemini" / "settings.json").write_text(json.dumps(API_KEY_SETTINGS), encoding="utf-8")
    assert choose_provider("auto", env).provider == "offline"  # signed in another way: not chosen by itself
    assert choose_provider("gemini-cli", env).provider == "gemini-cli"  # but runs when asked for
    missing = choose_provider("gemini-cli", {**env, "PATH": str(tmp_path)})
    assert missing.problem and "no gemini was found on PATH" in missing.problem


def program(tmp_path: Path, body: str) -> Path:
    script = tmp_path / "bin" / "gemini"
    script.parent.mkdir(parents=True, exist_ok=True)
    script.write_text("#!/bin/sh\n" + body, encoding="utf-8")
    script.chmod(0o755)
    return script


@pytest.mark.parametrize(("body", "words"), [
    ("cat > /dev/null; echo 'not json at all'\n", "printed no JSON answer (not json at all)"),
    ("cat > /dev/null; echo 'Please sign in' >&2; exit 41\n", "exit code 41: it is not signed in"),
    ("cat > /dev/null; printf '{\"session_id\": \"x\", \"error\": {\"type\": \"FatalAuthenticationError\", "
     "\"message\": \"Login required\\\\nmore\", \"code\": 41}}' >&2; exit 41\n",
     "(FatalAuthenticationError, exit code 41): Login required"),
    ("cat > /dev/null; echo 'Usage: gemini' >&2; echo 'Unknown arguments: skip-trust, skipTrust' >&2; exit 1\n",
     "does not know skip-trust, skipTrust: --provider gemini-cli needs Gemini CLI 0.61 or later"),
])
def test_a_failed_run_is_one_line(tmp_path: Path, body: str, words: str) -> None:
    summariser = GeminiCliSummariser("m", program=str(program(tmp_path, body)), run_folder=tmp_path / "run")
    with pytest.raises(SummariserError) as raised:
        asyncio.run(summariser.summarise("system", [{"role": "user", "parts": [{"text": "hi"}]}]))
    assert words in str(raised.value) and "\n" not in str(raised.value)


@pytest.mark.parametrize(("theirs", "seen"), [(None, "true"), ("", ""), ("0", "0")])
def test_gemini_cli_runs_without_relaunching_itself_unless_the_user_says(
        tmp_path: Path, theirs: str | None, seen: str) -> None:
    """One process, not a second one with a bigger heap (``GEMINI_CLI_NO_RELAUNCH``); the user's value stands."""
    answer = 'cat > /dev/null; printf \'{"session_id": "x", "response": "relaunch=%s", "stats": {}}\' ' \
             '"${GEMINI_CLI_NO_RELAUNCH-unset}"\n'
    env = {k: v for k, v in os.environ.items() if k != "GEMINI_CLI_NO_RELAUNCH"}
    if theirs is not None:
        env["GEMINI_CLI_NO_RELAUNCH"] = theirs
    summariser = GeminiCliSummariser("m", program=str(program(tmp_path, answer)), run_folder=tmp_path / "run",
                                     env=env)
    text = asyncio.run(summariser.summarise("system", [{"role": "user", "parts": [{"text": "hi"}]}]))
    assert text == f"relaunch={seen}"


def test_a_run_past_the_timeout_is_stopped(tmp_path: Path) -> None:
    marker = tmp_path / "still-running"
    script = program(tmp_path, f"sleep 30; touch {marker}\n")
    summariser = GeminiCliSummariser("m", program=str(script), timeout=0.5, run_folder=tmp_path / "run")
    with pytest.raises(SummariserError) as raised:
        asyncio.run(summariser.summarise("system", [{"role": "user", "parts": [{"text": "hi"}]}]))
    assert raised.value.kind == "timeout" and "within 0.5 s" in str(raised.value)
    assert not marker.exists()


def test_a_history_past_8_mib_is_refused_unsent(tmp_path: Path) -> None:
    calls = tmp_path / "calls"
    script = program(tmp_path, f"touch {calls}\n")
    summariser = GeminiCliSummariser("m", program=str(script), run_folder=tmp_path / "run")
    big = [{"role": "user", "parts": [{"text": "x" * (MAX_STDIN_BYTES + 1)}]},
           {"role": "user", "parts": [{"text": "Write a new <state_snapshot>."}]}]
    with pytest.raises(SummariserError) as raised:
        asyncio.run(summariser.summarise("system", big))
    assert raised.value.kind == "too_big" and "at most 8 MiB" in str(raised.value) and not calls.exists()


def test_render_input_sends_text_not_signatures_or_attachments() -> None:
    rendered = render_input([
        {"role": "model", "parts": [{"text": "thinking done", "thoughtSignature": "c2lnbmF0dXJl"}]},
        {"role": "user", "parts": [{"inlineData": {"mimeType": "image/png", "data": "A" * 40}}]},
        {"role": "user", "parts": [{"text": "Write it."}, {"text": "Focus on tests."}]},
    ])
    assert "thoughtSignature" not in rendered and "A" * 40 not in rendered and "40 base64 characters" in rendered
    assert rendered.endswith("</conversation>\n\nWrite it.\n\nFocus on tests.\n")


def test_parse_answer_counts_every_model_and_refuses_an_empty_answer() -> None:
    answer = {"session_id": "s", "response": "text", "stats": {"models": {
        "a": {"tokens": {"prompt": 10, "candidates": 2, "total": 15, "cached": 4, "thoughts": 3}},
        "b": {"tokens": {"prompt": 1, "candidates": 1, "total": 2}}}}}
    text, usage, session_id = parse_answer(0, json.dumps(answer).encode(), b"")
    assert (text, session_id) == ("text", "s")
    assert usage is not None and usage.to_json() == {"calls": 1, "prompt": 11, "output": 3, "thoughts": 3,
                                                     "cached": 4, "total": 17}
    with pytest.raises(EmptyAnswer):
        parse_answer(0, json.dumps({**answer, "response": "  "}).encode(), b"")


async def test_the_app_runs_gemini_cli_when_chosen_with_p(tmp_path: Path, home: Path, session: Path, gemini: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """P in the app reaches gemini-cli (offline -> gemini -> gemini-cli); c then runs it: the snapshot shown
    is its verified answer, and its sessions are gone."""
    from inspector.tui.app import InspectorApp
    from inspector.tui.screens.snapshot import SnapshotScreen
    from inspector.tui.session.screen import SessionScreen
    from tests.snapshot_app import screen_after
    from tests.test_tui_compaction import settle

    script = wrapper(tmp_path, gemini, [DRAFT], [FINAL])
    on_path(monkeypatch, script.parent)
    app = InspectorApp(session, threshold=0.5, live=False, provider="offline")
    async with app.run_test(size=(160, 45)) as pilot:
        await settle(pilot)
        await pilot.press("P", "P")
        assert app.request.provider == "gemini-cli"
        view = app.screen
        assert isinstance(view, SessionScreen)
        assert "Gemini CLI" in view.status.get("provider") and "the turns are sent" in view.status.get("provider")
        screen = await screen_after(pilot, "c", SnapshotScreen)
        assert screen.preview.result.provider == "gemini-cli" and screen.preview.result.snapshot == FINAL
    assert (script.parent / "calls").read_text().strip() == "2"
    assert recorded_sessions(home) == []


def test_a_lone_surrogate_is_sent_as_its_json_escape_in_valid_utf8(tmp_path: Path) -> None:
    """Session files may hold a lone surrogate (``\\ud800`` in their JSON); what is piped stays valid UTF-8,
    the one character written as its escape, the rest as it is."""
    sent = tmp_path / "sent"
    answer = json.dumps({"session_id": "s", "response": "<state_snapshot>x</state_snapshot>"})
    script = program(tmp_path, f"cat > {sent}; echo '{answer}'\n")
    summariser = GeminiCliSummariser("m", program=str(script), run_folder=tmp_path / "run")
    text = asyncio.run(summariser.summarise("system", [{"role": "user", "parts": [{"text": "odd \ud800 é"}]},
                                                       {"role": "user", "parts": [{"text": "Write it."}]}]))
    assert text == "<state_snapshot>x</state_snapshot>"
    piped = sent.read_bytes().decode("utf-8")  # strict: raises on a byte that is not UTF-8
    assert '"odd \\ud800 é"' in piped and piped.endswith("Write it.\n")


def test_a_history_past_the_pipe_buffer_reaches_the_model_whole(
        tmp_path: Path, home: Path, gemini: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Gemini CLI reads piped input only when it starts within 500 ms, in chunks: 2 MiB of turns (32 pipe
    buffers) reach its request whole, the last turn's words included."""
    script = failing_wrapper(tmp_path, gemini)
    on_path(monkeypatch, script.parent)
    turns = [{"role": "user" if i % 2 == 0 else "model", "parts": [{"text": f"turn {i} " + "é" * 22_000}]}
             for i in range(50)]
    turns.append({"role": "user", "parts": [{"text": "Write a new <state_snapshot> now."}]})
    summariser = GeminiCliSummariser("gemini-2.5-flash", program=str(script), timeout=120)
    with pytest.raises(SummariserError):
        asyncio.run(summariser.summarise("system", turns))
    request = request_sent(script)
    texts = [p["text"] for c in request["contents"] for p in c["parts"]]
    assert texts[-1] == render_input(turns)  # after Gemini CLI's own <session_context>
    assert len(render_input(turns).encode()) > 2 * 2**20
    assert recorded_sessions(home) == []


def test_gemini_cli_option_names_the_program_and_only_where_it_runs(
        tmp_path: Path, home: Path, session: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    from inspector.compaction.request import CompactionRequest, RequestError

    monkeypatch.setenv("PATH", os.pathsep.join(["/usr/bin", "/bin"]))  # no gemini on it
    answer = json.dumps({"session_id": "s", "response": FINAL.replace("\n", " ")})
    given = program(tmp_path, f"cat > /dev/null; echo '{answer}'\n")
    code, data, err = compact(capsys, str(session), "--provider", "gemini-cli", "--gemini-cli", str(given), "--force")
    assert code == 0, err
    assert data["provider_choice"]["program"] == str(given) and "the checked goal" in data["snapshot"]
    with pytest.raises(RequestError, match="--gemini-cli names the Gemini CLI to run"):
        CompactionRequest(provider="offline", gemini_cli=str(given))
    monkeypatch.chdir(given.parent)  # a relative path is taken from here, not from the folder it runs in
    code, data, err = compact(capsys, str(session), "--provider", "gemini-cli", "--gemini-cli", "./gemini", "--force")
    assert code == 0 and data["provider_choice"]["program"] == str(given), err
    assert main(["compact", str(session), "--provider", "gemini-cli", "--gemini-cli", str(tmp_path / "none")]) == 2
    assert "is not a program that can run" in capsys.readouterr().err
