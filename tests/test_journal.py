"""The journal survives a short write and a crash at any point, or says clearly that it is damaged."""

from __future__ import annotations

import errno
import hashlib
import json
import shutil
from pathlib import Path

import pytest

from inspector.analysis import analyze
from inspector.session import history, load
from inspector.store import StoreError, apply_history, read_history, revert, store_dir, undoable
from inspector.store.journal import JOURNAL_NAME
from tests.test_store import compacted, sample_copy


class Crash(Exception):
    """Stands for the process dying at that point."""




def _apply(path: Path, **kwargs: object) -> None:
    session = load(path)
    turns = history(session)
    split = analyze(session).split_point if session.format == "jsonl" else 2
    split = min(split, len(turns) - 1)
    new, sources = compacted(turns, split)
    apply_history(session, turns, new, sources, **kwargs)  # type: ignore[arg-type]


def _journal(path: Path) -> Path:
    return store_dir(path) / JOURNAL_NAME


def _applied_copy(tmp_path: Path, name: str) -> tuple[Path, bytes, bytes]:
    """A copy of the sample ``name`` with one compaction applied: its path, its bytes before, and after."""
    path = sample_copy(tmp_path, name)
    original = path.read_bytes()
    _apply(path)
    return path, original, path.read_bytes()


@pytest.mark.parametrize("name", ["coding-task.jsonl", "legacy-pomodoro.json"])
def test_a_torn_last_line_is_cut_off_before_the_next_apply(name: str, tmp_path: Path) -> None:
    path, original, once = _applied_copy(tmp_path, name)
    # a write cut short by a full disk or a crash: half an event, no newline
    with _journal(path).open("ab") as handle:
        handle.write(b'{"event":"applied","id":"0001-')
    assert [e.state for e in read_history(path).entries] == ["applied"]
    _apply(path)
    entries = read_history(path).entries
    assert [e.state for e in entries] == ["applied", "applied"], "the second apply was glued onto the torn line"
    assert len(undoable(path)) == 2
    revert(path)
    assert path.read_bytes() == once
    revert(path)
    assert path.read_bytes() == original
    assert undoable(path) == []


def test_a_short_write_then_full_disk_on_the_journal_leaves_no_fragment(tmp_path: Path) -> None:
    path = sample_copy(tmp_path, "coding-task.jsonl")
    original = path.read_bytes()
    calls = {"n": 0}

    def hook(step: str) -> int | None:
        if step == "journal-write":
            calls["n"] += 1
            if calls["n"] == 1:
                return 17  # the disk takes 17 bytes of the line...
            raise OSError(errno.ENOSPC, "No space left on device")  # ...then is full
        return None

    with pytest.raises(StoreError, match="no space left on device"):
        _apply(path, hook=hook)
    assert path.read_bytes() == original
    journal = _journal(path).read_bytes()
    assert journal == b"" or journal.endswith(b"\n"), "a fragment of the event was left behind"
    assert list((store_dir(path) / "backups").iterdir()) == [], "the backup of an apply that never was is left"
    _apply(path)
    assert [e.state for e in read_history(path).entries] == ["applied"]
    revert(path)
    assert path.read_bytes() == original


@pytest.mark.parametrize("name", ["coding-task.jsonl", "legacy-pomodoro.json"])
def test_a_full_disk_on_the_journal_before_a_revert_changes_nothing(name: str, tmp_path: Path) -> None:
    path, original, applied = _applied_copy(tmp_path, name)
    journal = _journal(path).read_bytes()
    calls = {"n": 0}

    def full(step: str) -> int | None:
        if step != "journal-write":
            return None
        calls["n"] += 1
        if calls["n"] == 1:
            return 9  # a few bytes of the "reverting" line land...
        raise OSError(errno.ENOSPC, "No space left on device")  # ...then the disk is full

    with pytest.raises(StoreError, match="cannot write the journal: no space left on device; the session was not"):
        revert(path, hook=full)
    assert path.read_bytes() == applied and _journal(path).read_bytes() == journal
    assert len(undoable(path)) == 1
    revert(path)
    assert path.read_bytes() == original


REVERT_STEPS = ("journal-write", "temp-created", "temp-written", "checked", "renamed")


@pytest.mark.parametrize("step", REVERT_STEPS)
@pytest.mark.parametrize("name", ["coding-task.jsonl", "legacy-pomodoro.json"])
def test_a_crash_during_revert_leaves_the_journal_telling_the_truth(name: str, step: str, tmp_path: Path) -> None:
    path, original, applied = _applied_copy(tmp_path, name)

    def crash(now: str) -> None:
        if now == step:
            raise Crash(step)

    with pytest.raises(Crash):
        revert(path, hook=crash)
    restored = path.read_bytes() == original
    assert restored or path.read_bytes() == applied
    assert restored == (step == "renamed")
    # the journal agrees with the file, whichever it is
    assert (undoable(path) == []) == restored
    state = read_history(path).entries[-1].state
    assert state == ("reverted" if restored else "applied")
    if path.suffix == ".jsonl":
        # Gemini CLI keeps recording; nothing it writes is dropped later
        line = b'{"$set":{"lastUpdated":"2099-01-01T00:00:00.000Z"}}\n'
        with path.open("ab") as gemini:
            gemini.write(line)
        original += line
    if restored:
        with pytest.raises(StoreError, match="already reverted"):
            revert(path)
    else:
        revert(path)  # no --force needed
    assert path.read_bytes() == original


@pytest.mark.parametrize("damage", [
    ("regions", "not a list"),
    ("regions", [{"offset": "here", "length": 1, "sha256": "x"}]),
    ("carried_lines", {"many": True}),
])
def test_a_damaged_journal_is_refused_with_the_line_and_what_is_wrong(
    damage: tuple[str, object], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from inspector.cli import main

    path = sample_copy(tmp_path, "coding-task.jsonl")
    _apply(path)
    lines = _journal(path).read_bytes().splitlines()
    applied = json.loads(lines[1])
    key, value = damage
    applied[key] = value
    lines[1] = json.dumps(applied).encode()
    _journal(path).write_bytes(b"\n".join(lines) + b"\n")
    for argv in (["history", str(path)], ["revert", str(path)], ["revert", "--list", str(path)]):
        assert main(argv) == 2, argv
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and "line 2 is damaged" in err[0] and key in err[0], err
        assert "Traceback" not in err[0]


def test_a_damaged_line_in_the_middle_is_never_skipped_silently(tmp_path: Path) -> None:
    path = sample_copy(tmp_path, "coding-task.jsonl")
    _apply(path)
    data = _journal(path).read_bytes()
    _journal(path).write_bytes(b'{"event":"apply","id":"00\n' + data)
    with pytest.raises(StoreError, match="line 1 is damaged"):
        read_history(path)
    with pytest.raises(StoreError, match="line 1 is damaged"):
        _apply(path)


async def test_the_app_says_the_journal_is_damaged(tmp_path: Path) -> None:
    from inspector.tui.app import InspectorApp
    from inspector.tui.screens.timeline import TimelineScreen
    from tests.test_tui_compaction import SIZE, settle

    path = sample_copy(tmp_path, "coding-task.jsonl")
    _apply(path)
    _journal(path).write_bytes(b'{"event":"apply","id":"00\n' + _journal(path).read_bytes())
    app = InspectorApp(path, threshold=0.5, live=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        view = app.screen
        for key in ("t", "u"):  # each says so itself (the same words replace an earlier toast: cleared first)
            app.clear_notifications()
            await pilot.press(key)
            await settle(pilot)
            assert app.screen is view and not isinstance(app.screen, TimelineScreen)
            damaged = [n for n in app._notifications if "line 1 is damaged" in n.message]
            assert len(damaged) == 1, (key, [n.message for n in app._notifications])


def _replayed(events: list[str], restored: bool) -> list[str]:
    """The states a journal of these events means, worked out by hand (``restored``: the file is back to
    what it was before the apply a last unfinished ``reverting`` was undoing)."""
    states: list[str] = []
    for index, kind in enumerate(events):
        if kind == "apply":
            states.append("incomplete")
        elif kind == "applied":
            states[-1] = "applied"
        elif kind == "revert" or (kind == "reverting" and index == len(events) - 1 and restored):
            states[-1] = "reverted"
    return states


@pytest.mark.parametrize("name", ["coding-task.jsonl", "legacy-pomodoro.json"])
def test_a_journal_cut_at_every_byte_reads_as_the_events_before_the_cut(name: str, tmp_path: Path) -> None:
    """A crash while any journal line is written, at any byte of it: the journal is the lines before it
    and part of that line, the session as it was at that moment.  At every byte: it reads (never refused,
    never a traceback) as exactly the whole events before the cut, and something can be undone whenever
    the file is not the original.  From sampled cuts of each line (every cut inside a line reads the
    same, as the first check shows), undo brings the original back and the next apply and revert work."""
    path = sample_copy(tmp_path / "live", name)
    original = path.read_bytes()
    _apply(path)
    first = path.read_bytes()
    first_backups = {p.name: p.read_bytes() for p in (store_dir(path) / "backups").iterdir()}
    revert(path)
    _apply(path)
    second = path.read_bytes()
    # (a revert removes its apply's backup once done: while its lines were written, it was there)
    for name, data in first_backups.items():
        (store_dir(path) / "backups" / name).write_bytes(data)
    lines = _journal(path).read_bytes().splitlines(keepends=True)
    events = [json.loads(line)["event"] for line in lines]
    assert events == ["apply", "applied", "reverting", "revert", "apply", "applied"]
    during = [original, first, first, original, original, second]  # the file while each line was written
    pristine = tmp_path / "pristine"
    shutil.copytree(store_dir(path).parent, pristine)
    cuts = 0
    for index, line in enumerate(lines):
        for cut in range(len(line) + 1):
            journal = b"".join(lines[:index]) + line[:cut]
            _journal(path).write_bytes(journal)
            path.write_bytes(during[index])
            whole = index + (cut >= len(line) - 1)  # the last line counts once its JSON is complete
            expected = _replayed(events[:whole], during[index] == original)
            where = f"{events[index]} line cut after {cut} of {len(line)} bytes"
            read = read_history(path)
            assert [e.state for e in read.entries] == expected, where
            pending = read.undoable()
            if during[index] != original:
                assert pending, f"{where}: the file is compacted and nothing can be undone"
            else:  # only an apply that never reached the file (its revert finds nothing to take out)
                assert all(e.state == "incomplete" for e in pending), where
            cuts += 1
            if cut in (0, 1, len(line) // 2, len(line) - 2, len(line) - 1, len(line)):
                while undoable(path):
                    revert(path)
                assert path.read_bytes() == original, where
                _apply(path)
                revert(path)
                assert path.read_bytes() == original, where
                assert read_history(path).entries[-1].state == "reverted", where
                shutil.rmtree(store_dir(path).parent)
                shutil.copytree(pristine, store_dir(path).parent)
    assert cuts == sum(len(line) + 1 for line in lines)


@pytest.mark.parametrize("damage", [
    ("outputs_new", "victim"),
    ("output_files", "victim"),
    ("backup", "../../victim"),
])
def test_a_journal_edited_to_name_another_file_never_has_it_removed(
    damage: tuple[str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """revert removes the outputs its apply names and reads the backup it names: a journal edited to
    name any other file is a damaged line, and that file stays."""
    from inspector.cli import main

    path = sample_copy(tmp_path, "coding-task.jsonl")
    _apply(path)
    victim = tmp_path / "victim"
    victim.write_text("keep me", encoding="utf-8")
    lines = _journal(path).read_bytes().splitlines()
    applied = json.loads(lines[0])
    key, value = damage
    target = str(victim) if value == "victim" else value
    applied[key] = [target] if key.startswith("output") else target
    if key == "outputs_new":
        applied["outputs_new_sha256"] = [hashlib.sha256(victim.read_bytes()).hexdigest()]
    lines[0] = json.dumps(applied).encode()
    _journal(path).write_bytes(b"\n".join(lines) + b"\n")
    for argv in (["revert", str(path)], ["revert", "--force", str(path)], ["history", str(path)]):
        assert main(argv) == 2, argv
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and "line 1 is damaged" in err[0] and key.split("_")[0] in err[0], err
    assert victim.read_text(encoding="utf-8") == "keep me"


@pytest.mark.parametrize("kind", ["fifo", "link to /dev/zero", "folder"])
@pytest.mark.parametrize("which", ["journal", "backup"])
def test_a_journal_or_backup_that_is_not_a_file_is_one_line_never_a_wait(
    which: str, kind: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import os

    from inspector.cli import main

    path = sample_copy(tmp_path, "legacy-pomodoro.json")  # its revert reads the backup
    _apply(path)
    applied = path.read_bytes()
    target = _journal(path) if which == "journal" else next((store_dir(path) / "backups").iterdir())
    target.unlink()
    if kind == "fifo":
        os.mkfifo(target)
    elif kind == "folder":
        target.mkdir()
    else:
        target.symlink_to("/dev/zero")
    argvs = [["revert", str(path)], ["history", str(path)]] if which == "journal" else [["revert", str(path)]]
    for argv in argvs:
        assert main(argv) == 2, argv  # (a wait on the pipe would hang the test)
        err = capsys.readouterr().err.strip().splitlines()
        # a revert refuses a linked journal before reading it, naming the link (files.refuse_linked_store)
        said = (f"{target} is a symbolic link" if argv[0] == "revert" and which == "journal" and kind.startswith("link")
                else f"cannot read the {which}")
        assert len(err) == 1 and said in err[0] and "Traceback" not in err[0], err
    assert path.read_bytes() == applied
