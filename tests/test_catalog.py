"""The session list follows /resume's rules (catalog.listing), on real files in a temporary GEMINI_CLI_HOME."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from inspector.catalog.listing import catalog, find_files, folder_name_for, short_project, subagent_files
from tests.test_tui_list import write_session


def write_lines(path: Path, lines: list[dict[str, object]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")


@pytest.fixture
def chats(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("GEMINI_CLI_HOME", str(tmp_path))
    return tmp_path / ".gemini" / "tmp" / ("f" * 64) / "chats"


def names(folder: Path | None = None) -> list[str]:
    return [row.entry.path.name for row in catalog(folder).rows]


def test_sorted_by_last_updated_not_file_time(chats: Path) -> None:
    write_session(chats / "session-a.jsonl", ["a"], 1_800_000_000, updated="2026-01-01T00:00:00Z")
    write_session(chats / "session-b.jsonl", ["b"], 1_700_000_000, updated="2026-03-01T00:00:00Z")
    write_session(chats / "session-c.jsonl", ["c"], 1_750_000_000, updated="2026-02-01T00:00:00Z")
    assert names() == ["session-b.jsonl", "session-c.jsonl", "session-a.jsonl"]


def test_summary_is_the_title_else_the_first_prompt(chats: Path) -> None:
    write_session(chats / "session-a.jsonl", ["hello", "more"], 1_700_000_000)
    write_session(chats / "session-b.jsonl", ["hello"], 1_700_000_000)
    with (chats / "session-a.jsonl").open("a", encoding="utf-8") as handle:
        handle.write(json.dumps({"$set": {"summary": "Fix   the\nlogin bug"}}) + "\n")
    titles = {row.entry.path.name: row.entry.title for row in catalog().rows}
    assert titles == {"session-a.jsonl": "Fix the login bug", "session-b.jsonl": "hello"}


def test_one_row_per_session_id_the_later_one(chats: Path) -> None:
    write_session(chats / "session-old.json", ["x"], 1_700_000_000, session_id="same", updated="2026-01-01T00:00:00Z")
    write_session(chats / "session-new.jsonl", ["x", "y"], 1_600_000_000, session_id="same",
                  updated="2026-01-02T00:00:00Z")
    write_session(chats / "session-other.jsonl", ["z"], 1_700_000_000)
    result = catalog()
    assert sorted(names()) == ["session-new.jsonl", "session-other.jsonl"]
    assert result.hidden == 1


def test_side_files_and_files_without_a_conversation_are_not_listed(chats: Path) -> None:
    write_session(chats / "session-real.jsonl", ["a prompt"], 1_700_000_000)
    # only a warning and the context turn: nothing /resume would resume
    write_lines(chats / "session-warning.jsonl", [
        {"sessionId": "w", "projectHash": "h", "startTime": "2026-01-01T00:00:00Z", "kind": "main"},
        {"id": "c", "timestamp": "t", "type": "user", "content": [{"text": "<session_context>\nx"}]},
        {"id": "w1", "timestamp": "t", "type": "warning", "content": "rate limited"},
    ])
    write_lines(chats.parent / "logs.json", [{"sessionId": "x", "type": "user", "message": "hi"}])
    write_lines(chats / "notes.jsonl", [{"a": 1}])  # not named session-*
    write_session(chats / ".session-inspector" / "session-real.jsonl" / "backup.jsonl", ["old"], 1_700_000_000)
    (chats.parent / "tool-outputs").mkdir()
    write_session(chats.parent / "tool-outputs" / "session-x.jsonl", ["no"], 1_700_000_000)
    write_session(chats / "stray" / "session-y.jsonl", ["not a subagent"], 1_700_000_000)
    result = catalog()
    assert names() == ["session-real.jsonl"]
    assert result.hidden == 2  # the warning-only session and the stray file in a subfolder


def test_an_unreadable_session_is_listed_with_the_reason(chats: Path) -> None:
    chats.mkdir(parents=True)
    (chats / "session-bad.json").write_text("{not json", encoding="utf-8")
    rows = catalog().rows
    assert len(rows) == 1 and rows[0].entry.error and "JSON" in rows[0].entry.error


def test_subagents_are_listed_under_their_parent(chats: Path) -> None:
    parent_id = "abc-123:x"
    write_session(chats / "session-parent.jsonl", ["delegate"], 1_700_000_000, session_id=parent_id,
                  updated="2026-01-01T00:00:00Z")
    write_session(chats / "session-later.jsonl", ["later"], 1_700_000_000, updated="2026-05-01T00:00:00Z")
    folder = chats / folder_name_for(parent_id)
    assert folder.name == "abc-123_x"  # as Gemini CLI sanitises the id
    write_session(folder / "agent-1.jsonl", ["look around"], 1_700_000_000, kind="subagent",
                  updated="2026-01-01T00:00:01Z")
    write_session(folder / "agent-2.jsonl", ["read it"], 1_700_000_000, kind="subagent",
                  updated="2026-01-01T00:00:02Z")
    rows = catalog().rows
    assert [(row.entry.path.name, row.depth) for row in rows] == [
        ("session-later.jsonl", 0), ("session-parent.jsonl", 0), ("agent-2.jsonl", 1), ("agent-1.jsonl", 1)]
    assert rows[1].subagents == 2
    assert sorted(p.name for p in subagent_files(chats / "session-parent.jsonl", parent_id)) == [
        "agent-1.jsonl", "agent-2.jsonl"]


def test_turns_are_the_history_turns(chats: Path) -> None:
    write_session(chats / "session-a.jsonl", ["one", "two", "three"], 1_700_000_000)
    from inspector.session import history, load

    (row,) = catalog().rows
    assert row.entry.turns == len(history(load(chats / "session-a.jsonl"))) == 6


def test_a_folder_lists_any_session_file_in_it(tmp_path: Path) -> None:
    write_session(tmp_path / "coding.jsonl", ["hi"], 1_700_000_000)
    os.mkfifo(tmp_path / "pipe.jsonl")
    assert [c.path.name for c in find_files(tmp_path)] == ["coding.jsonl"]  # never opens a FIFO
    assert names(tmp_path) == ["coding.jsonl"]


def test_a_project_hash_is_shortened() -> None:
    assert short_project("a" * 64) == "a" * 11 + "…"
    assert short_project("myproj") == "myproj"


def test_what_is_not_listed_is_counted_by_why(chats: Path) -> None:
    write_session(chats / "session-real.jsonl", ["a prompt"], 1_700_000_000, session_id="same",
                  updated="2026-01-02T00:00:00Z")
    write_session(chats / "session-copy.jsonl", ["a prompt"], 1_700_000_000, session_id="same",
                  updated="2026-01-01T00:00:00Z")
    write_lines(chats / "session-warning.jsonl", [
        {"sessionId": "w", "projectHash": "h", "startTime": "2026-01-01T00:00:00Z", "kind": "main"},
        {"id": "w1", "timestamp": "t", "type": "warning", "content": "rate limited"},
    ])
    write_session(chats / "stray" / "session-y.jsonl", ["not a subagent"], 1_700_000_000)
    result = catalog()
    assert names() == ["session-real.jsonl"]
    assert result.skipped_words() == "1 with no conversation, 1 older copy, 1 side file"
    assert result.hidden == 3


def test_relative_times() -> None:
    from inspector.catalog.listing import relative_time

    now = 1_800_000_000.0
    assert [relative_time(now - ago, now) for ago in (5, 300, 7200, 90_000, 5 * 86_400)] == [
        "just now", "5 min ago", "2 h ago", "yesterday", "5 days ago"]
    assert relative_time(now - 400 * 86_400, now)[:2] == "20"  # a date, past a month


def test_the_project_is_named_by_its_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import hashlib

    from inspector.catalog.projects import folder_label, read_registry

    monkeypatch.setenv("GEMINI_CLI_HOME", str(tmp_path))
    old = "/home/ana/old-shop"
    registry = {"projects": {"/home/ana/payments-service": "payments-service-1", old: "old-shop"}}
    write_lines(tmp_path / ".gemini" / "projects.json", [registry])
    names_ = read_registry()
    temp = tmp_path / ".gemini" / "tmp"
    assert names_.path_of(temp / "payments-service-1") == "/home/ana/payments-service"
    hashed = hashlib.sha256(old.encode()).hexdigest()  # the folder older versions used
    assert names_.path_of(temp / hashed) == old
    marked = temp / "renamed"
    marked.mkdir(parents=True)
    (marked / ".project_root").write_text("/srv/api\n", encoding="utf-8")
    assert names_.path_of(marked) == "/srv/api"
    assert folder_label(names_.path_of(temp / "unknown"), ("/work/recorded-dir",), "unknown") == "recorded-dir"
    assert folder_label(None, (), "f" * 64) == "f" * 64
    (tmp_path / ".gemini" / "projects.json").write_text("{not json", encoding="utf-8")
    assert read_registry().path_of(temp / "payments-service-1") is None  # a broken registry: no names, no error


def test_the_resume_command_is_gemini_cli_s() -> None:
    from inspector.catalog.projects import resume_command

    assert resume_command("9d41b7e2-55c0", "/home/ana/my shop") == \
        "cd '/home/ana/my shop' && gemini --resume 9d41b7e2-55c0"
    assert resume_command("abc", None) == "gemini --resume abc"
    assert resume_command(None, "/x") is None


def test_delete_moves_aside_and_puts_back(tmp_path: Path) -> None:
    from inspector.catalog.trash import TrashError, move_aside, put_back

    chats = tmp_path / "chats"
    session = chats / "session-a.jsonl"
    write_session(session, ["hello"], 1_700_000_000, session_id="abc")
    session.chmod(0o640)
    before = session.read_bytes()
    kids = chats / "abc"
    write_session(kids / "child.jsonl", ["sub"], 1_700_000_000, kind="subagent")
    done = move_aside(session, kids)
    assert not session.exists() and not kids.exists()
    assert [m.aside.parent for m in done.moves] == [chats / ".session-inspector" / "deleted"] * 2
    assert names(chats) == []  # the deleted folder is never listed
    put_back(done)
    assert session.read_bytes() == before and (session.stat().st_mode & 0o777) == 0o640
    assert (kids / "child.jsonl").is_file()
    again = move_aside(session)
    write_session(session, ["a new one with the same name"], 1_700_000_000)
    with pytest.raises(TrashError, match="is there now"):
        put_back(again)
    assert again.moves[0].aside.is_file()  # the deleted one stays aside; the new one is untouched
    assert "a new one" in session.read_text()
