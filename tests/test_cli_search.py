"""``session-inspector search`` end to end on real files: hits, --json, the on-disk index, bad input."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from inspector import cli
from inspector.search.index import SearchIndex, default_index_path, session_turns
from inspector.session import load
from tests.test_tui_list import write_session


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    chats = tmp_path / ".gemini" / "tmp" / "proj" / "chats"
    write_session(chats / "session-a.jsonl", ["set up the \x1b[31mquokka\x1b[0m server", "later"], 1_700_000_000,
                  session_id="aaaa1111-x")
    write_session(chats / "session-b.jsonl", ["nothing here", "QUOKKA again, twice: quokka"], 1_700_000_000,
                  session_id="bbbb2222-x", updated="2026-02-01T00:00:00Z")
    monkeypatch.setenv("GEMINI_CLI_HOME", str(tmp_path))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    return chats


def expected_hits(chats: Path, word: str) -> list[tuple[str, int]]:
    """An independent reading: every history turn whose text holds ``word``, newest session first."""
    found = []
    for name in ("session-b.jsonl", "session-a.jsonl"):  # b's lastUpdated is the later one
        found += [(str(chats / name), turn) for turn, _, text in session_turns(load(chats / name))
                  if word in text.lower()]
    return found


def test_json_hits_name_session_and_turn(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["search", "quokka", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert [(hit["path"], hit["turn"]) for hit in report["hits"]] == expected_hits(home, "quokka")
    assert report["hits"][0]["session_id"] == "bbbb2222-x"
    assert report["files"] == 2


def test_text_output_shows_session_text_literally(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["search", "quokka", "--folder", str(home)]) == 0
    captured = capsys.readouterr()
    lines = captured.out.splitlines()
    assert len(lines) == len(expected_hits(home, "quokka")) == 2
    assert "\x1b" not in captured.out and "\\e[31mquokka" in captured.out  # escapes shown, never sent
    assert lines[1].startswith(f"{home / 'session-a.jsonl'}  turn 0 (user)")
    assert "2 hits in 2 session files" in captured.err


def test_unchanged_files_are_not_read_again(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["search", "quokka"]) == 0
    from inspector.catalog.listing import find_files

    with SearchIndex(default_index_path()) as index:
        assert index.update(find_files()).read == 0  # the first search indexed both
    write_session(home / "session-a.jsonl", ["no animals now"], 1_700_000_500, session_id="aaaa1111-x")
    with SearchIndex(default_index_path()) as index:
        report = index.update(find_files())
        assert report.read == 1
        assert [h.path.name for h in index.search("quokka")] == ["session-b.jsonl"]


@pytest.mark.parametrize("args", [["search", "quokka", "--folder", "/no/such/folder"],
                                  ["search", "ab"], ["search", "  "]])
def test_bad_input_exits_2_with_one_line(home: Path, capsys: pytest.CaptureFixture[str], args: list[str]) -> None:
    assert cli.main(args) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.count("\n") == 1 and captured.err.startswith("session-inspector: ")


def test_a_broken_index_file_is_rebuilt(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = default_index_path()
    path.parent.mkdir(parents=True)
    path.write_bytes(b"this is not a database" * 100)
    assert cli.main(["search", "quokka", "--json"]) == 0
    assert len(json.loads(capsys.readouterr().out)["hits"]) == 2


def test_the_index_of_every_session_s_text_is_the_owner_s_only(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["search", "pomodoro", "--json"]) == 0
    capsys.readouterr()
    index = default_index_path()
    assert stat.S_IMODE(index.stat().st_mode) == 0o600
    assert stat.S_IMODE(index.parent.stat().st_mode) & 0o077 == 0
    for side in (Path(f"{index}-wal"), Path(f"{index}-shm")):  # SQLite gives them the database's mode
        if side.exists():
            assert stat.S_IMODE(side.stat().st_mode) == 0o600


def test_a_session_id_with_a_lone_surrogate_is_indexed_like_any_other(
        home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """JSON may escape half a surrogate pair; the index stores text as UTF-8, so one such file made
    every search fail with a traceback."""
    odd = home / "session-odd.jsonl"
    lines = (home / "session-a.jsonl").read_text(encoding="utf-8").splitlines()
    first = json.loads(lines[0])
    first["sessionId"] = "\ud800odd"
    odd.write_text("\n".join([json.dumps(first), *lines[1:]]) + "\n", encoding="utf-8")
    assert cli.main(["search", "quokka", "--json"]) == 0
    paths = {hit["path"] for hit in json.loads(capsys.readouterr().out)["hits"]}
    assert str(odd) in paths


def test_a_cache_folder_that_cannot_be_made_is_one_line(
        home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder", encoding="utf-8")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocker))
    assert cli.main(["search", "quokka"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "cannot keep the search index at" in err[0] and str(blocker) in err[0], err


def test_a_file_name_that_is_not_utf8_is_searched_like_any(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Linux names are bytes: one that is not UTF-8 is indexed and found, and names no other file."""
    odd = Path(os.fsdecode(os.fsencode(home) + b"/session-\xff\xfe.jsonl"))
    write_session(odd, ["a quokka in a file the terminal cannot name"], 1_700_000_000, session_id="cccc3333-x")
    assert cli.main(["search", "quokka", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["files"] == 3
    assert "cccc3333-x" in {hit["session_id"] for hit in report["hits"]}
    assert cli.main(["search", "quokka"]) == 0  # the text report too, the name shown escaped
    assert "session-" in capsys.readouterr().out
    assert cli.main(["search", "quokka", "--json"]) == 0  # the index read back: the same three files
    assert json.loads(capsys.readouterr().out)["files"] == 3


def test_a_query_that_is_not_utf8_is_refused_in_one_line(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["search", os.fsdecode(b"\xff\xfeabc")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "not valid UTF-8" in err[0]
