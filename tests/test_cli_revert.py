"""The revert, history and compact --apply commands: messages and exit codes."""

from __future__ import annotations

import errno
import json
import os
import shlex
import stat
from pathlib import Path

import pytest

from inspector.cli import main
from inspector.commands.apply import apply_from_cli
from inspector.compaction.compress import CompressionResult, CompressionStatus
from inspector.session import history, load
from inspector.store import apply_history, read_history, store_dir
from tests.test_store import compacted, sample_copy


def _applied(tmp_path: Path, name: str) -> tuple[Path, bytes]:
    path = sample_copy(tmp_path, name)
    original = path.read_bytes()
    session = load(path)
    turns = history(session)
    new, sources = compacted(turns, 2)
    apply_history(session, turns, new, sources)
    return path, original


def _result(session, turns) -> CompressionResult:  # type: ignore[no-untyped-def]
    new, _ = compacted(turns, 2)
    return CompressionResult(
        status=CompressionStatus.COMPRESSED, original_token_count=1000, new_token_count=200, split_point=2,
        kept_from=2, provider="offline", model="gemini-2.5-pro", snapshot="<state_snapshot>\n</state_snapshot>",
        new_history=new,
        source_sha256=session.sha256,
    )


def _one_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1, f"expected one line, got {lines}"
    assert "Traceback" not in err
    return lines[0]


def test_revert_with_nothing_to_undo(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = sample_copy(tmp_path, "legacy-pomodoro.json")
    assert main(["revert", str(path)]) == 2
    assert "nothing to undo" in _one_line(capsys.readouterr().err)


def test_revert_then_again(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path, original = _applied(tmp_path, "legacy-pomodoro.json")
    assert main(["revert", str(path)]) == 0
    assert "restored" in capsys.readouterr().out
    assert path.read_bytes() == original
    assert main(["revert", str(path)]) == 2
    assert "already reverted" in _one_line(capsys.readouterr().err)


def test_revert_with_a_deleted_backup(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path, _ = _applied(tmp_path, "legacy-pomodoro.json")
    applied = path.read_bytes()
    for backup in (store_dir(path) / "backups").iterdir():
        backup.unlink()
    assert main(["revert", str(path)]) == 2
    assert "is missing; the session was not changed" in _one_line(capsys.readouterr().err)
    assert path.read_bytes() == applied


def test_jsonl_revert_needs_no_backup(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A JSONL apply only appended: the original bytes are the file's own start."""
    path, original = _applied(tmp_path, "gemini-cli-0.61-compress.jsonl")
    for backup in (store_dir(path) / "backups").iterdir():
        backup.unlink()
    assert main(["revert", str(path)]) == 0
    assert path.read_bytes() == original


def test_changed_after_apply_refuses_then_force(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path, original = _applied(tmp_path, "checkpoint-rate-limit.json")
    edited = path.read_bytes().replace(b"Got it", b"Got It")
    path.write_bytes(edited)
    assert main(["revert", str(path)]) == 2
    line = _one_line(capsys.readouterr().err)
    assert "changed since the apply" in line and "--force" in line
    assert path.read_bytes() == edited
    assert main(["revert", "--force", str(path)]) == 0
    out = capsys.readouterr().out
    assert path.read_bytes() == original
    copy = Path(out.split("is kept in ")[1].strip())
    assert copy.read_bytes() == edited, "the file as it was is kept, and the message says where"


def test_jsonl_rewritten_by_someone_refuses(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path, original = _applied(tmp_path, "gemini-cli-0.61-compress.jsonl")
    path.write_bytes(b"\n" + path.read_bytes())
    assert main(["revert", str(path)]) == 2
    assert "its start no longer matches" in _one_line(capsys.readouterr().err)
    assert main(["revert", "--force", str(path)]) == 0
    assert path.read_bytes() == original


def test_list_and_history(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path, _ = _applied(tmp_path, "coding-task.jsonl")
    assert main(["revert", "--list", str(path)]) == 0
    listed = capsys.readouterr().out
    entry = read_history(path).entries[0]
    assert entry.id in listed and "applied" in listed
    assert main(["history", "--json", str(path)]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [e["id"] for e in data["entries"]] == [entry.id]
    assert [e["event"] for e in data["events"]] == ["apply", "applied"]
    assert main(["revert", str(path)]) == 0
    capsys.readouterr()
    assert main(["history", str(path)]) == 0
    assert "reverted" in capsys.readouterr().out
    assert main(["revert", "--list", str(path)]) == 0
    assert "nothing to undo" in capsys.readouterr().out


def test_apply_from_cli_prints_what_it_wrote(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = sample_copy(tmp_path, "coding-task.jsonl")
    session = load(path)
    turns = history(session)
    assert apply_from_cli(session, turns, _result(session, turns)) == 0
    out = capsys.readouterr().out
    entry = read_history(path).entries[0]
    assert "tokens (estimate): 1,000 -> 200" in out
    assert entry.backup in out and "session-inspector revert" in out
    assert entry.info.provider == "offline" and entry.info.split_point == 2 and entry.info.status == "COMPRESSED"


def test_the_undo_hint_can_be_pasted_into_a_shell(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A session name with a space (or a quote) is printed quoted, so the printed command runs as shown."""
    folder = tmp_path / "my chats"
    folder.mkdir()
    path = folder / "it's a session.jsonl"
    path.write_bytes(sample_copy(tmp_path, "coding-task.jsonl").read_bytes())
    session = load(path)
    turns = history(session)
    assert apply_from_cli(session, turns, _result(session, turns)) == 0
    [hint] = [line for line in capsys.readouterr().out.splitlines() if line.startswith("undo: ")]
    argv = shlex.split(hint.removeprefix("undo: "))
    assert argv[:2] == ["session-inspector", "revert"] and argv[2:] == [str(path)]
    assert main(argv[1:]) == 0 and not read_history(path).undoable()


def test_apply_from_cli_full_disk(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = sample_copy(tmp_path, "legacy-pomodoro.json")
    original = path.read_bytes()
    session = load(path)
    turns = history(session)

    def full(step: str) -> None:
        if step == "temp-write":
            raise OSError(errno.ENOSPC, "No space left on device")

    code = apply_from_cli(session, turns, _result(session, turns), hook=full)
    assert code == 2
    assert "no space left on device" in _one_line(capsys.readouterr().err)
    assert path.read_bytes() == original


def test_apply_from_cli_stale_preview(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = sample_copy(tmp_path, "gemini-cli-0.61-compress.jsonl")
    session = load(path)
    turns = history(session)
    with path.open("ab") as gemini:
        gemini.write(b'{"$set":{"lastUpdated":"2026-11-22T05:23:30.000Z"}}\n')
    code = apply_from_cli(session, turns, _result(session, turns))
    assert code == 2
    assert "preview is stale" in _one_line(capsys.readouterr().err)


def _folder_is_really_read_only(folder: Path) -> bool:
    probe = folder / ".probe"
    try:
        probe.write_text("x")
    except OSError:
        return True
    probe.unlink()
    return False


def test_read_only_folder(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "chats"
    folder.mkdir()
    path = sample_copy(folder, "legacy-pomodoro.json")
    original = path.read_bytes()
    session = load(path)
    turns = history(session)
    folder.chmod(stat.S_IRUSR | stat.S_IXUSR)
    try:
        if not _folder_is_really_read_only(folder):
            pytest.skip("running as root: chmod does not stop writes (see test_store_folder_blocked)")
        code = apply_from_cli(session, turns, _result(session, turns))
        assert code == 2
        assert "permission denied; nothing was written" in _one_line(capsys.readouterr().err)
        assert path.read_bytes() == original
    finally:
        folder.chmod(stat.S_IRWXU)


def test_store_folder_blocked(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Works as root too: the store folder cannot be made because a file holds its name."""
    path = sample_copy(tmp_path, "legacy-pomodoro.json")
    original = path.read_bytes()
    session = load(path)
    turns = history(session)
    (tmp_path / ".session-inspector").write_text("not a folder")
    code = apply_from_cli(session, turns, _result(session, turns))
    assert code == 2
    line = _one_line(capsys.readouterr().err)
    assert "cannot create" in line and "nothing was written" in line
    assert path.read_bytes() == original
    assert sorted(os.listdir(tmp_path)) == sorted([".session-inspector", path.name])


def _applied_then_resumed(tmp_path: Path, capsys: pytest.CaptureFixture[str], *, drop_one: bool) -> tuple[Path, bytes]:
    """A sample compacted with ``compact --apply``, then resumed by Gemini CLI (``_resumed_lines``);
    (the file, its bytes before the apply)."""
    path = sample_copy(tmp_path, "coding-task.jsonl")
    original = path.read_bytes()
    assert main(["compact", str(path), "--apply", "--force", "--provider", "offline"]) == 0
    capsys.readouterr()
    with path.open("ab") as file:
        file.write(_resumed_lines(path, drop_one=drop_one))
    return path, original


def _resumed_lines(path: Path, *, drop_one: bool) -> bytes:
    """What Gemini CLI 0.61 appends when it resumes the session, then a prompt: its session id, the
    history it read as ``$set.messages`` (a string content written as ``[{"text": ...}]``) with
    ``lastUpdated``; ``drop_one`` leaves the newest message out (a history it rebuilt, not restated)."""
    messages = [dict(m) for m in load(path).messages]
    for message in messages:
        if isinstance(message.get("content"), str):
            message["content"] = [{"text": message["content"]}]
    if drop_one:
        messages = messages[:-1]
    lines = [{"$set": {"sessionId": "resumed-0001"}},
             {"$set": {"messages": messages, "lastUpdated": "2026-11-24T10:00:00.000Z"}},
             {"id": "after-resume", "timestamp": "2026-11-24T10:00:01.000Z", "type": "user",
              "content": [{"text": "go on"}]}]
    return b"".join(json.dumps(line).encode() + b"\n" for line in lines)


def test_revert_after_gemini_cli_resumed_the_compacted_session(tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """Every resume appends the history Gemini CLI read as ``$set.messages``: restating the
    compacted history, it rebuilds nothing. Revert leaves it out (kept, it would set the compacted
    history again) with the fields it set besides, and keeps what was recorded after it."""
    path, original = _applied_then_resumed(tmp_path, capsys, drop_one=False)
    assert main(["revert", str(path)]) == 0, capsys.readouterr().err
    capsys.readouterr()
    tail = path.read_bytes()[len(original):]
    assert path.read_bytes().startswith(original)
    assert [json.loads(line) for line in tail.splitlines()] == [
        {"$set": {"sessionId": "resumed-0001"}}, {"$set": {"lastUpdated": "2026-11-24T10:00:00.000Z"}},
        {"id": "after-resume", "timestamp": "2026-11-24T10:00:01.000Z", "type": "user",
         "content": [{"text": "go on"}]}]
    turns = history(load(path))
    assert len(turns) == len(history(load_bytes(tmp_path, original))) + 1  # the whole history, then the prompt


def test_revert_after_a_resume_that_rebuilt_the_history(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A ``$set.messages`` that is not the history the file held (a rewind, an older history) would
    rebuild it from the compacted one: revert refuses and says why, and ``--force`` restores the
    file as it was before the apply."""
    path, original = _applied_then_resumed(tmp_path, capsys, drop_one=True)
    before = path.read_bytes()
    assert main(["revert", str(path)]) == 2
    line = _one_line(capsys.readouterr().err)
    assert "$set.messages" in line and "resumes" in line and "--force" in line
    assert path.read_bytes() == before  # nothing written
    assert main(["revert", "--force", str(path)]) == 0
    capsys.readouterr()
    assert path.read_bytes() == original
    assert any(p.name.startswith("replaced-") and p.read_bytes() == before
               for p in store_dir(path).rglob("*.bak"))  # what Gemini CLI wrote is kept aside


def load_bytes(folder: Path, data: bytes):  # type: ignore[no-untyped-def]
    copy = folder / "as-it-was.jsonl"
    copy.write_bytes(data)
    return load(copy)
