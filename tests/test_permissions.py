"""Ownership and permissions as another user meets them (12.7): the tests drop from root to ``nobody``.

A file the user cannot write, or whose owner or group a rewrite (an apply of
a legacy file, or any revert) could not keep, is refused before anything is
created, even the store's folder; a file the user cannot read, or a store
the user cannot use, is one line, never a traceback.
"""

from __future__ import annotations

import os
import shutil
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from inspector.cli import main
from inspector.session import history, load
from inspector.store import apply_history, read_history, revert, store_dir
from tests.as_user import NOBODY, as_user, needs_root
from tests.test_store import SNAPSHOT, compacted

SAMPLES = Path(__file__).resolve().parents[1] / "sample_sessions"


@pytest.fixture
def shared() -> Iterator[Path]:
    """A folder anyone may write in (pytest's own temp folder is root's alone)."""
    needs_root()
    folder = Path(tempfile.mkdtemp(prefix="si-permissions-"))
    folder.chmod(0o777)
    try:
        yield folder
    finally:
        shutil.rmtree(folder)


def _copy(folder: Path, name: str, *, mode: int, uid: int = 0, gid: int = 0) -> Path:
    path = Path(shutil.copy(SAMPLES / name, folder / name))
    os.chown(path, uid, gid)
    path.chmod(mode)
    return path


def _apply(path: Path) -> str:
    session = load(path)
    turns = history(session)
    new, sources = compacted(turns, 2)
    return apply_history(session, turns, new, sources).state


def _warm(folder: Path) -> None:
    """Everything the child runs, run once here, so it imports nothing as nobody."""
    path = _copy(folder, "legacy-pomodoro.json", mode=0o644)
    jsonl = _copy(folder, "coding-task.jsonl", mode=0o644)
    for target in (path, jsonl):
        _apply(target)
        revert(target)
        main(["analyze", str(target)])
        main(["history", str(target)])
        shutil.rmtree(store_dir(target).parent)
        target.unlink()


@pytest.mark.parametrize(("name", "mode", "owner", "words"), [
    ("legacy-pomodoro.json", 0o644, (0, 0), "you cannot write the file (permission denied)"),
    ("coding-task.jsonl", 0o644, (0, 0), "you cannot write the file (permission denied)"),
    ("legacy-pomodoro.json", 0o666, (0, 0), "the file belongs to another user (uid 0)"),
    ("coding-task.jsonl", 0o666, (0, 0), "the file belongs to another user (uid 0)"),  # its revert rewrites
    ("legacy-pomodoro.json", 0o666, (NOBODY, 0), "the file's group (gid 0) is not one of yours"),
    ("legacy-pomodoro.json", 0o444, (NOBODY, NOBODY), "the file is read-only"),
])
def test_a_file_the_user_may_not_rewrite_is_refused_leaving_no_trace(
    name: str, mode: int, owner: tuple[int, int], words: str, shared: Path
) -> None:
    _warm(shared)
    path = _copy(shared, name, mode=mode, uid=owner[0], gid=owner[1])
    original = path.read_bytes()
    outcome = as_user(lambda: _apply(path))
    assert outcome.error is not None and outcome.error.startswith("StoreError") and words in outcome.error, outcome
    assert "nothing was written" in outcome.error
    assert path.read_bytes() == original
    info = path.stat()
    assert (info.st_uid, info.st_gid, stat.S_IMODE(info.st_mode)) == (*owner, mode)
    assert sorted(p.name for p in shared.iterdir()) == [name], "a refused apply created something"


@pytest.mark.parametrize("name", ["legacy-pomodoro.json", "coding-task.jsonl"])
def test_the_owner_applies_and_reverts_keeping_owner_group_and_mode(name: str, shared: Path) -> None:
    _warm(shared)
    path = _copy(shared, name, mode=0o640, uid=NOBODY, gid=NOBODY)
    original = path.read_bytes()

    def apply_then_revert() -> tuple[str, bool, bool]:
        state = _apply(path)
        compacted_now = SNAPSHOT.split("\n", 1)[0] in path.read_text()
        revert(path)
        return state, compacted_now, path.read_bytes() == original

    outcome = as_user(apply_then_revert)
    assert outcome.error is None and outcome.value == ("applied", True, True), outcome
    info = path.stat()
    assert (info.st_uid, info.st_gid, stat.S_IMODE(info.st_mode)) == (NOBODY, NOBODY, 0o640)
    assert [e.state for e in read_history(path).entries] == ["reverted"]


def test_an_unreadable_file_and_a_store_of_another_user_are_one_line(shared: Path) -> None:
    _warm(shared)
    secret = _copy(shared, "legacy-pomodoro.json", mode=0o600)
    other = _copy(shared, "coding-task.jsonl", mode=0o666)
    _apply(other)  # root's store: nobody can neither lock it nor read its journal
    applied = other.read_bytes()
    for argv, words in ((["analyze", str(secret)], "permission denied"),
                        (["compact", "--apply", "--force", str(secret)], "permission denied"),
                        (["revert", str(other)], "cannot take the store's lock: permission denied"),
                        (["history", str(other)], "cannot read the journal: permission denied")):
        outcome = as_user(lambda argv=argv: main(argv))  # type: ignore[misc]
        assert outcome.error is None and outcome.value == 2, (argv, outcome)
        lines = outcome.stderr.splitlines()
        assert len(lines) == 1 and words in lines[0], (argv, outcome.stderr)
    assert other.read_bytes() == applied


def test_roots_apply_to_a_session_of_theirs_leaves_them_its_store_and_outputs(shared: Path) -> None:
    """Root (sudo) applies to a user's session: the store (journal, backups) and the saved full outputs
    are made the session owner's, as the session is, so the owner reads the outputs the excerpts point
    to and undoes the apply without root."""
    from tests.hostile import hostile_session

    _warm(shared)
    project = shared / "project"
    (project / "chats").mkdir(parents=True)
    os.chown(project, NOBODY, NOBODY)
    os.chown(project / "chats", NOBODY, NOBODY)
    path = hostile_session(project / "chats")  # one tool output over the budget: saved in full by the apply
    os.chown(path, NOBODY, NOBODY)
    path.chmod(0o600)
    original = path.read_bytes()
    assert main(["compact", "--apply", "--force", "--provider", "offline", str(path)]) == 0  # as root
    [entry] = read_history(path).entries
    outputs = [Path(name) for name in entry.outputs_new]
    made = [*outputs, outputs[0].parent, store_dir(path), store_dir(path).parent]
    made += [p for p in store_dir(path).rglob("*")]
    assert outputs and all(p.stat().st_uid == NOBODY for p in made), [(p, p.stat().st_uid) for p in made]
    assert main(["history", str(path)]) == 0  # (imports what the child runs)
    for argv in (["history", str(path)], ["revert", str(path)]):
        outcome = as_user(lambda argv=argv: main(argv))  # type: ignore[misc]
        assert outcome.error is None and outcome.value == 0, (argv, outcome)
    assert path.read_bytes() == original and path.stat().st_uid == NOBODY
    assert not any(p.exists() for p in outputs)


@pytest.mark.parametrize("name", ["legacy-pomodoro.json", "coding-task.jsonl"])
def test_a_folder_the_user_may_write_but_not_list_takes_an_apply_and_its_revert(name: str, shared: Path) -> None:
    """Mode 0300 (write and search, no read): the folder cannot be opened to flush it after the swap.
    The swap happened, so the apply says it did, and revert undoes it (it said "left as it was",
    and had removed its backup)."""
    _warm(shared)
    folder = shared / "drop"
    folder.mkdir()
    path = _copy(folder, name, mode=0o644, uid=NOBODY, gid=NOBODY)
    os.chown(folder, NOBODY, NOBODY)
    folder.chmod(0o300)
    original = path.read_bytes()

    def apply_then_revert() -> tuple[str, bool, bool]:
        state = _apply(path)
        changed = path.read_bytes() != original
        revert(path)
        return state, changed, path.read_bytes() == original

    outcome = as_user(apply_then_revert)
    assert outcome.error is None and outcome.value == ("applied", True, True), outcome


def test_a_folder_the_user_cannot_write_is_refused_in_one_line(shared: Path) -> None:
    """The file is the user's, the folder is not: the store's folder cannot be made there."""
    _warm(shared)
    folder = shared / "chats"
    folder.mkdir(mode=0o755)
    path = _copy(folder, "legacy-pomodoro.json", mode=0o644, uid=NOBODY, gid=NOBODY)
    original = path.read_bytes()
    outcome = as_user(lambda: main(["compact", "--provider", "offline", "--force", "--apply", str(path)]))
    assert outcome.error is None and outcome.value == 2, outcome
    lines = outcome.stderr.splitlines()
    assert len(lines) == 1 and "permission denied; nothing was written" in lines[0], outcome.stderr
    assert path.read_bytes() == original and sorted(p.name for p in folder.iterdir()) == [path.name]


def test_a_path_behind_a_folder_the_user_may_not_search_is_one_line(shared: Path, tmp_path: Path) -> None:
    """Looking at a path under a folder closed to the user raises in Python (``Path.exists``,
    ``Path.is_dir``); each command says "permission denied" in one line and writes nothing."""
    _warm(shared)
    public = _copy(shared, "coding-task.jsonl", mode=0o644)
    closed = shared / "closed"
    closed.mkdir(mode=0o700)
    inside = _copy(closed, "legacy-pomodoro.json", mode=0o644)
    main(["export", str(public), "--out", str(tmp_path / "warm.md")])  # imports what the child runs
    main(["search", "warm", "--folder", str(tmp_path / "none")])
    main([str(tmp_path / "none")])
    listless = shared / "listless"
    listless.mkdir(mode=0o711)  # may be passed through, not listed: it would look empty
    for argv in ([str(inside)],  # the app: refused before it starts
                 [str(listless)],
                 ["search", "anything", "--folder", str(closed / "chats")],
                 ["search", "anything", "--folder", str(listless)],
                 ["export", str(public), "--out", str(closed / "out.md")]):
        outcome = as_user(lambda argv=argv: main(argv))  # type: ignore[misc]
        assert outcome.error is None and outcome.value == 2, (argv, outcome)
        lines = outcome.stderr.splitlines()
        assert len(lines) == 1 and "permission denied" in lines[0], (argv, outcome.stderr)
    assert sorted(p.name for p in closed.iterdir()) == [inside.name]
