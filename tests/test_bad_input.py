"""Bad input through the real command line: one clear line, exit 2, never a traceback."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

META = json.dumps({"sessionId": "s-1", "projectHash": "p" * 64})


def run(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "inspector", "analyze", *map(str, args)],
        capture_output=True, text=True, check=False, timeout=120,
    )


def assert_refused(path: Path, *words: str, line: int | None = None) -> str:
    done = run("--json", path)
    assert done.returncode == 2, done
    assert done.stdout == ""
    assert "Traceback" not in done.stderr
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr
    where = f"{path}:{line}:" if line is not None else f"{path}:"
    assert where in lines[0], lines[0]
    for word in words:
        assert word in lines[0], lines[0]
    return lines[0]


def test_broken_legacy_json(tmp_path: Path) -> None:
    path = tmp_path / "session-old.json"
    path.write_text('{\n  "sessionId": "s",\n  "messages": [\n    {"id": "a",\n')
    assert_refused(path, "broken JSON", line=5)


def test_truncated_last_jsonl_line_is_skipped_with_a_warning(tmp_path: Path) -> None:
    path = tmp_path / "session.jsonl"
    good = json.dumps({"id": "a", "type": "user", "content": "hello"})
    path.write_text(f"{META}\n{good}\n" + '{"id": "b", "type": "gemini", "content": "half a li')
    done = run("--json", path)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert [w["line"] for w in report["warnings"]] == [3]
    assert "incomplete last line" in report["warnings"][0]["message"]
    assert [t["record_id"] for t in report["history"]] == ["a"]
    text = run(path)  # the readable report warns on stderr, naming file and line
    assert text.returncode == 0
    assert f"{path}: line 3: incomplete last line" in text.stderr


def test_content_of_the_wrong_type(tmp_path: Path) -> None:
    path = tmp_path / "session.jsonl"
    path.write_text(f"{META}\n" + json.dumps({"id": "a", "type": "user", "content": 5}) + "\n")
    assert_refused(path, "content", "number", line=2)


def test_tool_call_result_of_the_wrong_type(tmp_path: Path) -> None:
    path = tmp_path / "session.jsonl"
    record = {"id": "m", "type": "gemini", "content": "", "toolCalls": [{"id": "c", "name": "t", "result": 7}]}
    path.write_text(f"{META}\n\n" + json.dumps(record) + "\n")
    assert_refused(path, "toolCalls[0].result", line=3)


def test_null_function_call_is_refused(tmp_path: Path) -> None:
    # Gemini CLI itself throws on this part while reading and drops the line.
    path = tmp_path / "session.jsonl"
    record = {"id": "a", "type": "user", "content": [{"functionCall": None}]}
    path.write_text(f"{META}\n" + json.dumps(record) + "\n")
    assert_refused(path, "functionCall", line=2)


def test_checkpoint_with_a_bad_turn(tmp_path: Path) -> None:
    path = tmp_path / "checkpoint-x.json"
    path.write_text(json.dumps({"history": [{"role": "user", "parts": [{"text": "hi"}]}, {"role": "robot"}]}))
    assert_refused(path, "history[1]", "role", line=1)


def _row_of(text: str, fragment: str) -> int:
    """The line (from 1) of the only row of ``text`` holding ``fragment``."""
    rows = [n for n, row in enumerate(text.splitlines(), 1) if fragment in row]
    assert len(rows) == 1, rows
    return rows[0]


def test_a_pretty_printed_file_names_the_line_of_the_bad_value(tmp_path: Path) -> None:
    """Legacy recordings and /chat save checkpoints are one indented document: the error names the
    line the wrong value is on, as a JSONL error names its line."""
    samples = Path(__file__).resolve().parents[1] / "sample_sessions"
    legacy = json.loads((samples / "legacy-pomodoro.json").read_text())
    legacy["messages"][3]["content"] = 5
    path = tmp_path / "session-legacy.json"
    text = json.dumps(legacy, indent=2)
    path.write_text(text)
    assert_refused(path, "messages[3]", "'content' must be text", "not a number", line=_row_of(text, '"content": 5'))

    saved = json.loads((samples / "gemini-cli-0.61-chat-save.json").read_text())
    saved["history"][2]["parts"] = 7
    path = tmp_path / "checkpoint-tag.json"
    text = json.dumps(saved, indent=2)
    path.write_text(text)
    assert_refused(path, "history[2]", "'parts' must be a list, not a number", line=_row_of(text, '"parts": 7'))

    for value, kind in (({}, "an object"), ("x", "text"), (None, "null"), (3, "a number")):
        path.write_text(json.dumps({"authType": "oauth-personal", "history": value}, indent=2))
        assert_refused(path, "'history' must be a list of turns", f"not {kind}", line=3)
        path.write_text(json.dumps({"sessionId": "s", "projectHash": "p", "messages": value}, indent=2))
        if value is not None:  # a null list of messages is an empty session, as Gemini CLI reads it
            assert_refused(path, "'messages' must be a list", f"not {kind}", line=4)


def test_a_value_deep_inside_a_record_is_named_by_its_own_line(tmp_path: Path) -> None:
    """A wrong value many lines into a pretty-printed message or turn: the error names the line of
    that value and spells its path inside the record."""
    record = {"id": "m-1", "type": "gemini", "content": "checking", "thoughts": [],
              "toolCalls": [{"id": "c-0", "name": "ls", "args": {"dir": "."}, "result": "ok"},
                            {"id": "c-1", "name": "read", "args": {"path": "a.py"},
                             "result": [{"functionResponse": {"id": "c-1", "name": "read",
                                                              "parts": [{"text": "x"}, {"text": 42}]}}]}],
              "tokens": {"input": 10, "output": 2}}
    path = tmp_path / "session-deep.json"
    text = json.dumps({"sessionId": "s", "projectHash": "p", "messages": [{"id": "u", "type": "user",
                                                                            "content": "hi"}, record]}, indent=2)
    path.write_text(text)
    assert_refused(path, "messages[1] (id 'm-1')", "toolCalls[1].result[0].functionResponse.parts[1].text",
                   "must be text, not a number", line=_row_of(text, '"text": 42'))

    record["toolCalls"][1]["result"] = "fine"
    record["tokens"]["output"] = "two"
    text = json.dumps({"sessionId": "s", "projectHash": "p", "messages": [record]}, indent=2)
    path.write_text(text)
    assert_refused(path, "tokens.output must be a number, not text", line=_row_of(text, '"output": "two"'))

    turn = {"role": "model", "parts": [{"text": "a"}, {"functionCall": {"name": "ls", "args": {}}},
                                       {"inlineData": "not an object"}]}
    path = tmp_path / "checkpoint-deep.json"
    for document in ([{"role": "user", "parts": [{"text": "hi"}]}, turn],
                     {"history": [{"role": "user", "parts": [{"text": "hi"}]}, turn]}):
        text = json.dumps(document, indent=2)
        path.write_text(text)
        assert_refused(path, "history[1]: parts[2].inlineData must be an object, not text",
                       line=_row_of(text, '"inlineData"'))


def test_empty_file(tmp_path: Path) -> None:
    path = tmp_path / "session.jsonl"
    path.write_bytes(b"")
    assert_refused(path, "empty")


def test_binary_file(tmp_path: Path) -> None:
    path = tmp_path / "session.jsonl"
    path.write_bytes(bytes(range(256)) * 40)
    assert_refused(path, "binary")


def test_fifty_megabytes_on_one_line(tmp_path: Path) -> None:
    path = tmp_path / "session.jsonl"
    path.write_bytes(b"x" * 50_000_000)
    assert_refused(path, "broken JSON", line=1)


def test_missing_file(tmp_path: Path) -> None:
    assert_refused(tmp_path / "nope.jsonl", "no such file")


def test_folder(tmp_path: Path) -> None:
    assert_refused(tmp_path, "folder")


def test_not_a_session(tmp_path: Path) -> None:
    path = tmp_path / "package.json"
    path.write_text('{"name": "x", "version": "1.0.0"}\n')
    assert_refused(path, "not a Gemini CLI session")


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() == 0,
                    reason="running as root: file permissions do not stop root from reading")
def test_no_permission(tmp_path: Path) -> None:
    path = tmp_path / "session.jsonl"
    path.write_text(META + "\n")
    path.chmod(0)
    try:
        assert_refused(path, "permission denied")
    finally:
        path.chmod(0o600)
