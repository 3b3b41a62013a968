"""A tool call's outcome, read from what Gemini CLI recorded (``compaction.outcomes``, ``compaction.statuses``).

The result forms are the ones Gemini CLI's tools write (``tools/*.js`` of the
reference package, and older versions seen in the real recordings); each
session file is also checked call by call against the independent reader
of ``inspector.quality``: the two must agree on every outcome.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from inspector.compaction.outcomes import (
    BACKGROUND,
    CANCELLED,
    FAILED,
    OK,
    TERMINATED,
    UNKNOWN,
    read_outcome,
    shell_fields,
    tool_kind,
)
from inspector.compaction.statuses import call_statuses, tool_statuses
from inspector.compaction.summarisers.digest import collect
from inspector.quality import extract
from inspector.quality.ground import outcome_class
from inspector.session import SessionError, history, load
from tests.conftest import session_files

OLD_OK = ("Command: whoami\nDirectory: (root)\nOutput: mischa\nError: (none)\nExit Code: 0\nSignal: 0\n"
          "Background PIDs: (none)\nProcess Group PGID: 26613")
OLD_FAILED_WITH_ERROR_WORDS = (
    'Command: ssh root@router "blocky"\nDirectory: (root)\nOutput: WARN deprecated option\n'
    "Error: start udp listener failed: listen udp :5353: bind: address already in use\nError: (none)\n"
    "Exit Code: 1\nSignal: 0\nBackground PIDs: (none)\nProcess Group PGID: 722110")
NEW_OK_WITH_ERROR_WORDS = ("<untrusted_context>\nOutput: 5 errors found in the log\nError: none of them new\n"
                           "Process Group PGID: 1\n</untrusted_context>")
NEW_EXIT_1 = ("<untrusted_context>\nOutput: Traceback (most recent call last):\nModuleNotFoundError: No module named "
              "'google'\nExit Code: 1\nProcess Group PGID: 87979\n</untrusted_context>")


def shell(text: str, status: str | None = "success"):  # type: ignore[no-untyped-def]
    return read_outcome("shell", {"output": text}, status)


def test_the_earlier_shell_form_error_none_is_not_a_failure() -> None:
    outcome = shell(OLD_OK)
    assert outcome.state == OK and outcome.text() == "ok"
    assert shell(OLD_OK, None).state == OK  # no status recorded: the fields alone say it


def test_output_lines_that_look_like_fields_stay_output() -> None:
    outcome = shell(OLD_FAILED_WITH_ERROR_WORDS)
    assert outcome.state == FAILED and outcome.detail == "exit code 1"  # the real Error field says "(none)"
    assert outcome.tail.startswith("Error: start udp listener failed")  # quoted as output, not as the field
    assert shell(NEW_OK_WITH_ERROR_WORDS).state == OK  # 0.61: a failure is recorded as status "error"


def test_the_0_61_form_exit_code_and_wrapper() -> None:
    outcome = shell(NEW_EXIT_1)
    assert (outcome.state, outcome.detail) == (FAILED, "exit code 1")
    assert outcome.tail == "ModuleNotFoundError: No module named 'google'"
    fields = shell_fields("Output: (empty)\nProcess Group PGID: 3")
    assert fields["Output"] == "" and "Exit Code" not in fields


def test_a_command_a_signal_ended_is_said_so_not_called_a_failure() -> None:
    """Gemini CLI writes a signal as "Signal: N" beside the exit code and marks no error ("Command
    terminated by signal: N"): ``pkill -f`` ending its own shell, as in a published session."""
    recorded = ('Command: pkill -f "python3 .*dashboard/main.py"\nDirectory: (root)\nOutput: (empty)\n'
                "Error: (none)\nExit Code: 0\nSignal: 15\nBackground PIDs: (none)\nProcess Group PGID: 828152")
    outcome = shell(recorded)
    assert (outcome.state, outcome.text()) == (TERMINATED, "terminated by signal 15")
    new_form = "<untrusted_context>\nOutput: (empty)\nSignal: 9\nProcess Group PGID: 4\n</untrusted_context>"
    assert shell(new_form).text() == "terminated by signal 9"
    with_code = recorded.replace("Exit Code: 0", "Exit Code: 143")  # an exit code is still a failure first
    assert (shell(with_code).state, shell(with_code).detail) == (FAILED, "exit code 143")


def test_a_multi_line_command_in_the_earlier_form() -> None:
    text = ("Command: cat > notes.md <<'EOF'\n# a\nEOF\nDirectory: (root)\nOutput: (empty)\nError: (none)\n"
            "Exit Code: 0\nSignal: 0\nBackground PIDs: (none)\nProcess Group PGID: 9")
    assert shell(text, None).state == OK


def test_status_and_error_field_come_first() -> None:
    cancelled = {"error": "[Operation Cancelled] Reason: User cancelled the operation."}
    assert read_outcome("shell", cancelled, "cancelled").state == CANCELLED
    assert read_outcome("shell", cancelled, None).state == CANCELLED
    failed = read_outcome("edit", {"error": "Failed to edit, 0 occurrences found"}, "error")
    assert (failed.state, failed.detail) == (FAILED, "Failed to edit, 0 occurrences found")
    assert read_outcome("read", {"output": "Error: this file's text is about errors"}, "success").state == OK


def test_fixed_sentences_of_the_shell_tool() -> None:
    timeout = shell("Command was automatically cancelled because it exceeded the timeout of 5.0 minutes without "
                    "output. Below is the output before it was cancelled:\nPermission denied")
    assert (timeout.state, timeout.detail) == (CANCELLED, "timed out")
    assert shell("Command was cancelled by user before it could complete.").state == CANCELLED
    assert shell("Command moved to background (PID: 7). Output hidden.").state == BACKGROUND


@pytest.mark.parametrize(("kind", "text", "created"), [
    ("write", "Successfully created and wrote to new file: /p/a.py.", True),
    ("write", "Successfully overwrote file: /p/a.py.", False),
    ("edit", "Successfully modified file: /p/a.py (1 replacements).", False),
    ("edit", "Created new file: /p/b.py with provided content.", True),
    ("glob", 'No files found matching pattern "*.rs" within /p', None),
    ("search", 'Found 3 matches for pattern "x" in path "."', None),
    ("list", "Directory listing for /p:\n[DIR] src", None),
    ("web_search", 'Web search results for "q":\n\n...', None),
    ("todos", "Successfully updated the todo list. The current list is now:\n1. [pending] a", None),
    ("memory", '{"success":true,"message":"Okay, I\'ve remembered that: \\"x\\""}', None),
])
def test_success_forms_of_the_other_tools_without_a_status(kind: str, text: str, created: bool | None) -> None:
    outcome = read_outcome(kind, {"output": text}, None)
    assert outcome.state == OK and outcome.created == created


def test_unknown_form_without_status_is_unknown() -> None:
    assert read_outcome("read", {"output": "print('hi')"}, None).state == UNKNOWN
    assert shell("raw pytest output\n1 failed", None).state == UNKNOWN  # no fields: no guess from "failed"
    assert read_outcome("memory", {"output": '{"success": false, "error": "disk full"}'}, None).state == FAILED


def test_tool_kinds() -> None:
    assert tool_kind("run_shell_command", {}) == "shell"
    assert tool_kind("mcp_runner", {"command": "ls"}) == "shell"
    assert tool_kind("grep_search", {}) == "search" and tool_kind("search_file_content", {}) == "search"
    assert tool_kind("read_many_files", {}) == "read" and tool_kind("cli_help", {}) == "other"


def test_statuses_follow_the_parts_each_result_becomes() -> None:
    calls = [
        {"status": "success", "result": "plain"},
        {"status": "error", "result": [{"functionResponse": {}}, {"inlineData": {}}]},
        {"status": "cancelled", "result": None},
        {"status": "success", "result": {"functionResponse": {}}},
    ]
    assert call_statuses(calls) == ["success", "error", "error", "success"]


SESSIONS = session_files()


@pytest.mark.parametrize("path", SESSIONS, ids=lambda p: p.name)
def test_the_digest_and_the_independent_reader_agree_on_every_outcome(path: Path) -> None:
    try:
        session = load(path)
    except SessionError as exc:
        pytest.skip(str(exc))
    turns = history(session)
    contents = [t.content for t in turns]
    statuses = tool_statuses(session, turns)
    digest = collect(contents, statuses)
    assert extract(contents, statuses).facts or not digest.calls
    mine = {(c.result_turn, c.name): c.outcome.state for c in digest.calls if c.result_turn is not None}
    theirs: dict[tuple[int, str], str] = {}
    for turn, content in enumerate(contents):
        for number, part in enumerate(content.get("parts") or []):
            response = part.get("functionResponse") if isinstance(part, dict) else None
            if isinstance(response, dict):
                name = str(response.get("name") or "")
                theirs.setdefault((turn, name), outcome_class(name, response.get("response"),
                                                              statuses.status(turn, number))[0])
    shared = [k for k in mine if k in theirs and k[1] in ("run_shell_command", "replace", "write_file", "read_file")]
    disagree = [(k, mine[k], theirs[k]) for k in shared if mine[k] != theirs[k]]
    assert not disagree, disagree[:5]
    checked = [k for k in mine if k[1] in ("run_shell_command", "replace", "write_file", "read_file")]
    assert len(shared) == len(checked)  # both readers paired the same results with calls


MISCHA = next((p for p in SESSIONS if "17b4d5e9" in p.name), None)


@pytest.mark.skipif(MISCHA is None, reason="the shared real session is not here")
def test_every_command_of_the_real_session_reads_as_recorded() -> None:
    """Issue 11: all 126 shell calls there are recorded "success" with Exit Code 0 or their own code."""
    assert MISCHA is not None
    session = load(MISCHA)
    turns = history(session)
    digest = collect([t.content for t in turns], tool_statuses(session, turns))
    shells = [c for c in digest.calls if c.kind == "shell"]
    assert len(shells) >= 100
    assert not any(c.outcome.detail == "Error: (none)" for c in shells)
    assert sum(c.outcome.state == OK for c in shells) >= 0.8 * len(shells)
