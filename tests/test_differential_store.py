"""An applied file resumes in Gemini CLI: its own loader gives exactly the new history.

Gemini CLI's code (loadConversationRecord + convertSessionToClientHistory for
recordings, Logger.loadCheckpoint's reading for /chat save files) runs in the
shared Node process (tests/reference); the project's loader must agree too.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from inspector.analysis import analyze
from inspector.compaction.budget import apply_budget
from inspector.jsjson import js_stringify
from inspector.session import history, load
from inspector.store import apply_history, revert
from tests.reference.compare import compare_file
from tests.test_store import PATHS, compacted, copy_session

pytestmark = pytest.mark.differential


def reference_history(reference, path: Path) -> list[str]:  # type: ignore[no-untyped-def]
    answer = reference.call("load", path=str(path))
    assert answer["kind"] is not None, f"{path}: Gemini CLI cannot load the applied file"
    return answer["history"]


@pytest.mark.parametrize("source", PATHS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_applied_file_resumes_in_gemini_cli(source: Path, tmp_path: Path, reference) -> None:  # type: ignore[no-untyped-def]
    path = copy_session(source, tmp_path)
    original = path.read_bytes()
    session = load(path)
    turns = history(session)
    new, sources = compacted(turns, analyze(session).split_point)
    apply_history(session, turns, new, sources)

    assert reference_history(reference, path) == [js_stringify(c) for c in new]
    compare_file(reference, path)  # the project's loader agrees with the reference on the whole file

    if session.format == "jsonl":
        # Gemini CLI goes on recording after the apply: its lines land after the checkpoint.
        later = [
            {"id": "after-1", "timestamp": "2026-11-22T06:00:00.000Z", "type": "user",
             "content": [{"text": "and now?"}]},
            {"$set": {"lastUpdated": "2026-11-22T06:00:00.000Z"}},
            {"id": "after-2", "timestamp": "2026-11-22T06:00:01.000Z", "type": "gemini",
             "content": "Carrying on.", "model": "gemini-2.5-pro"},
        ]
        with path.open("a", encoding="utf-8") as gemini:
            gemini.writelines(json.dumps(r) + "\n" for r in later)
        expected = [*new, {"role": "user", "parts": [{"text": "and now?"}]},
                    {"role": "model", "parts": [{"text": "Carrying on."}]}]
        assert reference_history(reference, path) == [js_stringify(c) for c in expected]
        compare_file(reference, path)
        revert(path)
        assert path.read_bytes().startswith(original)
        assert reference_history(reference, path)[-2:] == [js_stringify(c) for c in expected[-2:]]


def test_rewritten_tool_results_resume_in_gemini_cli(tmp_path: Path, reference) -> None:  # type: ignore[no-untyped-def]
    """Kept records whose tool output the budget cut read back, in Gemini CLI, as the cut history."""
    path = tmp_path / "session-2026-01-01T00-00-abcd1234.jsonl"
    big = "x" * 30_000 + "\nend\n"
    calls = [
        {"id": "c1", "name": "read_file", "args": {"p": "a"}, "result": big, "status": "success"},
        {"id": "c2", "name": "run_shell_command", "args": {"c": "ls"}, "status": "success",
         "result": [{"functionResponse": {"id": "c2", "name": "run_shell_command", "response": {"output": big}}}]},
    ]
    records = [
        {"sessionId": "s1", "projectHash": "p1", "startTime": "t", "lastUpdated": "t", "kind": "main"},
        {"id": "u1", "timestamp": "t", "type": "user", "content": [{"text": "first"}]},
        {"id": "g1", "timestamp": "t", "type": "gemini", "content": "ok", "model": "m"},
        {"id": "u2", "timestamp": "t", "type": "user", "content": [{"text": "look"}]},
        {"id": "g2", "timestamp": "t", "type": "gemini", "content": "", "toolCalls": calls, "model": "m",
         "tokens": {"input": 5, "output": 1, "cached": 0, "total": 6}},
        {"id": "g3", "timestamp": "t", "type": "gemini", "content": "seen", "model": "m"},
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    session = load(path)
    turns = history(session)
    cut, truncations = apply_budget(
        [t.content for t in turns], lambda tool, seq: str(tmp_path / f"{tool}_{seq}.txt"), 2_000, 100
    )
    assert len(truncations) == 2
    new = [{"role": "user", "parts": [{"text": "<state_snapshot/>"}]}, {"role": "model", "parts": [{"text": "ok"}]},
           *cut[2:]]
    entry = apply_history(session, turns, new, [None, None, *turns[2:]], truncations=truncations)
    assert entry.records_adapted == 1
    assert reference_history(reference, path) == [js_stringify(c) for c in new]
    for item in truncations:
        assert Path(item.output_file).read_text() == big
