"""The reader's rows and ``TurnIndex``: one field list, read by name."""

from __future__ import annotations

import json

from inspector.jsjson import js_json_len
from inspector.session.figures import content_figures, may_end_summary, may_start_kept_part, usage_of
from inspector.session.rows import block_of
from inspector.session.turn_index import ROW_FIELDS, TurnIndex
from inspector.tokens import parts_quarters


def test_a_row_lands_in_the_fields_it_names() -> None:
    """Each figure of a row reaches the column of its own name: a row written in another order than
    ``ROW_FIELDS`` puts a role where a model belongs, and this fails."""
    model_turn = {"role": "model", "parts": [
        {"text": "thinking it over", "thought": True},
        {"functionCall": {"id": "c1", "name": "read_file", "args": {"path": "a.py"}}},
    ]}
    tool_result = {"role": "user", "parts": [
        {"functionResponse": {"id": "c1", "name": "read_file", "response": {"output": "x = 1\n"}}},
    ]}
    usage = usage_of({"tokens": {"input": 100, "output": 7, "cached": 3, "thoughts": 2, "tool": 0, "total": 112}})
    index = TurnIndex.from_rows([
        content_figures(model_turn, "m-1", False, usage, "gemini-2.5-pro"),
        content_figures(tool_result, "m-1", True, None, None),
    ])
    assert len(ROW_FIELDS) == len(index._columns())
    assert index.record_ids == ["m-1", "m-1"]
    assert index.roles == ["model", "user"]
    assert index.is_tool_result == [False, True]
    assert index.quarters == [parts_quarters(model_turn["parts"]), parts_quarters(tool_result["parts"])]
    assert index.json_lengths == [js_json_len(model_turn), js_json_len(tool_result)]
    assert index.json_lengths == [len(json.dumps(c, separators=(",", ":"), ensure_ascii=False))
                                  for c in (model_turn, tool_result)]
    assert index.is_candidate == [may_start_kept_part("model", False), may_start_kept_part("user", True)] \
        == [False, False]
    assert index.is_safe_end == [may_end_summary("model", True), False] == [False, False]
    assert index.calls == [(("c1", "read_file"),), ()]
    assert index.answers == [(), (("c1", "read_file"),)]
    assert index.models == ["gemini-2.5-pro", None]
    assert index.usage[0] == {"input": 100, "output": 7, "cached": 3, "thoughts": 2, "tool": 0, "total": 112}
    assert index.usage[1] is None
    assert index.thought_json[0] != 0 and index.thought_json[1] == 0  # (a signature is added: it can grow)
    assert "thought" in index.kinds[0] and index.kinds[1] == "tool result"
    assert list(index.message_starts) == []


def test_head_and_copy_keep_every_column() -> None:
    rows = [content_figures({"role": role, "parts": [{"text": f"turn {i}"}]}, f"id-{i}")
            for i, role in enumerate(["user", "model", "user", "model"])]
    index = TurnIndex.of_messages(*block_of([(row,) for row in rows]))
    head = index.head(2, 2)
    assert head.roles == ["user", "model"] and head.record_ids == ["id-0", "id-1"]
    assert list(head.message_starts) == [0, 1, 2]
    assert all(len(column) == 2 for column in head._columns())
    copied = index.copy()
    assert copied == index and copied.roles is not index.roles
