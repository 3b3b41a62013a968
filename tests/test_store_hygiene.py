"""The store's own files, owners and modes, and what a killed or reverted apply leaves behind."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from inspector.cli import main
from inspector.session import history, load
from inspector.store import StoreError, apply_history, read_history, revert, store_dir
from inspector.store.files import TEMP_MARK
from tests.test_store import compacted, copy_session, sample_copy

REPO = Path(__file__).resolve().parents[1]




def _apply(path: Path) -> None:
    session = load(path)
    turns = history(session)
    new, sources = compacted(turns, 2)
    apply_history(session, turns, new, sources)


def test_a_backup_is_refused_as_a_session(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = sample_copy(tmp_path, "legacy-pomodoro.json")
    _apply(path)
    [backup] = (store_dir(path) / "backups").iterdir()
    before = backup.read_bytes()
    assert main(["compact", str(backup), "--provider", "offline", "--force", "--apply"]) == 2
    out, err = capsys.readouterr()
    assert "one of session-inspector's own files" in err and len(err.splitlines()) == 1
    assert out == "", "refused before the compaction ran (nothing is sent to a summariser)"
    assert backup.read_bytes() == before
    assert not (backup.parent / ".session-inspector").exists(), "a store was nested inside the store"
    revert(path)  # the outer revert still works


def test_store_files_never_look_like_sessions_to_gemini_cli(tmp_path: Path) -> None:
    """Gemini CLI lists chats/ with a plain readdir: regular files named session-*.json(l) or *.json(l)."""
    chats = tmp_path / "chats"
    chats.mkdir()
    path = copy_session(sample_copy(tmp_path, "legacy-pomodoro.json"), chats)
    path = path.rename(chats / "session-2025-10-21T20-04-0b23371a.json")
    _apply(path)
    revert(path)
    _apply(path)
    listed = sorted(p.name for p in chats.iterdir() if p.is_file() and p.name.endswith((".json", ".jsonl")))
    assert listed == [path.name]


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to give the file to another user")
def test_an_apply_as_root_keeps_owner_group_and_mode(tmp_path: Path) -> None:
    path = sample_copy(tmp_path, "legacy-pomodoro.json")
    os.chown(path, 65534, 65534)
    os.chmod(path, 0o640)
    _apply(path)
    info = os.stat(path)
    assert (info.st_uid, info.st_gid, stat.S_IMODE(info.st_mode)) == (65534, 65534, 0o640)
    # the store is the owner's now: root does not act on it (the owner undoes it) ...
    with pytest.raises(StoreError, match="root does not act on a store another user can change"):
        revert(path)
    # ... until root takes it back on purpose
    for root, folders, names in os.walk(store_dir(path).parent):
        for name in (*folders, *names, ""):
            os.chown(Path(root) / name, 0, 0)
    revert(path)
    info = os.stat(path)
    assert (info.st_uid, info.st_gid, stat.S_IMODE(info.st_mode)) == (65534, 65534, 0o640)


@pytest.mark.parametrize("name", ["legacy-pomodoro.json", "coding-task.jsonl"])
def test_a_read_only_file_is_refused(name: str, tmp_path: Path) -> None:
    path = sample_copy(tmp_path, name)
    original = path.read_bytes()
    os.chmod(path, 0o444)
    with pytest.raises(StoreError, match="read-only"):
        _apply(path)
    assert path.read_bytes() == original
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o444
    assert not store_dir(path).parent.exists(), "a refused apply leaves no trace, not even the store's folder"


def test_leftovers_of_a_killed_apply_are_cleaned_next_time(tmp_path: Path) -> None:
    path = sample_copy(tmp_path, "legacy-pomodoro.json")
    # a process that is gone: its pid is free once it has been waited for
    done = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    dead = int(done.stdout)
    folder = store_dir(path)
    (folder / "backups").mkdir(parents=True)
    temp = path.with_name(f".{path.name}{TEMP_MARK}{dead}-abcd1234")
    temp.write_bytes(b"x" * 1000)
    mine = path.with_name(f".{path.name}{TEMP_MARK}{os.getpid()}-abcd1234")  # a live process's: kept
    mine.write_bytes(b"y")
    orphan = folder / "backups" / "0001-20260101T000000-abcdef.bak"
    orphan.write_bytes(b"an apply killed before it journalled")
    _apply(path)
    assert not temp.exists() and not orphan.exists()
    assert mine.exists()
    [entry] = read_history(path).entries
    assert [p.name for p in (folder / "backups").iterdir()] == [entry.backup]


@pytest.mark.parametrize("command", [["history"], ["revert"], ["revert", "--list"]])
def test_what_is_not_a_session_file_is_refused_as_the_reader_refuses_it(
    command: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A missing path, a folder, a FIFO, a device or a symlink loop: exit 2 and the very line ``analyze``
    prints (one rule, the reader's), never "nothing to undo", a hang or a traceback."""
    fifo = tmp_path / "pipe.jsonl"
    os.mkfifo(fifo)
    loop = tmp_path / "loop.jsonl"
    loop.symlink_to(loop)
    for target in (tmp_path / "missing.jsonl", tmp_path, fifo, Path("/dev/zero"), loop):
        assert main(["analyze", str(target)]) == 2
        expected = capsys.readouterr().err
        assert main([*command, str(target)]) == 2, target
        err = capsys.readouterr().err
        assert err == expected and len(err.splitlines()) == 1, (err, expected)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["loop.jsonl", "pipe.jsonl"]  # nothing written


def test_revert_of_a_gone_file_says_where_the_backups_are(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = sample_copy(tmp_path, "legacy-pomodoro.json")
    _apply(path)
    path.unlink()
    assert main(["revert", str(path)]) == 2
    assert "the session file is gone; restore it from the backups folder by hand" in capsys.readouterr().err


def test_no_compaction_ever_applied_is_said_so(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = sample_copy(tmp_path, "legacy-pomodoro.json")
    store_dir(path).mkdir(parents=True)  # a store folder with nothing applied (e.g. a refused apply)
    assert main(["revert", str(path)]) == 2
    err = capsys.readouterr().err
    assert "no compaction was applied to this file" in err and "already reverted" not in err


def _applied_with_outputs(folder: Path) -> tuple[Path, list[Path]]:
    """The hostile session (one tool output over the budget) compacted with --apply: the outputs it saved."""
    from tests.hostile import hostile_session

    folder.mkdir(parents=True)
    path = hostile_session(folder)
    assert main(["compact", str(path), "--provider", "offline", "--force", "--apply"]) == 0
    [entry] = read_history(path).entries
    outputs = [Path(name) for name in entry.outputs_new]
    assert outputs and all(p.is_file() for p in outputs) and entry.output_files == entry.outputs_new
    return path, outputs


def test_revert_removes_the_tool_outputs_its_apply_wrote(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path, outputs = _applied_with_outputs(tmp_path / "project" / "chats")
    folder = outputs[0].parent
    other = folder / "someone-elses.txt"  # a file of Gemini CLI's own in the same folder: kept
    other.write_text("kept")
    revert(path)
    assert not any(p.exists() for p in outputs)
    assert sorted(folder.iterdir()) == [other]
    other.unlink()
    _applied_with_outputs(tmp_path / "again" / "chats")  # and an apply after it works
    capsys.readouterr()


@pytest.mark.parametrize("then", ["revert", "compact --apply"])
def test_outputs_of_a_revert_killed_after_its_swap_are_removed_next_time(
        then: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A revert swaps the file back, then removes its apply's outputs, then journals: killed between the
    swap and the journal, the file shows the revert and nothing else does.  The next revert or apply
    finishes it (the outputs go), instead of leaving them for good."""
    path, outputs = _applied_with_outputs(tmp_path / "project" / "chats")
    original = store_dir(path) / "backups"
    before = next(original.iterdir()).read_bytes()

    class Killed(Exception):
        pass

    def kill(step: str) -> None:
        if step == "renamed":
            raise Killed(step)

    with pytest.raises(Killed):
        revert(path, hook=kill)
    assert path.read_bytes() == before and all(p.exists() for p in outputs)  # the swap, nothing after it
    assert [e.state for e in read_history(path).entries] == ["reverted"]  # as the file shows
    if then == "revert":
        assert main(["revert", str(path)]) == 2  # nothing left to undo...
        assert "already reverted" in capsys.readouterr().err
        assert not any(p.exists() for p in outputs)  # ...yet its outputs are gone
    else:
        assert main(["compact", str(path), "--provider", "offline", "--force", "--apply"]) == 0
        capsys.readouterr()
        _, second = read_history(path).entries
        assert not any(p.exists() for p in outputs if str(p) not in second.output_files)  # the first's are gone
    events = [line for line in (store_dir(path) / "journal.jsonl").read_text().splitlines() if '"revert"' in line]
    assert len(events) == 1  # and the journal says the revert ended


def test_a_file_with_another_name_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """An apply writes a new file in the session's place: a hard link to the old one would keep the old
    bytes, and Gemini CLI appending through it would write where no one reads.  Refused, nothing written."""
    path = sample_copy(tmp_path, "coding-task.jsonl")
    mirror = tmp_path / "mirror.jsonl"
    os.link(path, mirror)
    before = path.read_bytes()
    assert main(["compact", str(path), "--provider", "offline", "--force", "--apply"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and str(path) in err[0] and "2 names (hard links)" in err[0], err
    assert path.read_bytes() == before and os.stat(path).st_ino == os.stat(mirror).st_ino
    assert not store_dir(path).exists()


def test_a_session_applied_through_a_symlink_is_undone_by_either_name(tmp_path: Path) -> None:
    """The apply writes the file the link points to; its journal belongs to that file, whichever name
    the user gives next."""
    (tmp_path / "real").mkdir()
    (tmp_path / "links").mkdir()
    path = sample_copy(tmp_path / "real", "coding-task.jsonl")
    link = tmp_path / "links" / path.name
    link.symlink_to(path)
    original = path.read_bytes()
    _apply(link)
    assert link.is_symlink() and path.read_bytes() != original
    assert [e.state for e in read_history(path).entries] == ["applied"]  # by the real name
    revert(path)
    assert path.read_bytes() == original and [e.state for e in read_history(link).entries] == ["reverted"]
    assert store_dir(link) == store_dir(path) and not (tmp_path / "links" / ".session-inspector").exists()


def test_a_failed_apply_leaves_no_folder_it_made_for_the_outputs(tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """The disk fills while the first saved output is written: the session, the project's folder and
    the journal are as they were before, but for the failure the journal records."""
    import errno

    from tests.hostile import hostile_session

    chats = tmp_path / "project" / "chats"
    chats.mkdir(parents=True)
    path = hostile_session(chats)
    original = path.read_bytes()
    steps: list[str] = []

    def full(step: str) -> None:
        steps.append(step)
        if step == "temp-written" and "journalled" in steps:
            raise OSError(errno.ENOSPC, "No space left on device")

    import asyncio

    from inspector.compaction.request import CompactionRequest
    from inspector.compaction.strategies import compact_session
    from inspector.compaction.summarisers.offline import OfflineSummariser
    from inspector.store.plan import apply_compaction

    session = load(path)
    result = asyncio.run(compact_session(session, CompactionRequest(force=True), OfflineSummariser()))
    assert result.truncations  # an output over the budget: the apply saves it in full
    with pytest.raises(StoreError, match="no space left on device"):
        apply_compaction(session, history(session), result, hook=full)
    assert path.read_bytes() == original
    assert sorted(p.name for p in (tmp_path / "project").iterdir()) == ["chats"]  # no tool-outputs/ left
    assert [e.state for e in read_history(path).entries] == ["failed"]


def test_revert_leaves_a_tool_output_someone_rewrote_since(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Gemini CLI numbers its own saved outputs from 1 and writes over what is there: a file the apply created and
    Gemini CLI rewrote since is Gemini CLI's now, and the revert leaves it (the others it removes)."""
    path, outputs = _applied_with_outputs(tmp_path / "project" / "chats")
    assert len(outputs) >= 1
    taken, *rest = outputs
    taken.write_text("Gemini CLI's own output, saved over ours")
    assert main(["revert", str(path)]) == 0
    assert taken.read_text() == "Gemini CLI's own output, saved over ours"
    assert not any(p.exists() for p in rest)
    capsys.readouterr()


def test_two_sessions_of_one_project_both_apply(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Saved outputs are numbered after those already in tool-outputs/: a second session's apply names files of
    its own (Gemini CLI counts from 1 and overwrites), and each revert removes only its own."""
    from tests.hostile import hostile_session

    chats = tmp_path / "project" / "chats"
    first, first_outputs = _applied_with_outputs(chats)
    kept = {p: p.read_bytes() for p in first_outputs}
    (tmp_path / "elsewhere").mkdir()
    second = chats / "session-second.jsonl"
    hostile_session(tmp_path / "elsewhere").rename(second)
    second.write_text(second.read_text().replace("a line of a long log", "a line of another log"))
    code = main(["compact", str(second), "--provider", "offline", "--force", "--apply"])
    err = capsys.readouterr().err
    assert code == 0, err
    [entry] = read_history(second).entries
    second_outputs = [Path(name) for name in entry.outputs_new]
    assert second_outputs and not set(second_outputs) & set(first_outputs)
    assert all(p.read_bytes() == data for p, data in kept.items()), "the first session's outputs are untouched"
    assert main(["revert", str(first)]) == 0
    assert not any(p.exists() for p in first_outputs) and all(p.is_file() for p in second_outputs)
    assert main(["revert", str(second)]) == 0
    assert not any(p.exists() for p in second_outputs)


@pytest.mark.parametrize("mode", [0o600, 0o640, 0o644])
def test_full_tool_outputs_are_no_more_readable_than_their_session(mode: int, tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """The tool-output budget saves cut outputs beside the session: they hold its text, so a private
    session's outputs, and the folders made for them, are private too."""
    path = sample_copy(tmp_path, "long-migration.jsonl")
    os.chmod(path, mode)
    assert main(["compact", str(path), "--provider", "offline", "--apply"]) == 0
    capsys.readouterr()
    saved = [p for p in (tmp_path / "tool-outputs").rglob("*") if p.is_file()]
    assert saved, "the case: the budget cut outputs and saved them"
    assert {stat.S_IMODE(p.stat().st_mode) for p in saved} == {mode}
    folders = {p for s in saved for p in s.parents if tmp_path in p.parents}
    readable = 0o055 if mode & 0o004 else 0o050 if mode & 0o040 else 0
    umask = os.umask(0)
    os.umask(umask)
    assert {stat.S_IMODE(f.stat().st_mode) for f in folders} == {(0o700 | readable) & ~umask}
    assert stat.S_IMODE(path.stat().st_mode) == mode


def test_the_store_s_folders_are_the_owner_s_only(tmp_path: Path) -> None:
    """The store keeps whole copies of sessions (0600 files); its folders list which sessions were
    compacted and when, so they are no more open than the files in them."""
    path = sample_copy(tmp_path, "coding-task.jsonl")
    os.chmod(path, 0o644)
    _apply(path)
    folder = store_dir(path)
    made = [folder, folder / "backups"]
    assert all(f.is_dir() for f in made) and any((folder / "backups").iterdir())
    assert {stat.S_IMODE(f.stat().st_mode) & 0o077 for f in made} == {0}
    assert {stat.S_IMODE(f.stat().st_mode) for f in folder.rglob("*") if f.is_file()} == {0o600}
    assert stat.S_IMODE(path.stat().st_mode) == 0o644


@pytest.mark.parametrize("linked", [".session-inspector", "store", "backups", "lock"])
def test_a_symlink_in_the_store_is_refused_not_followed(linked: str, tmp_path: Path,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    """Followed, a link would put copies of the session wherever it points and, run as root on another
    user's session, hand what is there to that user.  Refused, in one line; nothing is written anywhere."""
    path = sample_copy(tmp_path, "legacy-pomodoro.json")
    original = path.read_bytes()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "secret.conf").write_text("important")
    store = store_dir(path)
    where = {".session-inspector": store.parent, "store": store, "backups": store / "backups", "lock": store / "lock"}
    link = where[linked]
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(elsewhere / "lock-target" if linked == "lock" else elsewhere)
    assert main(["compact", str(path), "--provider", "offline", "--force", "--apply"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and f"{link} is a symbolic link" in err[0], err
    assert path.read_bytes() == original
    assert sorted(p.name for p in elsewhere.iterdir()) == ["secret.conf"]  # nothing written through the link
    assert main(["revert", str(path)]) == 2  # nor read or taken through it to undo
    assert f"{link} is a symbolic link" in capsys.readouterr().err


def test_a_symlinked_tool_outputs_folder_is_refused_and_the_session_left_as_it_was(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from tests.hostile import hostile_session

    chats = tmp_path / "project" / "chats"
    chats.mkdir(parents=True)
    path = hostile_session(chats)  # one output over the budget: an apply saves it to tool-outputs/
    original = path.read_bytes()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (tmp_path / "project" / "tool-outputs").symlink_to(elsewhere)
    assert main(["compact", str(path), "--provider", "offline", "--force", "--apply"]) == 2
    err = capsys.readouterr().err
    assert "tool-outputs is a symbolic link" in err
    assert path.read_bytes() == original and not any(elsewhere.iterdir())
