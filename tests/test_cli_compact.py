"""``session-inspector compact`` and ``diff`` end to end (exit codes, JSON, no secrets, nothing written)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from inspector.cli import main
from tests.gemini_server import GeminiServer, error, reply

REPO = Path(__file__).resolve().parents[1]
SAMPLE = REPO / "sample_sessions" / "gemini-cli-0.61-compress.jsonl"
KEY = "AIzaCLI-secret-9876543210"
SNAP = "<state_snapshot><overall_goal>demo</overall_goal></state_snapshot>"


@pytest.fixture
def session(tmp_path: Path) -> Path:
    if not SAMPLE.exists():
        pytest.skip("sample session missing")
    copy = tmp_path / "chats" / SAMPLE.name
    copy.parent.mkdir()
    shutil.copyfile(SAMPLE, copy)
    return copy


@pytest.fixture(autouse=True)
def no_credentials(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("GEMINI_API_KEY", "GOOGLE_API_KEY", "GOOGLE_GENAI_USE_VERTEXAI", "GOOGLE_CLOUD_PROJECT"):
        monkeypatch.delenv(name, raising=False)


def run_json(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict]:
    code = main(["compact", *args, "--json"])
    out = capsys.readouterr().out
    return code, json.loads(out)


def test_offline_by_default_writes_nothing(session: Path, capsys: pytest.CaptureFixture[str]) -> None:
    before = session.read_bytes()
    code, data = run_json(capsys, str(session), "--force")
    assert code == 0 and data["status"] == "COMPRESSED" and data["provider"] == "offline"
    for key in ("original_token_count", "new_token_count", "recorded_prompt_tokens", "split_point", "model",
                "draft_snapshot", "snapshot", "new_history", "lost_facts", "fact_recall"):
        assert key in data
    assert data["new_history"][0]["parts"][0]["text"] == data["snapshot"]
    assert data["draft_final_diff"]["sections"]
    assert session.read_bytes() == before
    assert sorted(p.name for p in session.parent.parent.rglob("*")) == ["chats", session.name]


def test_apply_with_json_reports_what_it_wrote_in_the_same_object(
        session: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``compact --apply --json`` is one JSON object on stdout: the compaction and, after the write,
    what was written (the journal entry, the backup, how to undo); nothing else on either stream."""
    before = session.read_bytes()
    code = main(["compact", str(session), "--force", "--apply", "--json"])
    captured = capsys.readouterr()
    assert code == 0 and not captured.err
    data = json.loads(captured.out)
    applied = data["applied"]
    assert applied["written"] is True and applied["state"] == "applied"
    assert main(["history", str(session), "--json"]) == 0
    [entry] = json.loads(capsys.readouterr().out)["entries"]
    assert applied["id"] == entry["id"] and applied["sha256_after"] == entry["sha256_after"]
    assert applied["info"]["tokens_after"] == data["new_token_count"]
    assert Path(applied["backup_path"]).read_bytes() == before
    assert main(applied["undo"][1:]) == 0 and session.read_bytes() == before


def test_a_verification_that_answers_nothing_is_not_shown_as_a_confirmed_draft(
        session: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """Gemini CLI keeps the draft when the verification call gives no text.  An empty draft -> final
    diff would read as a draft the second call checked and found complete; it is said instead."""
    monkeypatch.setenv("GEMINI_API_KEY", KEY)
    with GeminiServer([reply(SNAP), reply("  \n")]) as server:
        code, data = run_json(capsys, str(session), "--force", "--provider", "gemini", "--base-url", server.url)
    assert code == 0 and data["snapshot"] == SNAP and data["verification_answered"] is False
    with GeminiServer([reply(SNAP), reply("  \n")]) as server:
        assert main(["compact", str(session), "--force", "--provider", "gemini", "--base-url", server.url]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "the verification call answered nothing, so the draft stands as the snapshot" in out
    assert "draft -> final: +0" not in out
    with GeminiServer([reply(SNAP), reply(SNAP)]) as server:  # one that answers the same: a real, empty diff
        code, data = run_json(capsys, str(session), "--force", "--provider", "gemini", "--base-url", server.url)
    assert data["verification_answered"] is True


def test_noop_exits_zero(session: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, data = run_json(capsys, str(session))
    assert code == 0 and data["status"] == "NOOP" and data["new_history"] is None


def test_readable_report(session: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["compact", str(session), "--force", "--instruction", "the TODO list"]) == 0
    out = capsys.readouterr().out
    assert "status: COMPRESSED" in out and "fact recall:" in out and "draft -> final" in out
    assert "nothing was written" in out


def test_gemini_failure_exits_one_without_the_key(session: Path, capsys: pytest.CaptureFixture[str],
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GEMINI_API_KEY", KEY)
    with GeminiServer([error(403, "PERMISSION_DENIED", f"key {KEY} was revoked")]) as server:
        code = main(["compact", str(session), "--force", "--base-url", server.url, "--json"])
    captured = capsys.readouterr()
    assert code == 1
    data = json.loads(captured.out)
    assert data["status"] == "COMPRESSION_FAILED_SUMMARISER_ERROR" and data["provider"] == "gemini"
    assert "403" in data["message"]
    assert KEY not in captured.out + captured.err


def test_gemini_success_through_base_url(session: Path, capsys: pytest.CaptureFixture[str],
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GEMINI_API_KEY", KEY)
    with GeminiServer([reply(SNAP), reply(SNAP)]) as server:
        code, data = run_json(capsys, str(session), "--force", "--provider", "gemini", "--base-url", server.url,
                              "--model", "gemini-2.5-pro")
    assert code == 0 and data["snapshot"] == SNAP and data["model"] == "gemini-2.5-pro"
    assert server.requests[0]["model"] == "gemini-2.5-pro"


def test_bad_input_exits_two(session: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["compact", str(session), "--force", "--split", "40"]) == 2
    err = capsys.readouterr().err
    assert "split 40 is not a valid split point" in err and len(err.strip().splitlines()) == 1
    missing = tmp_path / "nope.md"
    assert main(["compact", str(session), "--prompt-file", str(missing)]) == 2
    assert f"{missing}: no such prompt file" in capsys.readouterr().err
    assert main(["compact", str(session), "--prompt-file", str(tmp_path)]) == 2
    assert f"{tmp_path}: is a folder, not a prompt file" in capsys.readouterr().err
    assert main(["compact", str(tmp_path / "absent.jsonl")]) == 2


def test_prompt_file_becomes_the_system_prompt(session: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    prompt = tmp_path / "mine.md"
    prompt.write_text("Summarise tersely as <state_snapshot>.", encoding="utf-8")
    monkeypatch.setenv("GEMINI_API_KEY", KEY)
    with GeminiServer([reply(SNAP), reply(SNAP)]) as server:
        code, _ = run_json(capsys, str(session), "--force", "--base-url", server.url, "--prompt-file", str(prompt))
    assert code == 0
    assert server.bodies()[0]["systemInstruction"]["parts"][0]["text"] == prompt.read_text()


def test_diff_command(tmp_path: Path, session: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a = tmp_path / "a.txt"
    b = tmp_path / "b.txt"
    a.write_text("scratch\n<state_snapshot><overall_goal>one</overall_goal></state_snapshot>", encoding="utf-8")
    b.write_text("<state_snapshot><overall_goal>two</overall_goal><task_state>- [x]</task_state></state_snapshot>",
                 encoding="utf-8")
    assert main(["diff", str(a), str(b), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    sections = {s["name"]: s for s in data["sections"]}
    assert sections["overall_goal"]["added"] == ["two"] and sections["overall_goal"]["removed"] == ["one"]
    assert sections["task_state"]["status"] == "added"
    # a session file: its snapshot is found in the history
    assert main(["diff", str(session), str(b)]) == 0
    out = capsys.readouterr().out
    assert "<overall_goal>" in out and "- " in out
    empty = tmp_path / "empty.txt"
    empty.write_text("no snapshot here", encoding="utf-8")
    assert main(["diff", str(empty), str(b)]) == 2
    assert "no <state_snapshot> found" in capsys.readouterr().err


def test_what_did_not_fit_in_15_percent_is_said(session: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, data = run_json(capsys, str(session), "--force")
    assert code == 0 and data["status"] == "COMPRESSED"
    facts, provenance = data["facts"], data["provenance"]
    # 15%, grown where that cannot hold the goal, rules and earlier snapshot, never to what it replaces
    assert facts["snapshot_tokens"] <= provenance["budget_tokens"] + 1 < facts["replaced_tokens"]
    assert provenance["omitted"]
    assert data["lost_facts"]  # the independent check shows what went
    assert main(["compact", str(session), "--force"]) == 0
    out = capsys.readouterr().out
    assert "left out to keep the snapshot within" in " ".join(out.split())


@pytest.mark.parametrize(("answered", "want"), [
    (False, "split 0 (reference): summarised no turns, kept turn 0"),
    (True, "split 2 (reference): summarised turns 0-1, kept no turns"),
], ids=["nothing before the split", "nothing after it"])
def test_a_split_at_either_end_reads_plainly(tmp_path: Path, capsys: pytest.CaptureFixture[str], answered: bool,
                                             want: str) -> None:
    """One prompt, answered or not, forced: Gemini CLI splits before every turn or after the last,
    and the split line says so in words, never as a range such as "turns 0--1" or a turn that is
    not there; the threshold line says "1 token", not "1 tokens"."""
    lines = [{"sessionId": "s-1", "projectHash": "p", "startTime": "2026-11-24T09:00:00.000Z",
              "lastUpdated": "2026-11-24T09:00:00.000Z", "kind": "main"},
             {"id": "u0", "timestamp": "2026-11-24T09:00:00.000Z", "type": "user", "content": [{"text": "tell"}]}]
    if answered:
        lines.append({"id": "g0", "timestamp": "2026-11-24T09:00:01.000Z", "type": "gemini", "content": "ok"})
    path = tmp_path / "chats" / "session-2026-11-24T09-00-s1.jsonl"
    path.parent.mkdir()
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    code, data = run_json(capsys, str(path), "--force")
    assert code in (0, 1) and data["split_point"] == (2 if answered else 0)
    assert main(["compact", str(path), "--force"]) == code
    out = capsys.readouterr().out
    assert want in out and "0--" not in out
    assert main(["compact", str(path)]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert f"{data['original_token_count']} token{'' if data['original_token_count'] == 1 else 's'} (the estimate)" \
        in out and "1 tokens" not in out


def test_apply_of_a_result_that_is_not_compressed_says_nothing_was_written(
        session: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Below the threshold ``compact --apply`` gives NOOP: one line on stderr says the file was
    left alone (as every other refusal says it), and the file is byte for byte as it was."""
    before = session.read_bytes()
    assert main(["compact", str(session), "--apply", "--threshold", "0.99"]) == 0
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"session-inspector: {session}: nothing was written: "
                   "the compaction ended NOOP, so there is nothing to apply"]
    assert session.read_bytes() == before


def test_staged_does_not_claim_to_keep_turns_its_stages_dropped(capsys: pytest.CaptureFixture[str]) -> None:
    """The staged strategy's first stage drops repeated tool results after its split too: its report
    names what it summarised, and leaves what became of the later turns to its stage table."""
    sample = Path(__file__).resolve().parents[1] / "sample_sessions" / "coding-task.jsonl"
    assert main(["compact", str(sample), "--strategy", "staged", "--provider", "offline", "--force", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    split = result["split_point"]
    later = len(result["new_history"]) - 2  # after the snapshot and its acknowledgement
    total = len(json.loads(_analyze(sample, capsys))["history"])
    assert later < total - split  # the case: a stage dropped some of the turns after the split
    assert main(["compact", str(sample), "--strategy", "staged", "--provider", "offline", "--force"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert f"split {split} (staged): summarised turns 0-{split - 1}, later turns as the stages left them" in text
    assert "kept turns" not in text


def _analyze(path: Path, capsys: pytest.CaptureFixture[str]) -> str:
    assert main(["analyze", "--json", str(path)]) == 0
    return capsys.readouterr().out


@pytest.mark.parametrize(("answer", "problem"), [
    ("I'm sorry, but I can't help with summarising this conversation.", "holds no <state_snapshot>"),
    (SNAP + "\n\nFINAL:\n" + SNAP, "holds 2 <state_snapshot>s"),
    ("<state_snapshot>\n<overall_goal>\nFix the parser and", "is never closed"),
])
def test_an_answer_that_is_no_single_snapshot_is_never_applied(
        session: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
        answer: str, problem: str) -> None:
    """The model's answer becomes the agent's memory.  One that is no snapshot (a refusal), two of them,
    or one cut off is shown, said not appliable, and never written; one that quotes the tag inside a
    line (the session talked about snapshots) is a snapshot like any other."""
    monkeypatch.setenv("GEMINI_API_KEY", KEY)
    before = session.read_bytes()
    with GeminiServer([reply(answer), reply(answer)]) as server:
        code, data = run_json(capsys, str(session), "--force", "--provider", "gemini", "--base-url", server.url)
    assert data["status"] == "COMPRESSED" and problem in data["snapshot_problem"] and code == 1
    with GeminiServer([reply(answer), reply(answer)]) as server:
        code = main(["compact", str(session), "--force", "--provider", "gemini", "--base-url", server.url, "--apply"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 1 and len(err) == 1, err
    assert err[0].startswith(f"session-inspector: {session}: nothing was written: the summary") and problem in err[0]
    assert session.read_bytes() == before
    with GeminiServer([reply(answer), reply(answer)]) as server:  # a script reads the refusal from the JSON too
        code, data = run_json(capsys, str(session), "--force", "--provider", "gemini", "--base-url", server.url,
                              "--apply")
    assert code == 1 and data["applied"]["written"] is False and problem in data["applied"]["refusal"]
    assert session.read_bytes() == before
    quoted = SNAP.replace("</state_snapshot>", "- the tool writes `<state_snapshot>` tags\n</state_snapshot>")
    with GeminiServer([reply(quoted), reply(quoted)]) as server:
        code, data = run_json(capsys, str(session), "--force", "--provider", "gemini", "--base-url", server.url)
    assert code == 0 and data["snapshot_problem"] is None
