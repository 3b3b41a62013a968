"""A write that fails at any step leaves the old file or the new one, whole."""

from __future__ import annotations

import errno
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from inspector.analysis import analyze
from inspector.session import history, load
from inspector.store import JournalEntry, StoreError, apply_history, read_history, revert, store_dir
from inspector.store.files import TEMP_MARK, WriteHook, append_bytes, atomic_write
from tests.test_store import compacted, same, sample_copy

STEPS = ("temp-created", "temp-write", "temp-partial", "temp-written", "renamed")


class Crash(Exception):
    """Stands for the process dying at that point."""


def crash_at(step: str, exc: BaseException | None = None):
    def hook(now: str) -> None:
        if now == step:
            raise exc or Crash(step)
    return hook




def _temps(folder: Path) -> list[Path]:
    return [p for p in folder.rglob("*") if TEMP_MARK in p.name]


@pytest.mark.parametrize("step", STEPS)
def test_atomic_write_is_all_or_nothing(step: str, tmp_path: Path) -> None:
    target = tmp_path / "f.json"
    target.write_bytes(b"old " * 1000)
    new = b"new " * 3000
    with pytest.raises(Crash):
        atomic_write(target, new, hook=crash_at(step))
    assert target.read_bytes() in (b"old " * 1000, new)
    assert target.read_bytes() == (new if step == "renamed" else b"old " * 1000)
    assert _temps(tmp_path) == []


@pytest.mark.parametrize("step", STEPS)
@pytest.mark.parametrize("name", ["legacy-pomodoro.json", "checkpoint-rate-limit.json"])
def test_apply_rewrite_crash_at_each_step(name: str, step: str, tmp_path: Path) -> None:
    path = sample_copy(tmp_path, name)
    original = path.read_bytes()
    session = load(path)
    turns = history(session)
    new, sources = compacted(turns, 2)
    # The backup is written first through the same function: let it through.
    backup_done = {"yes": False}

    def hook(now: str) -> None:
        if backup_done["yes"] and now == step:
            raise Crash(step)
        if now == "renamed":
            backup_done["yes"] = True

    with pytest.raises((Crash, StoreError)):
        apply_history(session, turns, new, sources, hook=hook)
    data = path.read_bytes()
    if step == "renamed":
        assert same([t.content for t in history(load(path))], new)
    else:
        assert data == original
    assert _temps(tmp_path) == []
    # The journal knows what happened; revert puts back the original either way.
    # (a crash records nothing more; an OSError would have been journalled "failed").
    assert read_history(path).entries[-1].state == "incomplete"
    [result] = revert(path)
    assert path.read_bytes() == original
    assert (result.note == "the apply had not changed the file") == (step != "renamed")


def test_jsonl_crash_after_append_is_still_revertible(tmp_path: Path) -> None:
    path = sample_copy(tmp_path, "coding-task.jsonl")
    original = path.read_bytes()
    session = load(path)
    turns = history(session)
    new, sources = compacted(turns, analyze(session).split_point)
    with pytest.raises(Crash):
        apply_history(session, turns, new, sources, hook=crash_at("appended"))  # on disk, not yet journalled
    assert same([t.content for t in history(load(path))], new)
    with path.open("ab") as gemini:  # Gemini CLI keeps recording
        gemini.write(b'{"$set":{"lastUpdated":"2026-01-01T00:00:00.000Z"}}\n')
    assert read_history(path).entries[-1].state == "incomplete"
    [result] = revert(path)
    assert path.read_bytes() == original + b'{"$set":{"lastUpdated":"2026-01-01T00:00:00.000Z"}}\n'
    assert result.kept_bytes > 0


def test_full_disk_while_rewriting(tmp_path: Path) -> None:
    path = sample_copy(tmp_path, "legacy-pomodoro.json")
    original = path.read_bytes()
    session = load(path)
    turns = history(session)
    new, sources = compacted(turns, 2)
    calls = {"n": 0}

    def hook(step: str) -> None:
        if step == "temp-write":
            calls["n"] += 1
            if calls["n"] > 2:  # the backup's two writes pass, the session's fail
                raise OSError(errno.ENOSPC, "No space left on device")

    with pytest.raises(StoreError, match="no space left on device; the session was left as it was"):
        apply_history(session, turns, new, sources, hook=hook)
    assert path.read_bytes() == original
    assert read_history(path).entries[-1].state == "failed"
    assert _temps(tmp_path) == []


def test_full_disk_on_the_backup_writes_nothing(tmp_path: Path) -> None:
    path = sample_copy(tmp_path, "coding-task.jsonl")
    original = path.read_bytes()
    session = load(path)
    turns = history(session)
    new, sources = compacted(turns, analyze(session).split_point)
    with pytest.raises(StoreError, match="cannot write the backup: no space left on device; nothing was written"):
        apply_history(session, turns, new, sources, hook=crash_at("temp-write", OSError(errno.ENOSPC, "full")))
    assert path.read_bytes() == original
    assert list((store_dir(path) / "backups").iterdir()) == []
    assert read_history(path).entries == []


def test_short_write_then_full_disk_leaves_the_jsonl_as_it_was(tmp_path: Path) -> None:
    """The recording is written whole beside itself and swapped in: a write the OS cuts short,
    then a full disk, leave it byte for byte (no half line for Gemini CLI's next line to join)."""
    path = sample_copy(tmp_path, "coding-task.jsonl")
    original = path.read_bytes()
    session = load(path)
    turns = history(session)
    new, sources = compacted(turns, analyze(session).split_point)
    calls = {"n": 0}

    def hook(step: str) -> int | None:
        if step == "temp-write":
            calls["n"] += 1
            if calls["n"] <= 2:  # the backup's writes pass
                return None
            if calls["n"] == 3:
                return 100  # the OS takes only 100 bytes of the session's...
            raise OSError(errno.ENOSPC, "No space left on device")  # ...then the disk is full
        return None

    with pytest.raises(StoreError, match="no space left on device"):
        apply_history(session, turns, new, sources, hook=hook)
    assert calls["n"] == 4
    assert path.read_bytes() == original
    assert _temps(tmp_path) == []


def test_append_failure_after_another_writer_keeps_their_line_whole(tmp_path: Path) -> None:
    """If someone appended after our short write, our fragment is ended so their line stays whole."""
    path = tmp_path / "s.jsonl"
    path.write_bytes(b'{"a":1}\n')
    calls = {"n": 0}

    def hook(step: str) -> int | None:
        if step == "append-write":
            calls["n"] += 1
            if calls["n"] == 1:
                return 5
            with path.open("ab") as other:
                other.write(b'{"theirs":2}\n')
            raise OSError(errno.ENOSPC, "full")
        return None

    with pytest.raises(OSError):
        append_bytes(path, b'{"ours":"a long line"}\n', hook=hook)
    lines = path.read_bytes().split(b"\n")
    assert lines[0] == b'{"a":1}' and b'{"theirs":2}' in lines
    assert path.read_bytes().endswith(b"\n")


@pytest.mark.parametrize("step", STEPS)
def test_revert_crash_leaves_applied_or_original(step: str, tmp_path: Path) -> None:
    path = sample_copy(tmp_path, "legacy-pomodoro.json")
    original = path.read_bytes()
    session = load(path)
    turns = history(session)
    new, sources = compacted(turns, 2)
    apply_history(session, turns, new, sources)
    applied = path.read_bytes()
    with pytest.raises((Crash, StoreError)):
        revert(path, hook=crash_at(step))
    assert path.read_bytes() == (original if step == "renamed" else applied)
    assert _temps(tmp_path) == []
    if step != "renamed":
        revert(path)
        assert path.read_bytes() == original


def test_revert_with_the_file_gone(tmp_path: Path) -> None:
    path = sample_copy(tmp_path, "legacy-pomodoro.json")
    session = load(path)
    turns = history(session)
    new, sources = compacted(turns, 2)
    apply_history(session, turns, new, sources)
    os.unlink(path)
    with pytest.raises(StoreError, match="the session file is gone"):
        revert(path)


@pytest.mark.parametrize("name", ["legacy-pomodoro.json", "coding-task.jsonl"])
def test_a_folder_flush_that_fails_after_the_swap_is_no_failure_of_the_apply(
        name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The disk reports an I/O error when the folder is flushed after the swap (injected): the new
    file is in place, so the apply says it applied, keeps its backup, and its revert works."""
    from inspector.store import baseline

    path = sample_copy(tmp_path, name)
    original = path.read_bytes()

    def failing_flush(folder: Path) -> None:
        raise OSError(errno.EIO, "Input/output error")

    monkeypatch.setattr(baseline, "fsync_dir", failing_flush)
    session = load(path)
    turns = history(session)
    new, sources = compacted(turns, 2)
    entry = apply_history(session, turns, new, sources)
    assert entry.state == "applied" and path.read_bytes() != original
    assert [e.state for e in read_history(path).entries] == ["applied"]
    monkeypatch.undo()
    revert(path)
    assert path.read_bytes() == original


THEIRS = b'{"id":"theirs-1","type":"info","content":"a line Gemini CLI wrote during the swap"}\n'
AFTER = b'{"id":"theirs-2","type":"info","content":"a line Gemini CLI wrote to the new file"}\n'


def _compaction_of_a_copy(tmp_path: Path) -> tuple[Path, bytes, Callable[[WriteHook | None], JournalEntry]]:
    """A copy of a JSONL sample, its bytes, and the apply of a compaction of it (given a hook)."""
    path = sample_copy(tmp_path, "coding-task.jsonl")
    session = load(path)
    turns = history(session)
    new, sources = compacted(turns, 2)
    return path, path.read_bytes(), lambda hook: apply_history(session, turns, new, sources, hook=hook)


def _writer_during_the_swap(path: Path, *, also_to_the_new_file: bool) -> tuple[WriteHook, list[str]]:
    """A hook that plays Gemini CLI appending a line to the old file while it is swapped (through a
    descriptor it opened before the swap), then a full disk on the copy of that line. With
    ``also_to_the_new_file`` it has appended a second line, by name, to the new file first."""
    state: dict[str, object] = {"fd": None}
    steps: list[str] = []

    def hook(step: str) -> None:
        steps.append(step)
        if step == "checked":
            state["fd"] = os.open(path, os.O_WRONLY | os.O_APPEND)
        elif step == "renamed" and isinstance(state["fd"], int):  # the session's swap (not the backup's)
            os.write(state["fd"], THEIRS)
            os.close(state["fd"])
            state["fd"] = None
        elif step == "append-write" and "checked" in steps:
            if also_to_the_new_file:
                with path.open("ab") as other:
                    other.write(AFTER)
            raise OSError(errno.ENOSPC, "No space left on device")

    return hook, steps


def test_a_line_written_during_the_swap_that_cannot_be_copied_undoes_the_apply(tmp_path: Path) -> None:
    """The disk fills as the line another writer appended to the old file during the swap is copied
    to the new one: the swap is undone, so the file is exactly what that writer made of it, and the
    apply says so, journals a failure and keeps no backup."""
    path, original, apply = _compaction_of_a_copy(tmp_path)
    hook, steps = _writer_during_the_swap(path, also_to_the_new_file=False)
    with pytest.raises(StoreError, match="swap was undone and the session left as that program wrote it"):
        apply(hook)
    assert "checked" in steps
    assert path.read_bytes() == original + THEIRS
    assert [e.state for e in read_history(path).entries] == ["failed"]
    assert list((store_dir(path) / "backups").iterdir()) == []
    assert _temps(tmp_path) == []


def test_a_swap_that_cannot_be_undone_stays_applied_and_says_what_was_lost(tmp_path: Path) -> None:
    """The same full disk, but the writer has already appended to the new file: undoing the swap
    would lose that line instead, so the apply stands (journalled, revertible) and both faces'
    notes say how many bytes of the other line could not be copied, and where they are kept: the
    next revert carries them into the session before it undoes the apply, and says so."""
    from inspector.commands.apply import describe_entry

    path, original, apply = _compaction_of_a_copy(tmp_path)
    hook, _ = _writer_during_the_swap(path, also_to_the_new_file=True)
    entry = apply(hook)
    assert entry.state == "applied" and entry.lost_bytes == len(THEIRS)
    assert path.read_bytes().endswith(AFTER) and THEIRS not in path.read_bytes()
    journalled = read_history(path).entries[-1]
    assert (journalled.state, journalled.lost_bytes) == ("applied", len(THEIRS))
    said = "\n".join(describe_entry(entry, path))
    assert f"{len(THEIRS)} bytes another writer appended during the swap could not be copied" in said
    assert "(no space left on device)" in said
    assert "the next apply or revert carries them" in said
    [result] = revert(path)
    assert path.read_bytes() == original + AFTER + THEIRS
    assert any("appended to it now" in line for line in result.housekeeping), result.housekeeping


def test_a_revert_whose_catch_up_fails_is_undone_too(tmp_path: Path) -> None:
    path, _, apply = _compaction_of_a_copy(tmp_path)
    apply(None)
    applied = path.read_bytes()
    hook, steps = _writer_during_the_swap(path, also_to_the_new_file=False)
    with pytest.raises(StoreError, match="swap was undone"):
        revert(path, hook=hook)
    assert "checked" in steps
    assert path.read_bytes() == applied + THEIRS
    assert [e.state for e in read_history(path).entries] == ["applied"]
    revert(path)
    assert THEIRS in path.read_bytes()
