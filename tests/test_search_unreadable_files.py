"""Search over a folder of files it cannot read: each is named with why, on every search, and found once it can be.

A file a person may not open (another user's, mode 600) is no fault of the
file: the index must not keep it out until its size or time changes (a
chmod changes neither), and every search says which files it left out, not
only the one that first met them.  The tests drop from root to ``nobody``
(tests/as_user.py), as CI runs them.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from inspector.catalog.listing import find_files
from inspector.search import index as search
from inspector.search.index import SearchError, SearchIndex, search_sessions
from tests.as_user import NOBODY, as_user, needs_root
from tests.test_tui_list import write_session


@pytest.fixture
def shared() -> Iterator[Path]:
    """A folder anyone may write in (pytest's own temp folder is root's alone)."""
    needs_root()
    folder = Path(tempfile.mkdtemp(prefix="si-hostile-search-"))
    folder.chmod(0o777)
    try:
        yield folder
    finally:
        shutil.rmtree(folder)


def _search(folder: Path, index: Path, words: str) -> tuple[list[str], list[tuple[str, str]]]:
    """The files holding ``words`` and the files left out, with why: one update and one search."""
    with SearchIndex(index) as opened:
        report = opened.update(find_files(folder))
        hits = opened.search(words, find_files(folder))
    assert report.failed == len(report.unreadable)
    return sorted(h.path.name for h in hits), [(u.path.name, u.reason) for u in report.unreadable]


def test_a_file_closed_to_the_user_is_named_and_found_once_opened(shared: Path) -> None:
    chats = shared / "chats"
    for name in ("session-open.jsonl", "session-closed.jsonl"):
        write_session(chats / name, ["tune the quokka server"], 1_700_000_000)
    chats.chmod(0o755)
    closed = chats / "session-closed.jsonl"
    closed.chmod(0o600)  # root's alone
    index = shared / "nobody" / "index.sqlite"
    index.parent.mkdir()
    os.chown(index.parent, NOBODY, NOBODY)  # the index is kept in a folder of the user's own
    _search(chats, shared / "root" / "warm.sqlite", "quokka")  # everything the child runs is imported here first

    first = as_user(lambda: _search(chats, index, "quokka"))
    assert first.error is None, first.error
    assert first.value == (["session-open.jsonl"], [("session-closed.jsonl", "permission denied")])
    again = as_user(lambda: _search(chats, index, "quokka"))
    assert again.value == first.value, "a second search (nothing read again) still names the file left out"

    closed.chmod(0o644)  # neither its size nor its time changes
    opened = as_user(lambda: _search(chats, index, "quokka"))
    assert opened.error is None, opened.error
    assert opened.value == (["session-closed.jsonl", "session-open.jsonl"], [])


def good_and_broken(chats: Path) -> Path:
    """Two sessions that hold "quokka" in ``chats``; the second's line 3 has a part that is a number
    (the reader refuses it): that one's path."""
    write_session(chats / "session-good.jsonl", ["tune the quokka server"], 1_700_000_000)
    bad = chats / "session-bad.jsonl"
    write_session(bad, ["tune the quokka server"], 1_700_000_000)
    lines = bad.read_text(encoding="utf-8").splitlines()
    lines[2] = lines[2].replace('"content": [{"text"', '"content": [7, {"text"')
    bad.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return bad


def test_a_broken_file_is_named_with_its_line_on_every_search(tmp_path: Path) -> None:
    chats = tmp_path / "chats"
    good_and_broken(chats)
    index = tmp_path / "index.sqlite"
    for _ in range(2):  # the second reads nothing again: the failure is remembered with its reason
        hits, left_out = _search(chats, index, "quokka")
        assert hits == ["session-good.jsonl"]
        assert [name for name, _ in left_out] == ["session-bad.jsonl"]
        assert left_out[0][1].startswith("line 3: ") and "content[0]" in left_out[0][1], left_out


def test_no_home_folder_is_said_as_a_search_error(shared: Path) -> None:
    """A user with no password entry and no HOME: the index's place was a RuntimeError traceback."""
    chats = shared / "chats"
    write_session(chats / "session-open.jsonl", ["tune the quokka server"], 1_700_000_000)
    chats.chmod(0o755)
    (chats / "session-open.jsonl").chmod(0o644)

    def without_home() -> str:
        for name in ("HOME", "XDG_CACHE_HOME", "GEMINI_CLI_HOME"):
            os.environ.pop(name, None)
        try:
            search_sessions("quokka", find_files(chats))
        except SearchError as exc:
            return str(exc)
        return "no error"

    with pytest.raises(SearchError):
        search_sessions("ab", [])  # everything the child runs, imported here first
    outcome = as_user(without_home, uid=12345, gid=12345)
    assert outcome.error is None, outcome.error
    assert outcome.value == ("no place for the search index: no home folder is known for user 12345 (HOME is not "
                             "set); set XDG_CACHE_HOME or HOME")


def test_an_index_another_search_is_writing_is_said_busy_and_kept(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """Another search stopped (Ctrl+Z) while writing the index holds its lock: a search waited 30 s, took the
    lock error for a broken file, and deleted the index under the other one.  Now it says so and keeps it."""
    chats = tmp_path / "chats"
    write_session(chats / "session-a.jsonl", ["tune the quokka server"], 1_700_000_000)
    index = tmp_path / "cache" / "index.sqlite"
    hits, _ = search_sessions("quokka", find_files(chats), index_path=index)
    assert [h.path.name for h in hits] == ["session-a.jsonl"]
    write_session(chats / "session-b.jsonl", ["the quokka again"], 1_700_000_100)  # something to write
    inode = index.stat().st_ino
    monkeypatch.setattr(search, "BUSY_SECONDS", 0.3, raising=False)
    other = sqlite3.connect(index, isolation_level=None)
    try:
        other.execute("BEGIN EXCLUSIVE")
        with pytest.raises(SearchError) as said:
            search_sessions("quokka", find_files(chats), index_path=index)
        assert str(said.value) == (f"the search index at {index} is busy: another search has been writing to it "
                                   "for over 0.3 s (a stopped one, Ctrl+Z, holds it until it goes on or ends); "
                                   "try again")
    finally:
        other.close()
    assert index.stat().st_ino == inode, "the index is kept"
    hits, report = search_sessions("quokka", find_files(chats), index_path=index)
    assert sorted(h.path.name for h in hits) == ["session-a.jsonl", "session-b.jsonl"]
    assert report.read == 1, "only the new file is read: what was indexed before is still there"


def test_the_command_line_names_what_it_could_not_search(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    """search says which file it left out and why, on stderr and in --json (it said nothing of them)."""
    import json

    from inspector import cli

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    chats = tmp_path / "chats"
    bad = good_and_broken(chats)
    assert cli.main(["search", "--folder", str(chats), "quokka"]) == 0
    out, err = capsys.readouterr()
    assert "session-good.jsonl" in out and "session-bad.jsonl" not in out
    said = [line for line in err.splitlines() if "could not be searched" in line]
    assert len(said) == 1 and f"1 file could not be searched, the first: {bad}: line 3: " in said[0]
    assert cli.main(["search", "--json", "--folder", str(chats), "quokka"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert [item["path"] for item in report["unreadable"]] == [str(bad)]
    assert report["unreadable"][0]["reason"].startswith("line 3: ")
