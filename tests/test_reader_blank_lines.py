"""Issue 37.8: blank lines cost nearly nothing, and a long CLI read says how far it got.

A file of 110,000,000 blank lines after a session took about 20 minutes to
read (800,000: 9.5 s), each blank line a failed parse and an exception, with
nothing shown.  Blank and whitespace-only lines are now passed over by the
run, in C, before any parse: these tests count the parses the reader attempts
(one per line that holds something), check that the lines after the blanks
keep their numbers, and that the progress a long read reports advances to the
end (the app's bar and the CLI's stderr both show it).
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import orjson
import pytest

from inspector.cli import main
from inspector.progress import ReadShown
from inspector.session import Session, load
from inspector.session.reader import ReadWatch
from tests.test_store import sample_copy

BLANKS = (b"\n", b"   \n", b"\t\n", b" \x0b\x0c \n", b"  \t  \n")


def _parses(monkeypatch: pytest.MonkeyPatch, path: Path, watch: ReadWatch | None = None) -> tuple[Session, int]:
    """``path`` loaded, and how many times ``orjson.loads`` (what ``jsonl.scan`` parses each line with
    first) was called meanwhile.  It is counted on the orjson module itself, not as ``jsonl.orjson``: a
    core compiled where mypy sees orjson's types (the project's own venv) reads the modules it imports
    from a cache of its own, not from its globals.  So the count also holds the few parses of the first
    line that tell the file's format."""
    calls = 0
    loads = orjson.loads

    def counted(raw: Any) -> Any:
        nonlocal calls
        calls += 1
        return loads(raw)

    with monkeypatch.context() as patch:
        patch.setattr(orjson, "loads", counted)
        session = load(path) if watch is None else load(path, watch)
    return session, calls


def _with_blanks(tmp_path: Path, per_gap: int, *, crlf: bool = False) -> tuple[Path, Path, Path, int]:
    """coding-task.jsonl as it is; its lines and one line that is not JSON at the end, with no blank line;
    the same with ``per_gap`` blank lines of every kind after each line; and how many lines hold something."""
    plain = sample_copy(tmp_path, "coding-task.jsonl")
    lines = [*plain.read_bytes().splitlines(), b"{not json"]
    gap = b"".join(BLANKS[i % len(BLANKS)] for i in range(per_gap))
    found = []
    for name, between in (("unblanked", b""), ("blanked", gap)):
        body = b"".join(line + b"\n" + between for line in lines)
        if crlf:
            body = body.replace(b"\n", b"\r\n")
        path = tmp_path / name / plain.name
        path.parent.mkdir()
        path.write_bytes(body)
        found.append(path)
    return plain, found[0], found[1], len(lines)


@pytest.mark.parametrize("crlf", [False, True], ids=["lf", "crlf"])
def test_a_blank_line_costs_no_parse(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, crlf: bool) -> None:
    plain, unblanked, blanked, holding = _with_blanks(tmp_path, 2_000, crlf=crlf)
    _, unblanked_parses = _parses(monkeypatch, unblanked)
    session, parses = _parses(monkeypatch, blanked)
    assert unblanked_parses >= holding  # (each line that holds something)
    assert parses == unblanked_parses, f"{parses:,} parses against {unblanked_parses:,} without the blank lines"
    expected = load(plain)
    assert [m["id"] for m in session.messages] == [m["id"] for m in expected.messages]
    assert session.line_count == holding + holding * 2_000
    # the lines keep their numbers: the bad one is named where it is
    (warning,) = session.warnings
    assert warning.line == (holding - 1) * 2_001 + 1 and "not valid JSON" in warning.message
    assert all(session.message_lines[m["id"]] == expected.message_lines[m["id"]] * 2_001 - 2_000
               for m in expected.messages)


def test_a_big_file_of_blank_lines_is_read_block_by_block_without_a_parse(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Past the size read block by block (8 MB): 9,000,000 blank lines after the session, one process."""
    monkeypatch.setenv("SESSION_INSPECTOR_SERIAL", "1")
    plain = sample_copy(tmp_path, "coding-task.jsonl")
    lines = plain.read_bytes().count(b"\n")
    expected, plain_parses = _parses(monkeypatch, plain)
    with plain.open("ab") as out:
        for _ in range(9):
            out.write(b"\n" * 999_999 + b"  \n")
    reports: list[tuple[str, int, int]] = []
    watch = ReadWatch(progress=lambda phase, done, total: reports.append((phase, done, total)))
    session, parses = _parses(monkeypatch, plain, watch)
    assert parses == plain_parses and plain_parses >= lines  # (a parse a line, none for a blank one)
    assert len(session.messages) == len(expected.messages) > 0 and not session.warnings
    # the progress the app's bar and the CLI show advances to the end, in both phases
    for phase in ("reading", "parsing"):
        done = [d for p, d, _ in reports if p == phase]
        assert len(done) >= 2 and done == sorted(done) and done[-1] == plain.stat().st_size, (phase, done)


class _Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_read_says_how_far_it_got_on_a_terminal_only_after_a_second() -> None:
    clock = _Clock()
    terminal = _Terminal()
    shown = ReadShown("session-inspector: reading big.jsonl", terminal, clock=clock)
    shown("reading", 10, 100)
    assert terminal.getvalue() == ""  # a quick read says nothing
    clock.now += 1.5
    for done in range(20, 101, 20):
        shown("reading", done, 100)
    for done in range(0, 101, 50):
        shown("parsing", done, 100)
    shown.close()
    said = terminal.getvalue().split("\r")
    assert said[1:4] == [f"session-inspector: reading big.jsonl: {p}% (reading)" for p in (10, 20, 30)]
    assert said[-3:] == ["session-inspector: reading big.jsonl: 100% (parsing)", " " * 52, ""]
    log = io.StringIO()  # not a terminal: a log or a script reading stderr gets nothing
    shown = ReadShown("reading x", log, clock=clock)
    clock.now += 2
    shown("parsing", 50, 100)
    shown.close()
    assert log.getvalue() == ""


def test_analyze_says_on_stderr_how_far_a_long_read_got(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    """The CLI's read reports on stderr once past a second (the clock here says every report is)."""
    monkeypatch.setenv("SESSION_INSPECTOR_SERIAL", "1")
    plain = sample_copy(tmp_path, "coding-task.jsonl")
    with plain.open("ab") as out:
        out.write(b"\n" * (9 << 20))
    ticks = iter(range(0, 1000, 2))
    monkeypatch.setattr("inspector.progress.time.monotonic", lambda: float(next(ticks)))
    monkeypatch.setattr("sys.stderr.isatty", lambda: True, raising=False)
    assert main(["analyze", str(plain), "--json"]) == 0
    out, err = capsys.readouterr()
    assert json.loads(out)["history"]
    said = err.split("\r")
    assert f"session-inspector: reading {plain}: 100% (parsing)" in said, err
    assert said[-1] == "" and not said[-2].strip(), "the line is erased at the end"


def test_the_apps_loading_bar_advances_through_a_file_of_blank_lines(tmp_path: Path) -> None:
    """The app reads through ``tui.loading.read_session``; what it reports is what its bar draws."""
    from inspector.tui.loading import read_session

    plain = sample_copy(tmp_path, "coding-task.jsonl")
    with plain.open("ab") as out:
        out.write(b"\n" * (12 << 20))
    size = plain.stat().st_size
    reports: list[tuple[str, int, int]] = []
    loaded = read_session(plain, threshold=0.5,
                          progress=lambda phase, done, total: reports.append((phase, done, total)))
    assert loaded.session.line_count > 12 << 20 and loaded.analysis.turns
    for phase in ("reading", "parsing"):
        done = [d for p, d, t in reports if p == phase and t == size]
        assert len(done) >= 2 and done == sorted(done) and done[-1] == size, (phase, done)
    assert [p for p, _, _ in reports][-1] == "analysing"
