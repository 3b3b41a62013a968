"""A tool response keeps no copy of the key of the call it answers: one object for both."""

from __future__ import annotations

import json
from pathlib import Path

from inspector.session import load


def _session(tmp_path: Path) -> Path:
    calls = [{"id": f"read_file_{k}", "name": "read_file", "args": {"file_path": f"src/m{k}.py"}, "status": "success",
              "result": [{"functionResponse": {"id": f"read_file_{k}", "name": "read_file",
                                               "response": {"output": f"line {k}\n" * 3}}}]} for k in range(3)]
    calls.append({"id": "grep_9", "name": "grep", "args": {}, "status": "success", "result": "plain text result"})
    calls.append({"id": "other_1", "name": "glob", "args": {}, "status": "success",  # answered under another id
                  "result": [{"functionResponse": {"id": "elsewhere", "name": "glob", "response": {"output": "x"}}}]})
    lines = [
        {"sessionId": "s-1", "projectHash": "p" * 64, "startTime": "2026-11-28T00:00:00.000Z", "kind": "main"},
        {"id": "u1", "timestamp": "2026-11-28T00:00:00.000Z", "type": "user", "content": [{"text": "read them"}]},
        {"id": "m1", "timestamp": "2026-11-28T00:00:01.000Z", "type": "gemini", "content": "", "toolCalls": calls},
    ]
    path = tmp_path / "session.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def test_a_response_shares_its_calls_key_and_id(tmp_path: Path) -> None:
    index = load(_session(tmp_path)).turn_index
    assert index is not None
    model, result = 1, 2
    assert index.roles[model:] == ["model", "user"] and index.is_tool_result[result]
    calls, answers, outputs = index.calls[model], index.answers[result], index.outputs[result]
    assert answers == (*calls[:4], ("elsewhere", "glob"))
    for k in range(4):  # the same objects, not equal copies
        assert answers[k] is calls[k]
        assert outputs[k][4] is calls[k][0]  # the output's call id: the key's text
    assert outputs[4][4] == "elsewhere"
