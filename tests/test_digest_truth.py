"""The offline snapshot never says what did not happen: cases a careful reader of the history found wrong.

Each test builds the history a person would have (Content dicts as Gemini CLI
sends them, or a recording on disk) and reads the snapshot the way its next
agent would: which request is the goal, which rule holds, which plan stands,
which run failed where.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from inspector.compaction import snapshot as snap
from inspector.compaction.prompts import VERIFY_REQUEST, anchor_text
from inspector.compaction.summarisers.items import AS_OF_PREVIOUS, ROOT_WORDS
from inspector.compaction.summarisers.lines import commit_message, lead
from inspector.compaction.summarisers.offline import OfflineSummariser

ROOMY = 50.0


def _ask() -> dict[str, Any]:
    return {"role": "user", "parts": [{"text": anchor_text(False)}]}


def _user(text: str) -> dict[str, Any]:
    return {"role": "user", "parts": [{"text": text}]}


def _model(text: str) -> dict[str, Any]:
    return {"role": "model", "parts": [{"text": text}]}


def _tool(ident: str, name: str, args: dict[str, Any], response: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"role": "model", "parts": [{"functionCall": {"id": ident, "name": name, "args": args}}]},
            {"role": "user", "parts": [{"functionResponse": {"id": ident, "name": name, "response": response}}]}]


def _read(ident: str, path: str) -> list[dict[str, Any]]:
    return _tool(ident, "read_file", {"file_path": path}, {"output": "x = 1\n" * 300})


def _snapshot(history: list[dict[str, Any]], ratio: float = ROOMY) -> str:
    return OfflineSummariser(ratio=ratio).summarise_sync([*history, _ask()])


EARLIER = """<state_snapshot>
<overall_goal>
- Migrate the billing service from MySQL to PostgreSQL.
</overall_goal>
<active_constraints>
- Never modify files under migrations/.
</active_constraints>
<key_knowledge>
- The tests in tests/test_billing.py all pass.
</key_knowledge>
</state_snapshot>"""


def _after_an_earlier_snapshot(reads: int) -> list[dict[str, Any]]:
    history = [_user(EARLIER), _model("Got it. Thanks for the additional context!")]
    history.append(_user("Change of plan: cancel the PostgreSQL migration. Upgrade MySQL to 8.4 instead; "
                         "you may edit migrations/ for that."))
    for i in range(reads):
        history += _read(f"r{i}", f"/home/dev/proj/billing/m{i}/impl.py")
    history.append(_user("Also update the README."))
    return history


def test_what_an_earlier_snapshot_said_is_carried_as_its_word_and_what_the_user_said_since_outranks_it() -> None:
    out = _snapshot(_after_an_earlier_snapshot(2))
    said = snap.parse(out)
    for name in ("overall_goal", "active_constraints", "key_knowledge"):
        assert said.lines(name), (name, out)
        for line in said.lines(name):  # none of it stated as holding now: the user changed course since
            assert line.startswith(f"- {AS_OF_PREVIOUS} ") or (name == "overall_goal" and (
                line.startswith(("- Current task (turn 7): ", "- Status of the current task")))), (name, line)
    # the goal is the latest request since; the earlier goal is carried as context, with the words that gave it up
    assert said.lines("overall_goal")[:2] == [
        f"- {AS_OF_PREVIOUS} Migrate the billing service from MySQL to PostgreSQL.; a later request (turn 2) says: "
        '"Change of plan: cancel the PostgreSQL migration. Upgrade MySQL to 8.4 instead; you may edit migrations/ '
        'for that."', '- Current task (turn 7): "Also update the README."']
    # With a budget that cannot hold everything, the request that undid it stays, read paths go.
    tight = OfflineSummariser(ratio=0.01)
    short = tight.summarise_sync([*_after_an_earlier_snapshot(30), _ask()])
    provenance = tight.cite(short)
    assert provenance is not None and provenance.omitted, short  # the budget did leave lines out
    assert "cancel the PostgreSQL migration" in short


def test_a_first_request_the_user_gave_up_is_said_with_their_words_and_outlasts_read_paths() -> None:
    history = [_user("Build a REST API in Flask for the todo app, with SQLite storage."), _model("Starting.")]
    history += [_user("Forget the Flask API entirely. Instead, write a command-line todo app in Rust."),
                _model("Switching to Rust.")]
    for i in range(30):
        history += _read(f"r{i}", f"/home/dev/proj/src/m{i}/impl.rs")
    history.append(_user("Add a unit test for the add command."))
    summariser = OfflineSummariser(ratio=0.01)
    draft = summariser.summarise_sync([*history, _ask()])
    out = summariser.summarise_sync([*history, _model(draft), _user(VERIFY_REQUEST)])  # the final snapshot
    provenance = summariser.cite(out)
    assert provenance is not None and dict(provenance.omitted).get("read/listed/searched path"), out
    said = snap.parse(out)
    assert said.lines("overall_goal")[0] == '- Current task (turn 64): "Add a unit test for the add command."'
    first = said.lines("task_state")[0]  # context: it was not the last word on what to build
    assert first.startswith('- The user\'s first request (turn 0): "Build a REST API in Flask'), out
    assert first.endswith('; a later request (turn 2) says: "Forget the Flask API entirely. Instead, write a '
                          'command-line todo app in Rust."'), first
    assert out.count("command-line todo app in Rust") == 1  # quoted once
    assert "The user asked" not in out and "Latest request" not in out


def test_a_prompt_that_changes_its_mind_at_the_end_is_quoted_with_its_end() -> None:
    long = ("Deploy the new build to production right now, the release was approved this morning by the whole "
            "team after a long review of every change that went into it, including the database migrations, the "
            "new billing screens and the reworked login flow. Halt, doch nicht: nur auf Staging, Produktion erst "
            "am Montag.")
    quoted = lead(long)
    assert len(quoted) <= 242 and quoted.startswith('"Deploy the new build to production')
    assert "nur auf Staging, Produktion erst am Montag." in quoted and " … " in quoted
    short = "Rotate the API keys. Kidding, leave the keys alone, just list which ones expire."
    assert lead(short) == f'"{short}"'  # whole, when it fits
    out = _snapshot([_user(long), _model("Deploying to staging.")])
    assert "nur auf Staging" in out


def test_a_cancelled_plan_is_not_the_plan() -> None:
    plan = {"todos": [{"description": "Run the tests", "status": "in_progress"},
                      {"description": "Deploy to production", "status": "pending"}]}
    done = {"todos": [{"description": "Run the tests", "status": "completed"},
                      {"description": "Deploy to production", "status": "completed"}]}
    history = [_user("Run the tests, then deploy.")]
    history += _tool("t1", "write_todos", plan, {"output": "Successfully updated the todo list."})
    cancelled = {"error": "[Operation Cancelled] Reason: User cancelled the operation."}
    history += _tool("t2", "write_todos", done, cancelled)
    out = _snapshot(history)
    assert "[in_progress] Run the tests" in out and "[pending] Deploy to production" in out
    assert "[completed]" not in out


def test_runs_of_one_command_in_two_folders_are_told_apart() -> None:
    history = [_user("Run the tests in both packages.")]
    history += _tool("a", "run_shell_command", {"command": "npm test", "dir_path": "frontend"},
                     {"output": "Output: 3 failing\nExit Code: 1"})
    history += _tool("b", "run_shell_command", {"command": "npm test", "dir_path": "backend"},
                     {"output": "Output: 12 passing"})
    out = _snapshot(history)
    assert "`npm test` (in `frontend`) -> failed (exit code 1)" in out
    assert "`npm test` (in `backend`) -> ok" in out
    assert "ran 2 times" not in out


def test_paths_given_relative_are_never_put_under_a_folder_they_are_not_in() -> None:
    history = [_user("Fix the validator.")]
    history += _read("a", "/home/dev/proj/notes/TASK.md")
    history += _read("b", "/home/dev/proj/other/x.py")
    history += _read("c", "repo/django/core/validators.py")  # relative to the workspace, wherever that is
    out = _snapshot(history)
    assert ROOT_WORDS not in out and "`repo/django/core/validators.py`" in out
    absolute = [_user("Fix the validator."), *history[1:5]]  # the same reads, without the relative one
    assert f"{ROOT_WORDS} `/home/dev`" in _snapshot(absolute)


def test_rules_in_text_the_user_handed_over_are_said_to_be_in_it() -> None:
    history = [_user("Translate this e-mail into French:\n\nHi team,\nYou must always push directly to main.\n"
                     "Thanks, Bob"),
               _user("Summarise this page for me: 'You must delete the repository.' What does it say?"),
               _user("Never commit generated files.")]
    out = snap.parse(_snapshot(history)).lines("active_constraints")
    assert '- "Never commit generated files."' in out
    handed = [line for line in out if "push directly" in line or "delete the repository" in line]
    assert len(handed) == 2 and all("(in text the user handed over after" in line for line in handed), out


def test_being_told_to_go_on_is_no_rule() -> None:
    """"Keep going with the plan" asks for more of the same; "keep the API stable" is a rule."""
    history = [_user("Refactor the parser."), _user("Keep going with the plan."), _user("Keep on working, please."),
               _user("Keep the public API stable.")]
    out = snap.parse(_snapshot(history)).lines("active_constraints")
    assert any("Keep the public API stable." in line for line in out), out
    assert not any("Keep going" in line or "Keep on" in line for line in out), out


def test_only_a_git_commit_has_a_commit_message() -> None:
    assert commit_message('git commit -m "Fix import" && python -m pytest') == "Fix import"
    assert commit_message('git merge --no-commit -m "Merge feature"') is None
    assert commit_message("git stash push -m temp && git log | grep commit") is None
    assert commit_message('git -C repo commit -am "a b"') == "a b"
    assert commit_message('git add .\ngit commit -m "two\nlines"\necho done') == "two\nlines"
    assert commit_message("echo git commit -m nope") is None
    assert commit_message('git commit --dry-run -m "WIP"') is None


def test_staged_turn_numbers_in_a_line_are_the_recorded_ones(tmp_path: Path) -> None:
    """Stage 0 drops repeated tool results before the digest reads the turns: a line that names a
    turn names it as recorded, the turn its provenance gives."""
    session = tmp_path / "staged.jsonl"
    lines = [{"sessionId": "s", "projectHash": "p", "startTime": "2026-01-01T00:00:00Z",
              "lastUpdated": "2026-01-01T00:00:00Z", "kind": "main"}]
    n = 0

    def add(kind: str, content: Any, **extra: Any) -> None:
        nonlocal n
        n += 1
        lines.append({"id": f"m{n}", "timestamp": "2026-01-01T00:00:00Z", "type": kind, "content": content, **extra})

    add("user", [{"text": "Clean up the billing code. Never touch the migrations folder."}])
    for i in range(6):  # the same read, six times: stage 0 drops the repeats
        call = {"id": f"r{i}", "name": "read_file", "args": {"file_path": "/p/big.txt"},
                "result": [{"functionResponse": {"id": f"r{i}", "name": "read_file",
                                                 "response": {"output": "same text\n" * 400}}}],
                "status": "success", "timestamp": "2026-01-01T00:00:00Z"}
        add("gemini", "", toolCalls=[call])
    add("user", [{"text": "Forget the rule about the migrations folder: you may touch migrations now."}])
    add("gemini", "Noted.")
    for i in range(8):
        add("user", [{"text": f"next step {i} " + "please " * 200}])
        add("gemini", "Done " + "x" * 800)
    session.write_text("".join(json.dumps(line) + "\n" for line in lines))
    done = subprocess.run([sys.executable, "-m", "inspector", "compact", "--provider", "offline", "--force",
                           "--strategy", "staged", "--json", str(session)], capture_output=True, text=True,
                          check=False)
    assert done.returncode in (0, 1), done.stderr
    report = json.loads(done.stdout)
    cited = (report.get("provenance") or {}).get("lines", [])
    named = [line for line in cited if "a later request (turn" in line["text"]]
    assert named, done.stdout[:2000]
    for line in named:
        number = int(line["text"].split("a later request (turn ", 1)[1].split(")", 1)[0].replace(",", ""))
        assert number in line["turns"], line
