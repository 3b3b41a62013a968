"""Lines Gemini CLI reads that Python's parsers find hard: a number of thousands of digits, a value
nested thousands of levels deep.  JavaScript reads both (the number as a double); neither may be
skipped as "not valid JSON" with Python's own words, and an apply may never drop a message Gemini
CLI would have resumed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from inspector.cli import main
from inspector.session import history, load

META = {"sessionId": "s-deep", "projectHash": "p", "startTime": "2026-01-01T00:00:00.000Z",
        "lastUpdated": "2026-01-01T00:00:09.000Z", "kind": "main"}


def _session(path: Path, call_args: str) -> list[str]:
    """Two prompts and two replies; the first reply calls a tool whose args are ``call_args`` (raw JSON)."""
    lines = [json.dumps(META)]
    for i in range(2):
        lines.append(json.dumps({"id": f"u{i}", "timestamp": "2026-01-01T00:00:01.000Z", "type": "user",
                                 "content": [{"text": f"step {i}: tidy the imports"}]}))
        reply = {"id": f"g{i}", "timestamp": "2026-01-01T00:00:02.000Z", "type": "gemini", "content": "done",
                 "model": "gemini-2.5-pro"}
        if i == 0:
            reply["toolCalls"] = [{"id": "c1", "name": "write_todos", "args": "ARGS", "status": "success",
                                   "result": [{"functionResponse": {"id": "c1", "name": "write_todos",
                                                                    "response": {"output": "ok"}}}]}]
        lines.append(json.dumps(reply).replace('"ARGS"', call_args))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return lines


def test_a_number_of_thousands_of_digits_is_read_as_javascript_reads_it(tmp_path: Path,
                                                                         capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "session.jsonl"
    _session(path, '{"count": ' + "7" * 5000 + "}")
    session = load(path)
    assert session.warnings == []
    turns = history(session)
    call = turns[1].content["parts"][-1]["functionCall"]
    assert call["args"]["count"] == float("inf")  # JSON.parse: Infinity
    assert main(["analyze", str(path)]) == 0
    out = capsys.readouterr()
    assert "int_max_str_digits" not in out.out + out.err


def test_a_line_nested_deeper_than_the_reader_follows_is_named_and_never_dropped_by_an_apply(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "session.jsonl"
    depth = 5000
    lines = _session(path, '{"tree": ' + "[" * depth + "]" * depth + "}")
    deep_line = next(n for n, line in enumerate(lines, 1) if '"tree"' in line)
    before = path.read_bytes()
    [warning] = load(path).warnings
    assert warning.line == deep_line and warning.gemini_reads
    assert main(["analyze", str(path)]) == 0
    assert "recursion" not in capsys.readouterr().out.lower()
    code = main(["compact", str(path), "--provider", "offline", "--force", "--apply"])
    err = capsys.readouterr().err.strip()
    assert code == 2, err
    assert err.splitlines() == [err] and f"line {deep_line}" in err and "Gemini CLI reads it" in err
    assert path.read_bytes() == before
    assert not (tmp_path / ".session-inspector").exists()  # a refusal leaves no trace
