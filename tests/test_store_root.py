"""Root never acts on a store another user can write (issue 37: "Root deletes files another user names").

Run as root on a session owned by ``nobody``, an apply hands the store to ``nobody`` so they can
undo it themselves.  From then on the journal is theirs to edit: it could name any file in a
folder called ``tool-outputs`` (with its right hash) as an output to delete, or a planted store
could stand in for root's own.  Root refuses such a store in one line naming the folder and its
owner, and deletes nothing; ``nobody`` undoes the apply as themselves.  A journal whose outputs
have no hash (or a wrong one) is damage, refused for everyone.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from inspector.cli import main
from inspector.session import history, load
from inspector.store import StoreError, apply_history, read_history, revert, store_dir
from inspector.store.files import JOURNAL_NAME
from tests.as_user import NOBODY, as_user, needs_root
from tests.test_store import compacted, sample_copy

SAMPLES = Path(__file__).resolve().parents[1] / "sample_sessions"


@pytest.fixture
def shared() -> Iterator[Path]:
    """A folder anyone may write in, holding a root-only folder with a victim file in a ``tool-outputs`` folder."""
    needs_root()
    folder = Path(tempfile.mkdtemp(prefix="si-root-"))
    folder.chmod(0o777)
    try:
        yield folder
    finally:
        shutil.rmtree(folder)


def _victim(shared: Path) -> Path:
    secret = shared / "root-only" / "tool-outputs" / "secret.txt"
    secret.parent.mkdir(parents=True)
    (shared / "root-only").chmod(0o700)
    secret.write_text("root's own file\n")
    return secret


def _nobodys_session(shared: Path) -> Path:
    chats = shared / "project" / "chats"
    chats.mkdir(parents=True)
    for folder in (chats.parent, chats):
        os.chown(folder, NOBODY, NOBODY)
    path = Path(shutil.copy(SAMPLES / "coding-task.jsonl", chats / "coding-task.jsonl"))
    os.chown(path, NOBODY, NOBODY)
    path.chmod(0o600)
    return path


def _apply(path: Path) -> None:
    session = load(path)
    turns = history(session)
    new, sources = compacted(turns, 2)
    apply_history(session, turns, new, sources)


def _name_in_journal(path: Path, victim: Path) -> None:
    """What ``nobody`` can do to a journal that is theirs: name ``victim`` as an output the apply made,
    with its right hash."""
    journal = store_dir(path) / JOURNAL_NAME
    lines = journal.read_text().splitlines()
    first = json.loads(lines[0])
    first["outputs_new"] = [str(victim)]
    first["output_files"] = [str(victim)]
    first["outputs_new_sha256"] = [hashlib.sha256(victim.read_bytes()).hexdigest()]
    lines[0] = json.dumps(first)
    as_user(lambda: journal.write_text("\n".join(lines) + "\n"))


def test_root_refuses_a_store_its_apply_handed_to_the_sessions_owner(shared: Path) -> None:
    victim = _victim(shared)
    path = _nobodys_session(shared)
    _apply(path)  # as root: the store is handed to nobody
    assert store_dir(path).stat().st_uid == NOBODY
    _name_in_journal(path, victim)
    with pytest.raises(StoreError, match=r"belongs to nobody \(uid 65534\).*root does not act on a store") as refused:
        revert(path)
    assert str(store_dir(path).parent) in str(refused.value)
    assert victim.exists(), "root deleted a file another user named"
    assert main(["revert", str(path)]) == 2
    assert victim.exists()
    # and a second apply as root is refused the same way, before anything is written
    before = path.read_bytes()
    with pytest.raises(StoreError, match="root does not act on a store"):
        _apply(path)
    assert path.read_bytes() == before and victim.exists()


def test_root_refuses_a_planted_store_in_place_of_its_own(shared: Path) -> None:
    """``nobody`` moves root's own (root-owned) store aside and plants one of theirs."""
    victim = _victim(shared)
    chats = shared / "project" / "chats"
    chats.mkdir(parents=True)
    os.chown(chats, NOBODY, NOBODY)
    path = Path(shutil.copy(SAMPLES / "coding-task.jsonl", chats / "coding-task.jsonl"))
    path.chmod(0o666)  # root's session, in a folder nobody may write
    _apply(path)
    assert store_dir(path).stat().st_uid == 0
    planted = chats / "planted"
    shutil.copytree(store_dir(path).parent, planted)
    for root, folders, names in os.walk(planted):
        for name in (*folders, *names, ""):
            os.chown(Path(root) / name, NOBODY, NOBODY)
    as_user(lambda: os.rename(store_dir(path).parent, chats / "moved-aside"))
    as_user(lambda: os.rename(planted, store_dir(path).parent))
    _name_in_journal(path, victim)
    with pytest.raises(StoreError, match="root does not act on a store"):
        revert(path)
    assert victim.exists()


def test_outputs_without_their_hashes_are_a_damaged_journal(tmp_path: Path) -> None:
    """Any user: an output named with no hash, or a hash that is not one, is damage (a revert removes an
    output only while it holds what the apply wrote)."""
    path = sample_copy(tmp_path, "coding-task.jsonl")
    _apply(path)
    journal = store_dir(path) / JOURNAL_NAME
    lines = journal.read_text().splitlines()
    victim = tmp_path / "tool-outputs" / "kept.txt"
    victim.parent.mkdir()
    victim.write_text("someone's output\n")
    for hashes in ([], ["not-a-hash"], [hashlib.sha256(b"other").hexdigest().upper()]):
        first = json.loads(lines[0])
        first["outputs_new"] = [str(victim)]
        first["outputs_new_sha256"] = hashes
        journal.write_text("\n".join([json.dumps(first), *lines[1:]]) + "\n")
        with pytest.raises(StoreError, match="line 1 is damaged"):
            read_history(path)
        with pytest.raises(StoreError, match="line 1 is damaged"):
            revert(path)
        assert victim.exists()
