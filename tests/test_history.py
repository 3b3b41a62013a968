"""Messages -> turns: the conversion, lazy turns, and what is left out."""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from inspector.jsjson import JS_WHITESPACE
from inspector.session import history, load
from inspector.session.history import _part_text_pieces, is_ignored_user_content, messages_to_turns

META = {"sessionId": "s", "projectHash": "p"}
CALLS = [{"id": "c1", "name": "read_file", "args": {"path": "a"}, "result": "file text"},
         {"id": "c2", "name": "ls", "args": {}, "result": [{"functionResponse": {"name": "ls", "response": {"o": 1}}}]},
         {"id": "c3", "name": "x", "args": {}}]
MESSAGES = [
    {"id": "u0", "type": "user", "content": [{"text": "<session_context>\nctx</session_context>"}]},
    {"id": "u1", "type": "user", "content": "read a"},
    {"id": "i1", "type": "info", "content": "ignored"},
    {"id": "u2", "type": "user", "content": "/help"},
    {"id": "g1", "type": "gemini", "content": "reading", "toolCalls": CALLS,
     "thoughts": [{"subject": "Plan", "description": "read it"}], "tokens": {"input": 10, "output": 2}},
]


def test_conversion() -> None:
    turns = messages_to_turns(MESSAGES)
    assert [(t.role, t.record_id, t.turn_id) for t in turns] == [
        ("user", "u1", "u1"), ("model", "g1", "g1"), ("user", "g1", "g1_response")]
    model = turns[1].content["parts"]
    assert model[0] == {"text": "**Plan** read it", "thought": True}
    assert model[1] == {"text": "reading"}
    assert [p["functionCall"]["id"] for p in model[2:]] == ["c1", "c2", "c3"]
    results = turns[2].content["parts"]
    assert results[0] == {"functionResponse": {"id": "c1", "name": "read_file", "response": {"output": "file text"}}}
    assert results[1] == CALLS[1]["result"][0]  # an array result is spliced in as it is
    assert len(results) == 2  # no result, no part


def test_lazy_turns_build_the_same_contents(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in [META, *MESSAGES]) + "\n")
    session = load(path)
    lazy = history(session)
    eager = messages_to_turns(list(session.messages))
    assert [t._content for t in lazy] == [None, None, None]  # nothing parsed yet
    assert [t.role for t in lazy] == [t.role for t in eager]
    assert [t._content for t in lazy] == [None, None, None]  # the role is known without parsing
    assert lazy == eager
    assert lazy[1].content is lazy[1].content


@settings(max_examples=150, deadline=None)
@given(st.lists(st.one_of(st.text(alphabet=" \u00a0\ufeff/?<>abc_sehiontx", max_size=20),
                          st.builds(lambda t: {"text": t}, st.text(alphabet=" /?<session_context>", max_size=25))),
                max_size=3))
def test_fast_and_slow_prefix_checks_agree(content: list[object]) -> None:
    joined = "".join(_part_text_pieces(content)).strip(JS_WHITESPACE)
    expected = not joined or joined.startswith(("/", "?", "<session_context>", "<hook_context>"))
    assert is_ignored_user_content(content) == expected
