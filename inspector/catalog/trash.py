"""Deleting a session from the browser: the file is moved aside, never erased, and can be put back.

A session file ``chats/session-….jsonl`` is renamed into
``chats/.session-inspector/deleted/`` (the store's folder, which no listing
reads), with its subagents' folder (``chats/<its id>/``) beside it when it has
one.  A rename within one folder tree is atomic: the file is in one place or
the other, never half-copied, and keeps its owner, mode and times.  Putting it
back renames it home again, refused when a file of that name has appeared
there since (that one is never overwritten).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from inspector.format import describe_os_error
from inspector.store.files import STORE_DIR

DELETED_DIR = "deleted"


class TrashError(Exception):
    """A move that could not be made, in one line that names the file."""


@dataclass(frozen=True)
class Moved:
    """One file or folder moved aside: where it was, and where it is now."""

    home: Path
    aside: Path


@dataclass(frozen=True)
class Deletion:
    """What deleting one session moved (the session file first), to put back in reverse order."""

    moves: tuple[Moved, ...]

    @property
    def session(self) -> Path:
        return self.moves[0].home


def _free_name(folder: Path, name: str) -> Path:
    """``folder/name``, or ``name`` with ``.1``, ``.2`` … after it where that is taken."""
    target, count = folder / name, 0
    while os.path.lexists(target):
        count += 1
        target = folder / f"{name}.{count}"
    return target


def move_aside(path: Path, subagents: Path | None = None) -> Deletion:
    """Move the session ``path`` (and its ``subagents`` folder) into the store's deleted folder."""
    aside = path.parent / STORE_DIR / DELETED_DIR
    try:
        aside.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise TrashError(f"{aside}: {describe_os_error(exc)}") from None
    moves: list[Moved] = []
    for home in (path, subagents):
        if home is None or not os.path.lexists(home):
            continue
        target = _free_name(aside, home.name)
        try:
            os.rename(home, target)
        except OSError as exc:
            for done in reversed(moves):  # all or nothing: what moved goes back
                os.rename(done.aside, done.home)
            raise TrashError(f"{home}: {describe_os_error(exc)}") from None
        moves.append(Moved(home, target))
    if not moves:
        raise TrashError(f"{path}: no such file")
    return Deletion(tuple(moves))


def put_back(deletion: Deletion) -> None:
    """Move what ``deletion`` moved aside home again; refused (nothing moved) where a file of that
    name is there now."""
    for moved in deletion.moves:
        if os.path.lexists(moved.home):
            raise TrashError(f"{moved.home}: a file of that name is there now; "
                             f"the deleted one stays at {moved.aside}")
    for moved in reversed(deletion.moves):
        try:
            os.rename(moved.aside, moved.home)
        except OSError as exc:
            raise TrashError(f"{moved.aside}: {describe_os_error(exc)}") from None
