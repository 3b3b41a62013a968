"""A commit is said made only where its command ended ok; otherwise what the record says of it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from inspector.cli import main
from tests.test_snapshot_truth import Recording, shell, shell_text


def _run(command: str, output: str, code: int, pgid: int) -> dict[str, Any]:
    fields = f"\nExit Code: {code}" if code else ""
    return shell(args={"command": command}, status="success",
                 output=shell_text(f"Output: {output}{fields}\nProcess Group PGID: {pgid}"))


def test_a_commit_whose_command_failed_is_not_said_made(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    session = Recording()
    session.user("Commit the parser work.")
    session.model("Committing.", _run('git commit -am "Add the parser"',
                                      "On branch main\nnothing to commit, working tree clean", 1, 51))
    session.model("Committing.", _run('git commit -m "Fix the tests"', "[main 1a2b3c4] Fix the tests", 0, 52))
    session.model("Committing.", shell(args={"command": 'git commit -m "Bump the version"'}, status="cancelled",
                                       output=None))
    session.padding(8)
    assert main(["compact", str(session.write(tmp_path / "commits.jsonl")), "--provider", "offline", "--force",
                 "--json"]) == 0
    result: dict[str, Any] = json.loads(capsys.readouterr().out)
    snapshot: str = result["snapshot"]
    lines = snapshot.splitlines()
    failed = [line for line in lines if '"Add the parser"' in line]
    assert failed, snapshot
    assert not any(line.lstrip("- ").startswith('Commit "Add the parser"') for line in failed), failed
    said = next(line for line in failed if "commit" in line.lower() and "`" not in line)
    assert "failed (exit code 1)" in said and '"nothing to commit, working tree clean"' in said, said
    assert any(line.lstrip("- ").startswith('Commit "Fix the tests" (its command ended ok)') for line in lines)
    bumped = [line for line in lines if '"Bump the version"' in line and "`" not in line]
    assert bumped and not any(line.lstrip("- ").startswith("Commit ") for line in bumped), bumped
    assert "cancelled" in bumped[0], bumped
    assert result["false_claims"] == []


def test_a_commit_in_a_chain_that_failed_says_whose_exit_code_it_may_be(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``git commit ... && git push`` with the push rejected: one exit code for both, so the commit is not
    said failed, nor made; the record's own words are: the chain's exit code, and git's commit line."""
    session = Recording()
    session.user("Commit and push the parser work.")
    output = ("[main 1a2b3c4] Add the parser\n 2 files changed, 40 insertions(+)\n"
              " ! [rejected]        main -> main (fetch first)\nerror: failed to push some refs")
    session.model("Committing.", _run('git commit -am "Add the parser" && git push', output, 1, 61))
    session.model("Building.", _run("make; make test", "make: *** [test] Error 2", 2, 62))
    session.model("One command.", _run("make lint", "lint.c:3: error: unused", 2, 63))
    session.padding(40)  # a history long enough for a budget that holds every line
    assert main(["compact", str(session.write(tmp_path / "chain.jsonl")), "--provider", "offline", "--force",
                 "--json"]) == 0
    result: dict[str, Any] = json.loads(capsys.readouterr().out)
    lines: list[str] = result["snapshot"].splitlines()
    commit = next(line for line in lines if '"Add the parser"' in line and "`" not in line)
    assert not commit.lstrip("- ").startswith("Commit "), commit
    assert "one exit code for a chain of 2 commands joined by &&" in commit, commit
    assert "git's line for a commit it made: \"[main 1a2b3c4] Add the parser\"" in commit, commit
    run = next(line for line in lines if "`git commit -am" in line and "output ended" in line)
    assert "failed (exit code 1) (one exit code for a chain of 2 commands" in run, run
    both = next(line for line in lines if "`make; make test`" in line)
    assert "the exit code of the last of 2 commands run one after another" in both, both
    alone = next(line for line in lines if "`make lint`" in line)
    assert "exit code" in alone and "chain" not in alone and "commands" not in alone, alone
    assert result["false_claims"] == []
