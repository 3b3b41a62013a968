"""An exit code whose documented meaning is an answer is said as that, never as a failure.

Gemini CLI records the exit code of every command that did not exit 0.  For
grep and ripgrep 1 means no line matched, for diff and cmp that the files
differ, for test that the expression is false; 2 and more are their errors.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from inspector.cli import main
from inspector.compaction.outcomes import exit_meaning
from tests.test_snapshot_truth import Recording, line_with, shell, shell_text


def _run(command: str, output: str, code: int, pgid: int) -> dict[str, Any]:
    fields = f"\nExit Code: {code}" if code else ""
    return shell(args={"command": command}, status="success",
                 output=shell_text(f"Output: {output}{fields}\nProcess Group PGID: {pgid}"))


def _result(path: Path, capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    assert main(["compact", str(path), "--provider", "offline", "--force", "--json"]) == 0
    result: dict[str, Any] = json.loads(capsys.readouterr().out)
    assert result["status"] == "COMPRESSED", result["message"]
    return result


def test_exit_code_1_of_grep_diff_and_test_is_their_answer(tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    session = Recording()
    session.user("Find the leftover TODOs and compare the configs.")
    session.model("Searching.", _run("grep -rn TODO src", "(empty)", 1, 41))
    session.model("Comparing.", _run("diff config.a config.b", "3c3\n< port=1\n---\n> port=2", 1, 42))
    session.model("Checking.", _run("test -f build/app.bin", "(empty)", 1, 43))
    session.model("Searching again.", _run("grep -rn FIXME missing", "grep: missing: No such file or directory", 2, 44))
    session.model("Searching both.", _run("grep -rn XXX src; ls", "a.py", 1, 45))
    session.padding(8)
    result = _result(session.write(tmp_path / "answers.jsonl"), capsys)
    snapshot = result["snapshot"]
    for command, words in (("grep -rn TODO src", "no match"), ("diff config.a config.b", "files differ"),
                           ("test -f build/app.bin", "false")):
        lines = [line for line in snapshot.splitlines() if command in line]
        assert lines and all("failed" not in line for line in lines), (command, snapshot)
        assert any(f"exit code 1 ({words})" in line for line in lines), (command, snapshot)
    assert "failed (exit code 2)" in line_with(snapshot, "grep -rn FIXME missing")  # 2 is grep's error
    assert "failed (exit code 1)" in line_with(snapshot, "grep -rn XXX src; ls")  # its code may be ls's
    assert result["false_claims"] == []
    errors = [fact["value"] for fact in result["facts"]["facts"] if fact["kind"] == "error"]
    assert not any("port=" in value for value in errors), errors  # diff's output is no error
    assert any("No such file" in value for value in errors), errors


@pytest.mark.parametrize(("command", "meaning"), [
    ("grep -q needle hay.txt", "no match"), ("rg -n needle", "no match"), ("cat log | grep ERROR", "no match"),
    ("LC_ALL=C /usr/bin/grep x y 2>&1", "no match"), ("cmp a.bin b.bin", "files differ"), ("[ -d out ]", "false"),
    ("set -o pipefail; cat log | grep ERROR", ""), ("cd src && grep x y", ""), ("grep x y || true", ""),
    ("make test", ""), ("grep x y &", ""), ("echo $(grep x y)", ""),
])
def test_only_a_code_that_is_the_programs_own_is_read_so(command: str, meaning: str) -> None:
    assert exit_meaning(command) == meaning
