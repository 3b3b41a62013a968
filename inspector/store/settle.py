"""Reverts a crash cut short, settled from the session file itself.

A revert swaps the file back, then removes the tool-output files its apply
created, then says so in the journal.  A kill between those steps leaves a
revert the file shows and the journal does not: ``settle`` reads it from the
file, and ``finish_landed`` (where apply and revert begin) completes it, its
outputs removed and its end journalled, so no output file is left behind that
nothing would ever remove.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
from dataclasses import replace
from pathlib import Path

from inspector.store.baseline import open_regular
from inspector.store.errors import StoreError
from inspector.store.files import read_own_file
from inspector.store.journal import Journal, JournalEntry, append_event, read_journal
from inspector.store.late import carry_swapped


def settle(path: Path, journal: Journal) -> tuple[Journal, list[JournalEntry]]:
    """The journal with every revert that began and never said so settled from the file itself.

    A revert writes ``reverting`` (the hashes of the bytes it found and of
    those it puts back) before it touches the file.  If the file now starts
    with the bytes put back and no longer with those found, that revert
    happened (a crash came before it could say so): the entry is reverted.
    Otherwise it never reached the file and the entry stands.  (Start of
    the file, not all of it: Gemini CLI may have appended since.)
    Returns the settled journal and the entries found reverted.
    """
    landed: list[JournalEntry] = []
    entries: list[JournalEntry] = []
    for entry in journal.entries:
        intent = entry.reverting
        if intent is not None and entry.state in ("applied", "incomplete"):
            if _starts_with(path, intent.size, intent.sha256) and not _starts_with(
                path, intent.from_size, intent.from_sha256
            ):
                entry = replace(entry, state="reverted", revert_note="an interrupted revert had finished")
                landed.append(entry)
            else:
                entry = replace(entry, reverting=None)
        entries.append(entry)
    return Journal(journal.path, entries, journal.events), landed


def _starts_with(path: Path, size: int, digest: str) -> bool:
    try:
        fd = open_regular(path)
    except StoreError:
        return False
    try:
        return os.fstat(fd).st_size >= size and hashlib.sha256(os.pread(fd, size, 0)).hexdigest() == digest
    finally:
        os.close(fd)


def remove_outputs(entry: JournalEntry) -> None:
    """The tool-output files the apply created go with it (and their folder, once empty), each only
    while it holds what the apply wrote: Gemini CLI numbers its own saved outputs from 1 and writes
    over what is there, so a file rewritten since belongs to someone else now and stays.  (Journals
    written before the hashes were kept name none: their files go, as they always did.)"""
    folders: set[Path] = set()
    hashes = entry.outputs_new_sha256 if len(entry.outputs_new_sha256) == len(entry.outputs_new) else None
    for k, name in enumerate(entry.outputs_new):
        output = Path(name)
        with contextlib.suppress(OSError):
            if hashes is not None and hashlib.sha256(read_own_file(output)).hexdigest() != hashes[k]:
                continue
            output.unlink()
            folders.add(output.parent)
    for folder in folders:
        with contextlib.suppress(OSError):
            folder.rmdir()  # only if empty


def finish_landed(path: Path, folder: Path, at: str) -> tuple[Journal, list[str]]:
    """The journal of ``folder``, settled, with each revert found landed finished: the outputs
    its apply created removed, and its end journalled; then what was written late to a file an
    apply or revert swapped out is carried into the session (``late.carry_swapped``).  Returns
    the journal and what a person must be told.  Raises OSError when the journal cannot be
    written (the caller says so)."""
    journal, landed = settle(path, read_journal(folder))
    for entry in landed:
        remove_outputs(entry)
        append_event(folder, {"event": "revert", "id": entry.id, "at": at, "note": entry.revert_note})
    said = carry_swapped(path, folder, journal, at)
    return journal, said
