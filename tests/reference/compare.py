"""Compare the project's core with the reference on one file or one message list.

Every comparison is on exact text: each history turn is put through the
project's ``js_stringify`` and compared with the reference's own
``JSON.stringify`` output, so a float printed differently, a key out of order
or a lost field all show up.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from inspector.analysis import analyze, analyze_turns, project_temp_dir
from inspector.jsjson import js_json_len, js_stringify
from inspector.session import SessionError, Turn, load
from inspector.session.history import messages_to_turns
from inspector.tokens import estimate_contents, estimate_tokens
from tests.reference.client import RefServer


def assert_figures(turns: list[Any], figures: dict[str, Any], where: str) -> None:
    """Per-turn estimates and JSON lengths, the total and the split point."""
    result = analyze_turns(turns)
    contents = [t.content for t in turns]
    tokens = [result.turn_tokens(i) for i in range(len(turns))]
    assert tokens == [t["tokens"] for t in figures["turns"]], f"{where}: per-turn estimates"
    assert [estimate_tokens(c.get("parts") or []) for c in contents] == tokens, f"{where}: estimate_tokens"
    assert result.json_chars == [t["json_len"] for t in figures["turns"]], f"{where}: JSON lengths"
    assert [js_json_len(c) for c in contents] == result.json_chars, f"{where}: js_json_len"
    assert result.total_estimated_tokens == figures["total"], f"{where}: total estimate"
    assert estimate_contents(contents) == figures["total"], f"{where}: estimate_contents"
    assert result.split_point == figures["split"], f"{where}: split point"


def assert_history(turns: list[Any], answer: dict[str, Any], where: str) -> None:
    mine = [js_stringify(t.content) for t in turns]
    theirs = answer["history"]
    for i, (a, b) in enumerate(zip(mine, theirs, strict=False)):
        assert a == b, f"{where}: turn {i} differs\n  project:   {a[:500]}\n  reference: {b[:500]}"
    assert len(mine) == len(theirs), f"{where}: {len(mine)} turns, the reference has {len(theirs)}"
    assert [t.turn_id for t in turns] == answer["ids"], f"{where}: turn ids"


def compare_file(server: RefServer, path: Path, *, may_reject: bool = False) -> str:
    """Load ``path`` both ways and assert the same result.  Returns the outcome.

    The project refuses some files the reference reads leniently (wrong
    types); with ``may_reject`` that is accepted as long as the refusal is a
    clean SessionError.  Files the reference cannot load must be refused.
    """
    answer = server.call("load", path=str(path), measure=True)
    try:
        session = load(path)
    except SessionError as exc:
        assert str(path) in str(exc)
        if answer["kind"] is not None and not may_reject:
            raise AssertionError(f"{path}: the project refused a file the reference loads: {exc}") from None
        return "rejected"
    assert answer["kind"] is not None, f"{path}: the reference cannot load this file, the project read it"
    expected = "checkpoint" if answer["kind"] == "checkpoint" else ("jsonl", "json")
    assert session.format in expected, f"{path}: format {session.format}, reference {answer['kind']}"
    if answer["kind"] == "session":
        assert js_stringify(list(session.messages)) == answer["messages"], f"{path}: loaded messages differ"
    result = analyze(session)  # the loader's figures (computed while reading)
    turns = result.turns
    assert_history(turns, answer, str(path))
    figures = answer["figures"]
    assert [result.turn_tokens(i) for i in range(len(turns))] == [t["tokens"] for t in figures["turns"]], path
    assert result.json_chars == [t["json_len"] for t in figures["turns"]], path
    assert result.total_estimated_tokens == figures["total"], path
    assert result.split_point == figures["split"], path
    # ... and the same figures computed again from the contents themselves
    assert_figures(turns, figures, str(path))
    eager = analyze_turns(
        [Turn(t.index, t.content, t.record_id, t.message_index, t.is_tool_result) for t in turns],
        session.messages if session.contents is None else None,
        model=result.model, temp_dir=project_temp_dir(session.path),
    )
    assert eager.compress_split_point == result.compress_split_point, path
    assert eager.truncations == result.truncations, path
    assert eager.recorded == result.recorded, path
    assert eager.kinds == result.kinds, path
    return "same"


def compare_messages(server: RefServer, messages: list[Any]) -> None:
    answer = server.call("convert", messages=messages, measure=True)
    turns = messages_to_turns(messages)
    assert_history(turns, answer, "messages")
    assert_figures(turns, answer["figures"], "messages")


def budget_answer(server: RefServer, contents: list[Any], max_chars: int, temp_dir: Path) -> dict[str, Any]:
    return server.call("budget", contents=contents, max_chars=max_chars, temp_dir=str(temp_dir))
