"""The offline snapshot's goal is the current task (issue 39): the user's latest request of four words
or more, with its task files, the shorter prompts after it and its status; the first request and an
earlier snapshot's goal are context beside it; no request is quoted twice; and a rule is said with the
agent's own sentence on how it reads it.

Each test reads the snapshot ``session-inspector compact --provider offline --force --json`` writes
for a recording (a sample, a shared real session, or one written here in Gemini CLI 0.61's form), or
the offline summariser's for a history given as Gemini API contents.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from inspector.cli import main
from inspector.compaction import snapshot as snap
from inspector.compaction.prompts import GEMINI_CLI_ACKNOWLEDGEMENT, anchor_text
from inspector.compaction.summarisers.offline import OfflineSummariser
from inspector.compaction.summarisers.words import lead
from tests.conftest import SAMPLES, SHARED
from tests.test_snapshot_truth import Recording, line_with

REAL = SHARED / "real-sessions"


def _compact(path: Path, capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    assert main(["compact", str(path), "--provider", "offline", "--force", "--json"]) == 0
    result: dict[str, Any] = json.loads(capsys.readouterr().out)
    assert result["status"] == "COMPRESSED", result["message"]
    assert result["false_claims"] == []
    return result


def _text(role: str, words: str) -> dict[str, Any]:
    return {"role": role, "parts": [{"text": words}]}


def _summarise(history: list[dict[str, Any]], ratio: float = 50.0, grow: bool = True) -> str:
    return OfflineSummariser(ratio=ratio, grow=grow).summarise_sync([*history, _text("user", anchor_text(False))])


def _prompts(path: Path, upto: int) -> list[str]:
    """The user's own prompts among the first ``upto`` turns of a recording (as the digest reads them)."""
    from inspector.analysis import analyze
    from inspector.compaction.summarisers.digest import collect
    from inspector.session import load

    turns = [t.content for t in analyze(load(path)).turns][:upto]
    return [p.text for p in collect(turns).prompts]


def test_the_goal_is_the_current_task_and_the_first_request_long_done_is_context(
        capsys: pytest.CaptureFixture[str]) -> None:
    """coding-task.jsonl: the discount bug (turn 0) was fixed by turn 25; the user then asked to check
    the server log (turn 26).  The goal read "The user's first request: Fix the discount bug"."""
    result = _compact(SAMPLES / "coding-task.jsonl", capsys)
    said = snap.parse(result["snapshot"])
    assert said.lines("overall_goal") == [
        '- Current task (turn 26): "Check the server log for payment errors since this morning. '
        'ログにカード番号が出ていないか確認して。"',
        "- Status of the current task, as recorded: 1 tool call after it, then the agent's message in turn 30 with "
        "no call after it (waiting for the user)"]
    first = said.lines("task_state")[0]
    assert first.startswith('- The user\'s first request (turn 0, then 8 tool calls before the next request): "Fix '
                            'the discount bug in the order totals.'), first
    assert "; the agent's last words before the next request (turn 25): \"All 12 order tests pass now" in first
    for prompt in _prompts(SAMPLES / "coding-task.jsonl", result["split_point"]):  # none quoted twice
        assert result["snapshot"].count(lead(prompt, 600)) <= 1, prompt
    assert "Latest request" not in result["snapshot"]


@pytest.mark.parametrize(("name", "current", "first"), [
    ("mischa-thisness__M-Gemini__chat_logs__session-2025-12-30T01-31-271ace30.json",
     '- Current task (turn 86): "+ claude code theme toggle"',
     '- The user\'s first request (turn 0, then 2 tool calls before the next request): "list all of the apps '
     'installed on my system accessible from the launcher"; the agent\'s last words before the next request (turn 5): '
     '"Here are the applications installed on your system'),
    ("BrianV1981__aim__AUTO_REPAIR__archive__raw__session-2026-03-18T01-07-a86073d5.json",
     '- Current task (turn 64): "im trying to see token usage, context window usage, etc, is there a /command that I '
     'am missing? /stats does not really answer those qyuestions"',
     '- The user\'s first request (turn 0, then 5 tool calls before the next request): "Hello, I want to know if you '
     'read the memory file, 2026-03-17_1946.md'),
])
def test_a_real_sessions_goal_is_its_latest_request_not_its_first(
        capsys: pytest.CaptureFixture[str], name: str, current: str, first: str) -> None:
    """Two shared real sessions whose first request was long done: a launcher listing, then a theme
    toggle; a memory file, then an indexer key, then token usage."""
    path = REAL / name
    if not path.is_file():
        pytest.skip("the shared real sessions are not here")
    said = snap.parse(_compact(path, capsys)["snapshot"])
    assert said.lines("overall_goal")[0] == current
    assert said.lines("overall_goal")[1].startswith("- Status of the current task, as recorded: ")
    said_first = [line for line in said.lines("task_state") if line.startswith("- The user's first request")]
    assert len(said_first) == 1 and said_first[0].startswith(first), said_first


def test_the_shorter_prompts_after_the_current_task_are_said_beside_it_with_its_task_file(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """"yes" and "go on" set no task: the request before them stays the current task, and each is said
    once, beside it (they were "Latest request" lines, and the task file was named with no request)."""
    session = Recording()
    session.user("Add a health check endpoint to the API.")
    session.model("Reading the task notes.", {"name": "read_file", "args": {"file_path": "/w/docs/HEALTH.md"},
                                              "status": "success", "output": "# Health checks\n\nExpose /healthz."})
    session.model("Shall I also add a readiness probe?")
    session.user("yes")
    session.model("Writing it.", {"name": "write_file", "args": {"file_path": "/w/api/health.py", "content": "x"},
                                  "status": "success",
                                  "output": "Successfully created and wrote to new file: /w/api/health.py."})
    session.model("Added both.")
    session.user("go on")
    session.model("Nothing left to do.")
    session.user("ok")
    session.model("Summary of the work. " + "More detail follows here. " * 60)
    snapshot = _compact(session.write(tmp_path / "short.jsonl"), capsys)["snapshot"]
    assert snap.parse(snapshot).lines("overall_goal") == [
        '- Current task (turn 0, the user\'s latest request of four words or more): "Add a health check endpoint to '
        'the API."; after it the user wrote only "yes" (turn 5), "go on" (turn 10), "ok" (turn 12); the text file the '
        'agent took in next: `HEALTH.md` (turn 1), which begins "Health checks"',
        "- Status of the current task, as recorded: 2 tool calls after it, then the agent's message in turn 13 with no "
        "call after it (waiting for the user)"]
    assert snapshot.count('"yes"') == 1 and snapshot.count('"go on"') == 1 and snapshot.count('"ok"') == 1
    assert "<task_state>" not in snapshot  # no other request to give


EARLIER = """<state_snapshot>
<overall_goal>
- Add rate limiting to the login endpoint.
</overall_goal>
<active_constraints>
- Must not use Redis.
</active_constraints>
</state_snapshot>"""


@pytest.mark.parametrize(("name", "turn", "answered"), [("after-compression.jsonl", 2, 12),
                                                        ("checkpoint-rate-limit.json", 3, 10)])
def test_a_request_since_an_earlier_snapshot_is_the_goal_and_its_goal_is_carried_above_it(
        capsys: pytest.CaptureFixture[str], name: str, turn: int, answered: int) -> None:
    """The samples resumed from an earlier snapshot: its goal (rate limiting) read as the goal, the user's
    request since ("Now wire the limiter into login ...") only as the latest request in task_state."""
    said = snap.parse(_compact(SAMPLES / name, capsys)["snapshot"])
    assert said.lines("overall_goal") == [
        "- As the earlier snapshot had it: Add rate limiting to the login endpoint (5 attempts/min/IP).",
        f'- Current task (turn {turn}): "Now wire the limiter into login and add tests. Don\'t change the login() '
        'signature."',
        f"- Status of the current task, as recorded: 3 tool calls after it, then the agent's message in turn "
        f"{answered} with no call after it (waiting for the user)"]
    assert not any("Latest request" in line for line in said.lines("task_state"))


def test_an_earlier_snapshots_goal_stays_the_goal_until_a_new_request_then_is_carried_beside_it() -> None:
    """After "go on" the earlier snapshot's goal is still the goal (the latest request and its status
    in task_state); after a request of its own the new request is the goal, the earlier goal carried
    as the earlier snapshot's word just below it (it was said as the goal, outranking the request)."""
    start = [_text("user", EARLIER), _text("model", GEMINI_CLI_ACKNOWLEDGEMENT)]
    went_on = snap.parse(_summarise([*start, _text("user", "go on"), _text("model", "Wired it. " * 40)]))
    assert went_on.lines("overall_goal") == [
        "- As the earlier snapshot had it: Add rate limiting to the login endpoint."]
    assert went_on.lines("task_state") == [
        '- Latest request: "go on"',
        "- Status of the latest request (turn 2), as recorded: the agent answered in turn 3 with no tool call; nothing "
        "after it (waiting for the user)"]
    asked = [*start, _text("user", "Now add a login audit log as well."), _text("model", "Adding it. " * 40)]
    new = snap.parse(_summarise(asked))
    assert new.lines("overall_goal") == [
        "- As the earlier snapshot had it: Add rate limiting to the login endpoint.",
        '- Current task (turn 2): "Now add a login audit log as well."',
        "- Status of the current task, as recorded: the agent answered in turn 3 with no tool call; nothing after it "
        "(waiting for the user)"]
    gave_up = [*start, _text("user", "Change of plan: forget the rate limiting, add a login audit log instead."),
               _text("model", "Switching. " * 40)]
    snapshot = _summarise(gave_up)
    assert snap.parse(snapshot).lines("overall_goal")[:2] == [
        "- As the earlier snapshot had it: Add rate limiting to the login endpoint.; the current task (turn 2) is a "
        "later request that names it",
        '- Current task (turn 2): "Change of plan: forget the rate limiting, add a login audit log instead."']
    assert snapshot.count("Change of plan") == 1  # quoted once, as the goal
    seen_alone = False
    for ratio in [n / 100 for n in range(25, 90, 5)]:
        goal = snap.parse(_summarise(asked, ratio, grow=False)).lines("overall_goal")
        carried = [line for line in goal if line.startswith("- As the earlier snapshot")]
        assert not carried or '- Current task (turn 2): "Now add a login audit log as well."' in goal, (ratio, goal)
        seen_alone = seen_alone or (len(goal) == 1 and goal[0].startswith("- Current task"))
    assert seen_alone  # a budget did choose: the current task stays before the earlier goal


def test_a_rule_is_said_with_the_agents_own_sentence_on_how_it_reads_it() -> None:
    """The agent said how it read "Never push to the main branch"; the rule was quoted alone.  Its sentence
    is quoted beside it, with its turn; a sentence that is no reading, or one written after the next
    request, is not."""
    history = [_text("user", "Deploy the API to staging. Never push to the main branch."),
               _text("model", "I read 'never push to the main branch' as: tags on main are fine, commits are not. "
                              "Pushing to the main branch is blocked anyway."),
               _text("user", "Also update the changelog."),
               _text("model", "I understand the main branch rule to mean no force-push either.")]
    rules = snap.parse(_summarise(history)).lines("active_constraints")
    assert rules == ['- "Never push to the main branch."; the agent wrote in turn 1: "I read \'never push to the main '
                     'branch\' as: tags on main are fine, commits are not."'], rules
    other = [*history[:1], _text("model", "I read the deploy script as a shell file.")]  # no word of the rule
    assert snap.parse(_summarise(other)).lines("active_constraints") == ['- "Never push to the main branch."']


@pytest.mark.parametrize(("text", "found"), [
    ("I take 'never push' to mean no commits on main.", True),
    ("My reading of the rule is that staging is allowed.", True),
    ("Interpreting this as a request to keep the public API.", True),
    ("I'm assuming that 'no external frameworks' means no npm packages at all.", True),
    ("I'll take a look at the tests as well.", False),
    ("I read the file and fixed the bug.", False),
    ("I understand that you are busy.", False),
])
def test_a_reading_is_a_sentence_that_says_how_the_agent_takes_words(text: str, found: bool) -> None:
    from inspector.compaction.summarisers.words import reading_sentences

    assert bool(reading_sentences(text)) is found


def test_the_current_tasks_line_is_the_one_a_short_budget_keeps(tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    """gemini-cli-0.61-three-prompts.jsonl: 15% of 80 tokens; the goal read the first prompt ("Hello
    there, who are you?") though two more followed."""
    snapshot = _compact(SAMPLES / "gemini-cli-0.61-three-prompts.jsonl", capsys)["snapshot"]
    assert line_with(snapshot, "Current task") == '- Current task (turn 4): "Thanks, that is all for now."'
