"""The probe benchmark (bench/probe.py): questions written from the summarised turns by rules of its own,
graded 0-5 from the snapshot and the kept turns, with false statements checked against the history."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

import probe  # noqa: E402
from probe_questions import Question, questions  # noqa: E402

from inspector.compaction.summarisers.offline import OfflineSummariser  # noqa: E402


def _history() -> list[dict]:
    def call(n: int, name: str, args: dict, output: str) -> list[dict]:
        return [{"role": "model", "parts": [{"functionCall": {"id": str(n), "name": name, "args": args}}]},
                {"role": "user", "parts": [{"functionResponse": {"id": str(n), "name": name,
                                                                 "response": {"output": output}}}]}]
    return [{"role": "user", "parts": [{"text": "Fix the failing order tests. Never touch the migrations folder."}]},
            *call(1, "run_shell_command", {"command": "pytest -q"},
                  "Output: E AssertionError: assert 4 == 2\n1 failed, 11 passed\nExit Code: 1"),
            {"role": "model", "parts": [{"text": "The root cause is the discount applied twice, so I will remove "
                                                 "the second call."}]},
            *call(2, "replace", {"file_path": "/w/orders.py", "instruction": "Apply the discount once.",
                                 "old_string": "a", "new_string": "b"}, "Successfully modified file: /w/orders.py"),
            *call(3, "run_shell_command", {"command": "pytest -q"}, "Output: 12 passed")]


def test_questions_cover_the_four_kinds_from_the_turns_alone() -> None:
    asked = questions(_history())
    assert {q.kind for q in asked} == {"recall", "artifact", "continuation", "decision"}
    needs = {q.text: [g[0] for g in q.needs] for q in asked}
    assert any("12 passed" in n for n in needs.values()), needs  # what the last run found
    assert any("orders.py" in n for n in needs.values()), needs


def test_a_question_scores_the_share_of_its_needs_found() -> None:
    question = Question("recall", "What failed?", (("pytest",), ("assertionerror",), ("4 == 2", "4 != 2")), 1)
    assert probe.grade(question, "pytest failed: assertionerror: 4 == 2").score == 5.0
    half = probe.grade(question, "pytest ran")
    assert round(half.score, 2) == round(5 / 3, 2) and half.missing == ("assertionerror", "4 == 2")


def test_a_quote_no_prompt_holds_and_an_ok_no_run_had_are_false_statements() -> None:
    history = _history()
    bad = ('<state_snapshot>\n<overall_goal>\n- The user asked: "Rewrite the whole billing service in Rust"\n'
           "</overall_goal>\n<recent_actions>\n- `pytest -q` -> ok\n</recent_actions>\n</state_snapshot>")
    found = probe.own_false(bad, history[:3])  # the one recorded run of pytest -q exited 1
    assert any("quote not in the history" in f for f in found), found
    assert any("every run exited non-zero" in f for f in found), found
    from tests.test_summarisers_offline import request

    assert probe.own_false(OfflineSummariser(ratio=50.0).summarise_sync([*history, request()]), history) == []


def test_the_bench_runs_on_a_sample_with_no_false_statement() -> None:
    result = asyncio.run(probe.probe(ROOT / "sample_sessions" / "coding-task.jsonl", OfflineSummariser()))
    assert result.scored and not result.false and result.size is not None and result.size < 1
    assert {s.question.kind for s in result.scored} == {"recall", "artifact", "continuation", "decision"}
    table = probe.table([result])
    assert "coding-task.jsonl" in table and "ALL (mean over questions)" in table
