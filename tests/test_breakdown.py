"""Where the context goes (``inspector.breakdown``): by kind, tool, file and model.

The kinds add up to the history's estimate exactly, on every sample and on
generated histories; tools and files are paired from calls to results.
"""

from __future__ import annotations

import json
from array import array
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from inspector import cli
from inspector.analysis import Analysis, analyze, analyze_turns
from inspector.breakdown import (
    INJECTED,
    KINDS,
    Dimension,
    apportion,
    breakdown,
    session_breakdown,
)
from inspector.breakdown_text import breakdown_lines
from inspector.session import load
from inspector.session.figures import content_figures
from inspector.session.history import contents_to_turns
from inspector.session.turn_index import TurnIndex
from tests.conftest import session_files
from tests.reference import strategies as gen

FILES = session_files()


@pytest.mark.parametrize("path", FILES, ids=[p.name for p in FILES])
def test_kinds_add_up_to_the_total_on_every_sample(path: Path) -> None:
    session = load(path)
    result = analyze(session)
    found = session_breakdown(session, result)
    assert sum(g.tokens for g in found.by_kind) == result.total_estimated_tokens == found.total_tokens
    assert {g.name for g in found.by_kind} <= set(KINDS)
    for group in (*found.by_kind, *found.by_tool, *found.by_file, *found.by_model):
        assert group.summarised_tokens + group.kept_tokens == group.tokens
        assert group.summarised_turns + group.kept_turns == len(group.turns)
        assert all(0 <= t < len(result.turns) for t in group.turns)
    # tools are a part of the whole: their calls and results are exactly the two tool kinds
    kinds = {g.name: g.tokens for g in found.by_kind}
    tool_quarters_floor = kinds.get("tool calls", 0) + kinds.get("tool results", 0)
    assert abs(sum(g.tokens for g in found.by_tool) - tool_quarters_floor) <= 1
    assert sum(g.tokens for g in found.by_model) <= result.total_estimated_tokens
    # the reader's figures spare reading the tool results again, and give the same groups
    from inspector.breakdown import turn_models

    assert breakdown(result, turn_models(session, result.turns)) == found


contents = st.lists(
    st.builds(lambda role, parts: {"role": role, "parts": parts},
              st.sampled_from(["user", "model"]), st.lists(gen.parts(), max_size=4)),
    max_size=8,
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                    HealthCheck.data_too_large])
@given(contents=contents, split_at=st.integers(min_value=0, max_value=8))
def test_kinds_add_up_on_generated_histories(contents: list[dict[str, Any]], split_at: int) -> None:
    turns = contents_to_turns(contents)
    result = analyze_turns(turns)
    split = min(split_at, len(turns))
    found = breakdown(result, None, split)
    assert sum(g.tokens for g in found.by_kind) == result.total_estimated_tokens
    summarised = sum(g.summarised_tokens for g in found.by_kind)
    assert summarised <= result.tokens_between(0, split) + len(KINDS)
    for group in found.by_kind:
        assert group.summarised_turns == sum(1 for t in group.turns if t < split)


def test_apportion_gives_the_rounding_to_the_largest_remainders() -> None:
    assert apportion({"a": 7, "b": 7, "c": 2}) == {"a": 2, "b": 2, "c": 0}  # 16 quarters: 4 tokens
    assert apportion({"a": 5, "b": 6, "c": 1}) == {"a": 1, "b": 2, "c": 0}  # 12 quarters: 3 tokens
    assert apportion({"a": 4, "b": 0}) == {"a": 1, "b": 0}
    assert sum(apportion({str(i): 3 for i in range(9)}).values()) == 27 // 4


def _call(name: str, ident: str, **args: Any) -> dict[str, Any]:
    return {"functionCall": {"id": ident, "name": name, "args": args}}


def _result(name: str, ident: str, output: str) -> dict[str, Any]:
    return {"functionResponse": {"id": ident, "name": name, "response": {"output": output}}}


def test_files_are_what_reading_writing_and_editing_each_path_put_in() -> None:
    history = [
        {"role": "user", "parts": [{"text": "fix the cart"}]},
        {"role": "model", "parts": [{"text": "reading", "thought": True}, _call("read_file", "r1", file_path="a.py")]},
        {"role": "user", "parts": [_result("read_file", "r1", "x" * 4000)]},
        {"role": "model", "parts": [_call("replace", "e1", file_path="a.py", old_string="x", new_string="y" * 400)]},
        {"role": "user", "parts": [_result("replace", "e1", "ok")]},
        {"role": "model", "parts": [_call("write_file", "w1", file_path="b.py", content="z" * 800)]},
        {"role": "user", "parts": [_result("write_file", "w1", "written")]},
        {"role": "model", "parts": [_call("run_shell_command", "s1", command="pytest")]},
        {"role": "user", "parts": [_result("run_shell_command", "s1", "passed " * 100)]},
        {"role": "user", "parts": [{"text": "look at @c.md"}, {"text": "\n--- Content from referenced files ---"},
                                   {"text": "\nContent from @c.md:\n"}, {"text": "c" * 2000},
                                   {"text": "\n--- End of content ---"}]},
        {"role": "model", "parts": [{"text": "done"}]},
    ]
    result = analyze_turns(contents_to_turns(history))
    found = breakdown(result, None, 9)
    files = {g.name: g for g in found.by_file}
    assert set(files) == {"a.py", "b.py", "c.md"}
    assert dict(files["a.py"].detail) == {"read": 1, "edit": 1}
    assert files["a.py"].turns == (1, 2, 3, 4)
    assert files["a.py"].tokens > 1000  # the 4,000 characters read
    assert files["b.py"].tokens > 200  # the 800 characters written, in the call's arguments
    assert files["c.md"].tokens == 500 and files["c.md"].turns == (9,)
    assert files["c.md"].kept_tokens == 500  # turn 9 is after the split at 9
    tools = {g.name: g for g in found.by_tool}
    assert tools["run_shell_command"].turns == (7, 8)
    assert tools["read_file"].detail["result_tokens"] >= 1000
    kinds = {g.name: g for g in found.by_kind}
    assert kinds[INJECTED].turns == (9,) and kinds[INJECTED].tokens > 500
    assert kinds["thoughts"].turns == (1,)
    assert sum(g.tokens for g in found.by_kind) == result.total_estimated_tokens


def test_a_result_recorded_twice_counts_twice_for_its_file() -> None:
    history = [
        {"role": "model", "parts": [_call("read_file", "r1", file_path="a.py")]},
        {"role": "user", "parts": [_result("read_file", "r1", "x" * 400)]},
        {"role": "user", "parts": [_result("read_file", "r1", "x" * 400)]},
    ]
    found = breakdown(analyze_turns(contents_to_turns(history)), None)
    assert found.by_file[0].turns == (0, 1, 2)


def test_models_group_the_model_turns_by_the_model_recorded(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    records = [{"sessionId": "s", "projectHash": "p"},
               {"id": "u", "type": "user", "content": "hi"},
               {"id": "g1", "type": "gemini", "content": "one", "model": "gemini-2.5-pro"},
               {"id": "u2", "type": "user", "content": "again"},
               {"id": "g2", "type": "gemini", "content": "two two two", "model": "gemini-2.5-flash"}]
    path.write_text("\n".join(json.dumps(r) for r in records) + "\n")
    session = load(path)
    found = session_breakdown(session, analyze(session))
    assert {g.name: g.turns for g in found.by_model} == {"gemini-2.5-pro": (1,), "gemini-2.5-flash": (3,)}


@pytest.mark.parametrize("dimension", list(Dimension), ids=[d.value for d in Dimension])
def test_text_bars_fit_80_columns(dimension: Dimension) -> None:
    session = load(Path("sample_sessions/coding-task.jsonl"))
    lines = breakdown_lines(session_breakdown(session, analyze(session)), dimension, 80)
    assert all(len(line) <= 80 for line in lines)
    assert len(lines) >= 3


def test_analyze_by_kind_prints_bars_and_the_total(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["analyze", "--by", "kind", "sample_sessions/long-migration.jsonl"]) == 0
    out = capsys.readouterr().out
    first = next(line for line in out.splitlines() if line.startswith("  tool results"))
    assert first.split()[:4] == ["tool", "results", "1,092,710", "99.7%"]
    assert "█" in first
    assert "the kinds add up to 1,096,074 tokens" in out


def test_analyze_json_has_the_breakdown(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["analyze", "--json", "sample_sessions/coding-task.jsonl"]) == 0
    report = json.loads(capsys.readouterr().out)
    found = report["breakdown"]
    for key in ("by_kind", "by_tool", "by_file", "by_model"):
        assert found[key] and all({"tokens", "turns"} <= set(v) for v in found[key].values())
    assert sum(v["tokens"] for v in found["by_kind"].values()) == report["total_estimated_tokens"]
    assert found["by_tool"]["read_file"]["turns"] >= 2


def _indexed(history: list[dict[str, Any]]) -> tuple[Analysis, TurnIndex]:
    index = TurnIndex.from_rows([content_figures(content) for content in history])
    return analyze_turns(contents_to_turns(history), index=index), index


def test_results_take_their_files_from_the_pairs_the_agentic_pass_made() -> None:
    history = [
        {"role": "model", "parts": [_call("read_file", "r1", file_path="a.py"),
                                    _call("read_file", "r2", file_path="b.py")]},
        {"role": "user", "parts": [_result("read_file", "r1", "x" * 400), _result("read_file", "r2", "y" * 40)]},
        {"role": "model", "parts": [{"text": "done"}]},
    ]
    result, index = _indexed(history)
    assert result.answered_calls is not None and list(result.answered_calls.call_of) == [0, 1]
    files = {g.name: g.turns for g in breakdown(result, None, None, index).by_file}
    assert files == {"a.py": (0, 1), "b.py": (0, 1)}
    # the breakdown pairs nothing again: told the other way round, it credits the other file
    crossed = replace(result, answered_calls=replace(result.answered_calls, call_of=array("q", [1, -1])))
    found = {g.name: g.tokens for g in breakdown(crossed, None, None, index).by_file}
    assert found["b.py"] > 100 > found["a.py"]
    # pairs made of other keys (another index's column) are not read: the same pass is made again
    assert breakdown(crossed, None, None, _indexed(history)[1]) == breakdown(result, None, None, index)


def test_a_result_that_is_no_object_answers_no_call() -> None:
    history = [  # a call with neither id nor name, then a result that is a number: no key, so no pair
        {"role": "model", "parts": [{"functionCall": {"args": {"file_path": "a.py"}}}]},
        {"role": "user", "parts": [{"functionResponse": 7}]},
        {"role": "user", "parts": [{"functionResponse": {"response": {"output": "x" * 40}}}]},
    ]
    result, index = _indexed(history)
    assert result.answered_calls is not None and list(result.answered_calls.call_of) == [0]
    files = {g.name: g.turns for g in breakdown(result, None, None, index).by_file}
    assert files == {"a.py": (0, 2)}  # the object answers it, as the agentic split pairs them
