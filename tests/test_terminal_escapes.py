"""Session text never drives the terminal: escapes in it reach the CLI's output written visibly.

A session (or the journal written from one) may hold ``ESC]2;...`` (sets the
window title), ``ESC]52;c;...`` (writes the clipboard), ``ESC[2J`` (blanks
the screen) or BEL.  The commands print them as visible escapes, never raw.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from inspector.cli import main
from inspector.format import visible
from inspector.session import history, load
from inspector.store import JournalInfo, apply_history
from tests.test_store import compacted, sample_copy

TITLE = "\x1b]2;owned\x07"
CLIPBOARD = "\x1b]52;c;cm0gLXJmIH4K\x07"
BLANK = "\x1b[2J"
HOSTILE = f"gemini{TITLE}{CLIPBOARD}{BLANK}\x07\x9b31m"
RAW = ("\x1b", "\x07", "\x9b")




def _hostile_session(tmp_path: Path) -> Path:
    """coding-task.jsonl with every record's model and a tool output holding escapes."""
    path = sample_copy(tmp_path, "coding-task.jsonl")
    lines = []
    for line in path.read_text().splitlines():
        record = json.loads(line)
        if record.get("type") == "gemini":
            record["model"] = HOSTILE
        lines.append(json.dumps(record))
    path.write_text("\n".join(lines) + "\n")
    return path


def _clean(text: str) -> None:
    for raw in RAW:
        assert raw not in text, f"{raw!r} reached the terminal: {text!r}"


def test_history_and_revert_show_journal_text_visibly(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _hostile_session(tmp_path)
    session = load(path)
    turns = history(session)
    new, sources = compacted(turns, 2)
    apply_history(session, turns, new, sources, journal=JournalInfo(
        provider=f"gemini{BLANK}", model=HOSTILE, status=f"COMPRESSED{TITLE}",
        snapshot=f"<state_snapshot>{CLIPBOARD}</state_snapshot>",
    ))
    for argv in (["history", str(path)], ["history", "--snapshots", str(path)], ["revert", "--list", str(path)],
                 ["revert", str(path)], ["history", str(path)]):
        assert main(argv) == 0, argv
        out, err = capsys.readouterr()
        _clean(out + err)
        if argv[:2] == ["history", "--snapshots"]:
            assert visible(CLIPBOARD) in out, "the snapshot is shown, escaped"
        if argv[0] == "history":
            assert visible(HOSTILE, one_line=True) in out, "the model is shown, escaped"


def test_analyze_and_compact_show_the_model_visibly(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _hostile_session(tmp_path)
    assert main(["analyze", str(path), "--model", "gemini-2.5-pro"]) == 0
    out, err = capsys.readouterr()
    _clean(out + err)
    main(["compact", str(path), "--provider", "offline", "--force", "--apply"])
    out, err = capsys.readouterr()
    _clean(out + err)


def test_a_refusal_naming_a_hostile_file_name_is_shown_visibly(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / f"odd{TITLE}"
    folder.mkdir()
    path = sample_copy(folder, "legacy-pomodoro.json")
    assert main(["revert", str(path)]) == 2
    _, err = capsys.readouterr()
    _clean(err)
    assert "nothing to undo" in err


def _hostile_prompts(tmp_path: Path) -> Path:
    """coding-task.jsonl with escapes and a lone surrogate in every user prompt."""
    path = sample_copy(tmp_path, "coding-task.jsonl")
    lines = []
    for line in path.read_text().splitlines():
        record = json.loads(line)
        if record.get("type") == "user" and isinstance(record.get("content"), list):
            record["content"] = [{"text": f"Keep {HOSTILE} and \ud800 in mind: never touch /etc{TITLE}."}]
        lines.append(json.dumps(record))
    path.write_text("\n".join(lines) + "\n")
    return path


def test_the_compact_report_shows_the_snapshot_visibly(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _hostile_prompts(tmp_path)
    assert main(["compact", str(path), "--provider", "offline", "--force"]) == 0
    out, err = capsys.readouterr()
    _clean(out + err)
    assert "\ud800" not in out
    assert "\\ud800" in out, "the user's words reach the snapshot, the lone surrogate written visibly"


def test_diff_shows_snapshot_text_visibly(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    old = tmp_path / "old.txt"
    new = tmp_path / "new.txt"
    old.write_text("<state_snapshot><overall_goal>ship it</overall_goal></state_snapshot>")
    new.write_text(f"<state_snapshot><overall_goal>ship {HOSTILE} it</overall_goal></state_snapshot>")
    assert main(["diff", str(old), str(new)]) == 0
    out, err = capsys.readouterr()
    _clean(out + err)
    assert visible(HOSTILE, one_line=True) in out
