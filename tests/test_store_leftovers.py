"""Every leftover is cleaned or said; an undo says which apply is still in force; a damaged journal
is refused (issue 37, point 8, the store's part)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from inspector.cli import main
from inspector.session import history, load
from inspector.store import StoreError, apply_history, read_history, revert, store_dir
from inspector.store.files import JOURNAL_NAME, TEMP_MARK
from tests.hostile import hostile_session
from tests.test_store import compacted, sample_copy


def _apply(path: Path, hook=None) -> None:  # type: ignore[no-untyped-def]
    session = load(path)
    turns = history(session)
    new, sources = compacted(turns, 2)
    apply_history(session, turns, new, sources, hook=hook)


def _dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def test_a_tool_output_temp_a_killed_apply_left_is_removed_by_the_next_revert_and_said(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    chats = tmp_path / "chats"
    chats.mkdir()
    path = hostile_session(chats)  # one tool output over the budget: saved in full by the apply
    assert main(["compact", "--apply", "--force", "--provider", "offline", str(path)]) == 0
    [entry] = read_history(path).entries
    folder = Path(entry.outputs_new[0]).parent
    dead = folder / f".{Path(entry.outputs_new[0]).name}{TEMP_MARK}{_dead_pid()}-0badc0de"
    dead.write_text("half an output")
    alive = folder / f".other.txt{TEMP_MARK}{__import__('os').getpid()}-0badc0de"  # a writer still at work: kept
    alive.write_text("being written")
    capsys.readouterr()
    assert main(["revert", str(path)]) == 0
    out = capsys.readouterr().out
    assert not dead.exists() and alive.exists()
    assert "removed 1 file a killed or finished run left behind" in out and dead.name in out


def test_a_reverted_applys_backup_is_removed(tmp_path: Path) -> None:
    path = sample_copy(tmp_path, "legacy-pomodoro.json")
    backups = store_dir(path) / "backups"
    for _ in range(3):
        _apply(path)
        assert len(list(backups.iterdir())) == 1
        revert(path)
        assert list(backups.iterdir()) == [], "an apply undone keeps no backup"


def test_revert_says_which_apply_is_still_in_force(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Apply A completes; apply B is killed once journalled (it never reached the file).  ``revert``
    undoes B and says that it never reached the file and that A is still in force."""
    path = sample_copy(tmp_path, "coding-task.jsonl")
    _apply(path)
    [first] = read_history(path).entries
    after_a = path.read_bytes()

    def killed(step: str) -> None:
        if step == "journalled":
            raise KeyboardInterrupt  # (as a kill: nothing after this step runs, nothing is journalled)

    with pytest.raises(KeyboardInterrupt):
        _apply(path, killed)
    second = read_history(path).entries[-1]
    assert second.state == "incomplete"
    capsys.readouterr()
    assert main(["revert", str(path)]) == 0
    out = capsys.readouterr().out
    assert path.read_bytes() == after_a
    assert f"apply {second.id} of {second.applied_at} never reached" in out
    assert "restored" not in out
    assert f"still in force: apply {first.id} of {first.applied_at}" in out
    assert main(["revert", "--json", str(path)]) == 0
    [said] = json.loads(capsys.readouterr().out)
    assert said["id"] == first.id and said["still_applied"] == []


@pytest.mark.parametrize("value", ["12", -5, True, 12.0], ids=["text", "negative", "bool", "float"])
@pytest.mark.parametrize("field", ["size_before", "seq", "turns_after", "planned_length"])
def test_a_journal_figure_of_the_wrong_type_is_damage(field: str, value: object, tmp_path: Path) -> None:
    path = sample_copy(tmp_path, "coding-task.jsonl")
    _apply(path)
    journal = store_dir(path) / JOURNAL_NAME
    lines = journal.read_text().splitlines()
    first = json.loads(lines[0])
    first[field] = value
    journal.write_text("\n".join([json.dumps(first), *lines[1:]]) + "\n")
    with pytest.raises(StoreError, match=f"line 1 is damaged \\({field}"):
        read_history(path)
