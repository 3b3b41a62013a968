"""A turn's calls, responses' keys, outputs, responses and spread are kept as bytes, not objects: the
key a response shares with its call, its id text, and the rest are made again when a turn is read."""

from __future__ import annotations

import gc
import json
from pathlib import Path
from typing import Any

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


def test_a_response_reads_its_calls_key_and_id(tmp_path: Path) -> None:
    index = load(_session(tmp_path)).turn_index
    assert index is not None
    model, result = 1, 2
    assert index.roles[model:] == ["model", "user"] and index.is_tool_result[result]
    calls, answers, outputs = index.calls[model], index.answers[result], index.outputs[result]
    assert calls == (*((f"read_file_{k}", "read_file") for k in range(3)), ("grep_9", "grep"), ("other_1", "glob"))
    assert answers == (*calls[:4], ("elsewhere", "glob"))
    assert [output[4] for output in outputs] == [key[0] for key in answers]
    assert index.calls[result] == () and index.answers[model] == ()


def _objects_under(column: Any) -> int:
    """How many Python objects ``column`` holds (itself included; classes are not counted or followed)."""
    seen: set[int] = set()
    stack = [column]
    while stack:
        found = stack.pop()
        if id(found) in seen or isinstance(found, type):
            continue
        seen.add(id(found))
        stack.extend(gc.get_referents(found))
    return len(seen)


def test_the_small_tuple_figures_hold_no_object_per_turn(tmp_path: Path) -> None:
    """2,000 turns of calls and results: each packed column holds a handful of objects (its chunks),
    where a column of tuples held a tuple per turn, one per call or output, and each id's text."""
    def call(ident: str) -> dict[str, Any]:
        return {"id": ident, "name": "read_file", "args": {"file_path": "src/m.py"}, "status": "success",
                "result": [{"functionResponse": {"id": ident, "name": "read_file", "response": {"output": "x\n"}}}]}

    lines = [{"sessionId": "s-1", "projectHash": "p" * 64, "startTime": "2026-11-28T00:00:00.000Z", "kind": "main"}]
    lines += [{"id": f"m{m}", "timestamp": "2026-11-28T00:00:01.000Z", "type": "gemini", "content": "",
               "toolCalls": [call(f"call_0_{m}"), call(f"call_1_{m}")]} for m in range(1_000)]
    path = tmp_path / "long.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    index = load(path).turn_index
    assert index is not None and len(index) == 2_000
    assert index.calls[0] == (("call_0_0", "read_file"), ("call_1_0", "read_file"))
    assert index.answers[-1] == (("call_0_999", "read_file"), ("call_1_999", "read_file"))
    for name in ("responses", "calls", "answers", "outputs", "spread"):
        held = _objects_under(getattr(index, name))
        assert held < 20, f"{name}: {held:,} objects for {len(index):,} turns"
