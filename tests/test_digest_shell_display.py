"""A command's own output is told from Gemini CLI's fields by the display its call recorded.

From Gemini CLI 0.27 a shell result's text is ``"Output: " + output`` and then
the tool's own lines (``Exit Code: N`` only when not 0), and the call's
``resultDisplay`` is the output alone (tools/shell.js: a string headless, the
terminal's lines interactive).  A command that prints ``Exit Code: 1`` as its
own last line and exits 0 ended well; the display says so.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from inspector.cli import main
from inspector.compaction.outcomes import FAILED, OK, fields_after_display, kept_text, read_outcome, shell_outcome
from inspector.compaction.statuses import display_text, note_statuses
from tests.test_snapshot_truth import Recording, line_with, shell, shell_text

SESSIONS = Path("/work/shared/gemini-cli-sessions")
PRINTED = "checking the log\nExit Code: 1"  # what the command itself printed (its last line looks like a field)


def _ansi(text: str, width: int = 40) -> list[list[dict[str, Any]]]:
    """The terminal's lines an interactive 0.61 shell records: padded to the width, then a cursor row."""
    run = {"bold": False, "italic": False, "underline": False, "dim": False, "inverse": False,
           "isUninitialized": True, "fg": "", "bg": ""}
    rows = [[{**run, "text": line.ljust(width)}] for line in text.split("\n")]
    return [*rows, [{**run, "text": " ", "inverse": True}, {**run, "text": " " * (width - 1)}], [{**run, "text": ""}]]


def _with_displays(session: Recording, displays: dict[str, Any]) -> None:
    """Give each recorded call whose command is a key of ``displays`` that ``resultDisplay``."""
    for line in session.lines:
        for call in line.get("toolCalls", []) if isinstance(line, dict) else []:
            command = call["args"].get("command")
            if command in displays:
                call["resultDisplay"] = displays[command]


def _recording(display_of_grep: Any) -> Recording:
    session = Recording()
    session.user("Check the deploy log for failures.")
    session.model("Reading it.", shell(args={"command": "cat deploy.log"}, status="success", output=shell_text(
        f"Output: {PRINTED}\nProcess Group PGID: 31")))
    session.model("Running the check.", shell(args={"command": "./check.sh"}, status="success", output=shell_text(
        f"Output: {PRINTED}\nExit Code: 1\nProcess Group PGID: 32")))
    session.padding(8)
    _with_displays(session, {"cat deploy.log": display_of_grep, "./check.sh": display_of_grep})
    return session


def _legacy(session: Recording, path: Path) -> Path:
    """The same session as a pre-0.6x single JSON file (read through ``statuses.tool_statuses``)."""
    head = session.lines[0]
    messages: list[dict[str, Any]] = []
    for line in session.lines[1:]:
        if "$set" in line:
            messages = list(line["$set"]["messages"])
        else:
            messages.append(line)
    path.write_text(json.dumps({**head, "messages": messages}), encoding="utf-8")
    return path


def _snapshot(path: Path, capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    assert main(["compact", str(path), "--provider", "offline", "--force", "--json"]) == 0
    result: dict[str, Any] = json.loads(capsys.readouterr().out)
    assert result["status"] == "COMPRESSED", result["message"]
    return result


@pytest.mark.parametrize("display", [PRINTED, _ansi(PRINTED)], ids=["headless", "interactive"])
@pytest.mark.parametrize("form", ["jsonl", "json"])
def test_a_printed_exit_code_line_is_output_when_the_display_shows_it(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], display: Any, form: str) -> None:
    session = _recording(display)
    path = session.write(tmp_path / "log.jsonl") if form == "jsonl" else _legacy(session, tmp_path / "log.json")
    result = _snapshot(path, capsys)
    snapshot = result["snapshot"]
    assert "failed" not in line_with(snapshot, "cat deploy.log")
    assert "failed (exit code 1)" in line_with(snapshot, "./check.sh")
    states = dict(fact["value"].strip("`").split("` -> ") for fact in result["facts"]["facts"]
                  if fact["kind"] == "command")
    assert states == {"cat deploy.log": "ok", "./check.sh": "failed"}, states  # the independent check alike
    assert result["false_claims"] == []


def test_without_a_display_the_fields_are_read_as_before() -> None:
    text = shell_text(f"Output: {PRINTED}\nProcess Group PGID: 31")
    assert shell_outcome(text).state == FAILED  # nothing tells the printed line from Gemini CLI's
    assert shell_outcome(text, PRINTED).state == OK
    # a display that is not the output (debug mode: the whole text; no output: a sentence) tells nothing
    whole = f"Output: {PRINTED}\nProcess Group PGID: 31"
    assert shell_outcome(text, whole).state == FAILED
    empty = shell_text("Output: (empty)\nExit Code: 2\nProcess Group PGID: 9")
    assert shell_outcome(empty, "Command exited with code: 2").detail == "exit code 2"
    assert shell_outcome(empty, "").detail == "exit code 2"


def test_an_exit_code_after_the_output_is_read_and_the_last_line_quoted() -> None:
    text = shell_text("Output: Exit Code: 3\nall done\nExit Code: 4\nSignal: 15\nProcess Group PGID: 9")
    outcome = read_outcome("shell", {"output": text}, "success", "run_shell_command", "Exit Code: 3\nall done")
    assert outcome.state == FAILED and outcome.detail == "exit code 4" and outcome.tail == "all done"


def test_a_cut_output_is_read_through_the_displays_last_lines() -> None:
    """An output over the size limit keeps its start and end (0.29+): the display's end ends it."""
    lines = [f"line {n}" for n in range(3000)] + ["Exit Code: 1"]
    output = "\n".join(lines)
    kept_end = "\n".join(lines[-40:]) + "\nProcess Group PGID: 7"
    start = "Output: line 0\nline 1"
    text = (f"Output too large. Showing first {len(start)} and last {len(kept_end)} characters. "
            f"For full output see: /t/o.txt\n{start}\n\n... [50000 characters omitted] ...\n\n{kept_end}")
    assert shell_outcome(text).state == FAILED
    assert shell_outcome(text, output).state == OK


def test_the_display_text_of_gemini_cli_0_61s_own_recordings() -> None:
    """The headless and interactive displays 0.61 wrote are the output its result text holds."""
    seen = 0
    for path in sorted(SESSIONS.glob("*.jsonl")):
        for raw in path.read_text(encoding="utf-8").splitlines():
            record = json.loads(raw)
            for call in record.get("toolCalls", []) if isinstance(record, dict) else []:
                if call.get("name") != "run_shell_command" or "resultDisplay" not in call:
                    continue
                text = call["result"][0]["functionResponse"]["response"]["output"]
                display = display_text(call["resultDisplay"])
                assert display is not None and display.strip()
                assert shell_outcome(text, display) == shell_outcome(text)  # the same, where nothing is in doubt
                assert fields_after_display(kept_text(text), display) is not None, (display, text)
                seen += 1
    assert seen >= 2


def test_only_a_display_that_can_tell_something_is_kept() -> None:
    """A display is kept beside the statuses only where its output's last line reads like a field."""
    record = {"toolCalls": [
        {"id": "a", "name": "run_shell_command", "args": {"command": "cat deploy.log"}, "status": "success",
         "result": [{"functionResponse": {"id": "a", "response": {"output": "x"}}}], "resultDisplay": PRINTED},
        {"id": "b", "name": "run_shell_command", "args": {"command": "ls"}, "status": "success",
         "result": [{"functionResponse": {"id": "b", "response": {"output": "x"}}}], "resultDisplay": "a.py\nb.py"},
        {"id": "c", "name": "read_file", "args": {"file_path": "x"}, "status": "success",
         "result": [{"functionResponse": {"id": "c", "response": {"output": "x"}}}], "resultDisplay": PRINTED},
    ]}
    by_part: dict[tuple[int, int], str] = {}
    displays: dict[tuple[int, int], str] = {}
    note_statuses(record, 5, True, by_part, {}, displays)
    assert by_part == {(5, 0): "success", (5, 1): "success", (5, 2): "success"}
    assert displays == {(5, 0): PRINTED}
