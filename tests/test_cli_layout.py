"""The readable reports of ``analyze`` and ``compact`` in a terminal 80 columns wide (or narrower).

A heading's items (the file, its format, ``model: …``, ``session: …``) break
between two items, never inside one, and a line that goes on is set in by two
spaces; a sentence under a heading wraps set in as well; no line is wider than
the terminal or ends in spaces.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from rich.cells import cell_len

from inspector.analysis import analyze
from inspector.cli import main
from inspector.session import load

SAMPLES = Path(__file__).resolve().parents[1] / "sample_sessions"


@pytest.fixture(autouse=True)
def no_credentials(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("GEMINI_API_KEY", "GOOGLE_API_KEY", "GOOGLE_GENAI_USE_VERTEXAI", "GOOGLE_CLOUD_PROJECT"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def migration(tmp_path: Path) -> Path:
    """A copy of the long sample where Gemini CLI keeps sessions (``chats/``), for commands that write."""
    path = tmp_path / "chats" / "session-2026-11-24T09-00-migration.jsonl"
    path.parent.mkdir()
    shutil.copyfile(SAMPLES / "long-migration.jsonl", path)
    return path


def report(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, width: int, *args: str) -> list[str]:
    monkeypatch.setenv("COLUMNS", str(width))
    assert main(list(args)) in (0, 1)
    return capsys.readouterr().out.splitlines()


def heading(lines: list[str], until: str) -> list[str]:
    """The report's lines before the first that holds ``until``."""
    return lines[:next(k for k, line in enumerate(lines) if until in line)]


def whole_on_one_line(lines: list[str], item: str) -> None:
    assert sum(item in line for line in lines) == 1, (item, lines)


def test_analyze_heading_breaks_between_items(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
                                              tmp_path: Path) -> None:
    path = tmp_path / "session-2026-11-24T09-00-a-rather-long-name-for-a-session-file.jsonl"
    shutil.copyfile(SAMPLES / "long-migration.jsonl", path)
    session = load(path)
    result = analyze(session)
    model, ident = f"model: {result.model}", f"session: {session.session_id}"
    for width in (60, 80):
        lines = report(capsys, monkeypatch, width, "analyze", str(path))
        top = heading(lines, "┃")  # up to the table
        assert all(cell_len(line) <= width for line in lines), width
        assert all(line == line.rstrip() for line in top), top
        whole_on_one_line(top, model)
        whole_on_one_line(top, ident)
        whole_on_one_line(top, f"split: {result.compress_split_point} (reference)")
        assert not any(line.rstrip().endswith(("model:", "session:", "split:")) for line in top), top
        starts = ("context:", "turns:", path.name[:20], f"split {result.split_point}")  # (the name may wrap)
        for line in top:  # a heading, or a line that goes on under one (set in)
            assert line.startswith(starts) or (line.startswith("  ") and line[2] != " "), line
        assert len(top) > 6  # the heading did not fit in six lines of this width

    lines = report(capsys, monkeypatch, 240, "analyze", str(path))
    assert lines[0].startswith(path.name) and model in lines[0] and ident in lines[0]


def test_compact_heading_breaks_between_items(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
                                              migration: Path) -> None:
    lines = report(capsys, monkeypatch, 80, "compact", str(migration), "--force")
    top = heading(lines, "fact recall")
    assert top[0].startswith("provider: offline:")
    assert all(cell_len(line) <= 80 and line == line.rstrip() for line in top), top
    whole_on_one_line(top, "model: gemini-2.5-pro")
    whole_on_one_line(top, "provider: offline ")
    whole_on_one_line(top, "(summariser got the")
    assert any("(summariser got the" in line and line.endswith(" turns)") for line in top), top
    assert any(line.startswith("  ") for line in top[1:])  # the provider's reason goes on, set in
    for line in top:
        assert line.startswith(("provider:", migration.name, "status:", "tokens", "split", "tool-output")) \
            or (line.startswith("  ") and line[2] != " "), line

    start = next(k for k, line in enumerate(lines) if "final snapshot" in line) + 1
    snapshot = lines[start:next(k for k, line in enumerate(lines) if "draft -> final" in line)]
    assert snapshot[0] == "<state_snapshot>" and any(len(line) > 70 for line in snapshot)
    for line in snapshot:  # an XML tag, a bullet, or a bullet's long line going on, set in
        assert cell_len(line) <= 80 and line == line.rstrip(), line
        assert line.startswith(("<", "- ")) or (line.startswith("  ") and line[2] != " "), line


def test_history_entries_break_between_items(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
                                             migration: Path) -> None:
    from inspector.store import read_history

    for _ in range(2):
        report(capsys, monkeypatch, 80, "compact", str(migration), "--force", "--apply")
    entries = read_history(migration).entries
    assert len(entries) == 2
    file = str(migration)
    for argv in (["history", file], ["history", "--snapshots", file], ["revert", "--list", file]):
        lines = report(capsys, monkeypatch, 80, *argv)
        assert all(cell_len(line) <= 80 and line == line.rstrip() for line in lines), lines
        for entry in entries:
            whole_on_one_line(lines, f"backup {entry.backup}")
            assert sum(line.startswith(f"{entry.id}  {entry.applied_at}") for line in lines) == 1
        for line in lines:  # an entry's first line, or one going on under it (set in); a snapshot further in
            assert line.startswith((str(migration)[:20], *(e.id for e in entries), "  ")), line
        if "--snapshots" in argv:
            assert "    <state_snapshot>" in lines and any(line.startswith("      ") for line in lines)
        wide = report(capsys, monkeypatch, 1000, *argv)
        for entry in entries:  # wide enough: each entry on one line, from its id to its backup
            assert sum(line.startswith(entry.id) and line.endswith(f"backup {entry.backup}") for line in wide) == 1


def test_no_figure_is_cut_in_a_narrow_terminal(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
                                               migration: Path) -> None:
    """The tables of ``analyze`` and ``compact --compare`` fold a figure that does not fit its cell
    onto the next line; none is cut to an ellipsis.  The comparison fits 80 columns."""
    monkeypatch.setenv("COLUMNS", "80")
    assert main(["compact", str(migration), "--compare", "--json"]) == 0
    results = json.loads(capsys.readouterr().out)["compare"]
    lines = report(capsys, monkeypatch, 80, "compact", str(migration), "--compare")
    assert all(cell_len(line) <= 80 for line in lines) and "…" not in "\n".join(lines)
    assert [name for name in results if name in lines[1]] == list(results)  # a column each, side by side
    for label, key in (("tokens before", "original_token_count"), ("after", "new_token_count")):
        row = next(line for line in lines if line.split("│")[0].strip() == label)
        assert [int(cell.strip().replace(",", "")) for cell in row.split("│")[1:]] == \
            [results[name][key] for name in results]

    lines = report(capsys, monkeypatch, 60, "analyze", "--all", str(migration))
    assert "…" not in "\n".join(lines)
    result = analyze(load(migration))
    text = "\n".join(lines).replace("│", " ")
    for i in range(len(result.turns)):
        assert f" {result.turn_tokens(i):,} " in text


def test_a_long_diff_line_goes_on_clear_of_the_marks(capsys: pytest.CaptureFixture[str],
                                                     monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    long = "- The user asked: " + " ".join(f"word{i}" for i in range(40))
    old = tmp_path / "old.xml"
    new = tmp_path / "new.xml"
    old.write_text(f"<state_snapshot>\n<overall_goal>\n{long}\n</overall_goal>\n</state_snapshot>\n")
    new.write_text(f"<state_snapshot>\n<overall_goal>\n{long} more\n- short\n</overall_goal>\n</state_snapshot>\n")
    lines = report(capsys, monkeypatch, 80, "diff", str(old), str(new))
    body = lines[lines.index("<overall_goal>  changed") + 1:]
    assert all(cell_len(line) <= 80 and line == line.rstrip() for line in body)
    marks = [line[:4] for line in body if not line.startswith("      ")]
    assert marks == ["  - ", "  + ", "  + "]  # each change starts on a line of its own, with its mark
    words = " ".join(line[4:] if line[:4] in ("  - ", "  + ") else line.strip() for line in body)
    assert words == f"{long} {long} more - short"  # the rest of each goes on, set in past the marks


@pytest.mark.parametrize("argv", [
    ("analyze", "--all"),
    ("compact", "--compare"),
    ("compact", "--strategy", "staged"),
    ("compact",),
], ids=" ".join)
def test_no_report_line_ends_in_spaces(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
                                       migration: Path, argv: tuple[str, ...]) -> None:
    """A table pads its last column to the width it takes: those spaces are not written (a report
    saved to a file or compared with diff has no trailing blanks), and every column is named."""
    lines = report(capsys, monkeypatch, 80, *argv, str(migration))
    assert len(lines) > 5
    assert [line for line in lines if line != line.rstrip()] == []
    if "staged" in argv:
        header = next(line for line in lines if line.lstrip().startswith("stage "))
        assert [cell.strip() for cell in header.split("┃")] == ["stage", "ran", "before", "after", "saved",
                                                                  "detail"]
