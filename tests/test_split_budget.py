"""The split point and the tool-output budget, directly."""

from __future__ import annotations

from pathlib import Path

import pytest

from inspector.compaction.budget import (
    apply_budget,
    format_truncated,
    output_file_name,
    plan_budget,
    truncate_chars,
)
from inspector.compaction.split import ends_safely, find_split_point, is_split_candidate
from inspector.compaction.view import HistoryView, view_candidates
from inspector.jsjson import js_stringify
from inspector.session.figures import response_figures
from tests.reference.client import RefServer


def user(text: str) -> dict:
    return {"role": "user", "parts": [{"text": text}]}


def model(text: str, call: bool = False) -> dict:
    parts: list[dict] = [{"text": text}]
    if call:
        parts.append({"functionCall": {"name": "f"}})
    return {"role": "model", "parts": parts}


def result(name: str, output: str | None) -> dict:
    fr: dict = {"name": name}
    if output is not None:
        fr["response"] = {"output": output}
    return {"role": "user", "parts": [{"functionResponse": fr}]}


def test_candidates_and_safe_end() -> None:
    history = [user("a"), model("b", call=True), result("f", "x"), model("c"), user("d"), model("e")]
    assert [is_split_candidate(c) for c in history] == [True, False, False, False, True, False]
    assert ends_safely(history[-1]) and not ends_safely(history[1])
    for view in HistoryView:  # the roles alternate: both views show these turns as they are
        assert view_candidates(history, view) == [0, 4, 6]


def test_split_takes_the_first_candidate_past_seventy_percent() -> None:
    weights = [10, 10, 10, 10, 60, 10]
    flags = [True, False, True, False, True, True]
    assert find_split_point(weights, flags, last_is_safe_end=False) == 5  # 100 >= 0.7 x 110
    assert find_split_point([10, 90], [True, False], last_is_safe_end=True) == 2  # nothing past: all of it
    assert find_split_point([10, 90], [True, False], last_is_safe_end=False) == 0
    with pytest.raises(ValueError):
        find_split_point([1], [True], False, fraction=1)


@pytest.mark.differential
def test_budget_counts_newest_first_and_numbers_like_the_reference(reference: RefServer, tmp_path: Path) -> None:
    big = "é" * 100_000  # 150,000 tokens; even its 40,000-char excerpt (60,000) overflows the budget
    history = [result("old", "z" * 100), result("none", None), result("new", big)]
    folder = tmp_path / "tool-outputs"
    truncated, cuts = apply_budget(history, lambda tool, seq: str(folder / f"{tool}_{seq}.txt"), max_chars=40_000)
    # The response-less part takes number 2 (the reference fails to save it and keeps it).
    assert [(c.turn, c.tool, c.seq) for c in cuts] == [(2, "new", 1), (0, "old", 3)]
    answer = reference.call("budget", contents=history, max_chars=40_000, temp_dir=str(tmp_path))
    assert [f["path"] for f in answer["files"]] == sorted(c.output_file for c in cuts)
    assert [js_stringify(c) for c in truncated] == answer["history"]
    assert cuts[0].full_text == big and cuts[0].original_tokens == 150_000
    assert cuts[0].excerpt.startswith("Output too large. Showing first 8,000 and last 32,000 characters.")
    assert cuts[1].excerpt == "z" * 100  # fits in max_chars: kept whole, but still saved to a file
    assert truncated[1] is history[1]


def test_plan_reads_a_text_only_when_it_must() -> None:
    history = [result("a", "q" * 210_000), result("b", "r" * 10)]
    asked: list[tuple[int, int]] = []

    def text_of(i: int, j: int) -> str:
        asked.append((i, j))
        return history[i]["parts"][j]["functionResponse"]["response"]["output"]

    responses = [response_figures(c["parts"]) for c in history]
    cuts = plan_budget(responses, text_of, lambda tool, seq: f"{tool}{seq}", max_chars=100)
    assert [c.turn for c in cuts] == [0] and asked == [(0, 0)]
    cuts = plan_budget(responses, text_of, lambda tool, seq: f"{tool}{seq}", max_chars=500_000)
    assert asked == [(0, 0)]  # fits: not read ...
    assert cuts[0].full_text == "q" * 210_000 and asked == [(0, 0), (0, 0)]  # ... until someone asks


def test_file_names_and_limits() -> None:
    assert output_file_name("run_shell_command", 3) == "run_shell_command_3.txt"
    assert output_file_name("my tool😀", 12) == "my_tool___12.txt"  # an emoji is two UTF-16 units
    assert output_file_name("", 4) == "4.txt"
    assert truncate_chars(1_000_000, 0) == 40_000
    assert truncate_chars(1_000, 900) == 400
    assert format_truncated("short", "f", 10) == "short"
