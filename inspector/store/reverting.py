"""Undo applies, restoring the session byte for byte.

JSONL: the apply only appended, so the bytes before it are still the file's
start.  Revert keeps them, drops exactly the bytes the apply wrote, and keeps
every line appended after it (Gemini CLI may have kept recording).  The file
is rewritten atomically; a line another writer appends to the old file while
the rename happens is copied over afterwards.

Legacy JSON and checkpoints: the apply rewrote the file, so it is restored
from the backup, but only if the file is still exactly what the apply wrote.
Otherwise revert refuses; ``force`` restores anyway after keeping a copy of
the current file beside the backups.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from inspector.format import describe_os_error
from inspector.session.errors import SessionError
from inspector.session.loader import parse
from inspector.store import files
from inspector.store.apply import js_timestamp, refuse_store_file, sha256
from inspector.store.baseline import (
    Rewrite,
    check_writable,
    first_history_rewrite,
    open_regular,
    read_baseline,
    regular_file_problem,
    replace_file,
)
from inspector.store.errors import StoreError
from inspector.store.journal import Journal, JournalEntry, Region, append_event, read_journal
from inspector.store.late import find_regions
from inspector.store.recording import CaughtUp, replace_recording
from inspector.store.settle import finish_landed, remove_outputs, settle

NEVER_REACHED = "the apply had not changed the file"  # RevertResult.note of an apply cut short before its swap


@dataclass(frozen=True)
class RevertResult:
    entry: JournalEntry
    size: int  # of the file after the revert
    sha256: str
    kept_bytes: int = 0  # bytes appended after the apply that were kept
    copy: Path | None = None  # --force: where the file as it was is kept
    note: str = ""
    lost_note: str = ""  # what another writer appended during the swap and could not be copied (CaughtUp)
    late_bytes: int = 0  # of kept_bytes, what another writer wrote to the old file while it was swapped
    swap_note: str = ""  # what else the swap's drain said (CaughtUp.note)
    housekeeping: tuple[str, ...] = ()  # what was found and tidied first (late lines carried, leftovers)
    still_applied: tuple[JournalEntry, ...] = ()  # applies still in force once this revert is done, newest first


def read_history(path: str | os.PathLike[str]) -> Journal:
    """The journal of a session (empty if nothing was ever applied), with interrupted reverts settled.

    Raises StoreError (``journal``) if the journal is damaged.
    """
    path = Path(path)
    journal = read_journal(files.store_dir(path))
    settled, _ = settle(path, journal)
    return settled


def undoable(path: str | os.PathLike[str]) -> list[JournalEntry]:
    """Applies that can be undone, newest first."""
    return read_history(path).undoable()


def revert(
    path: str | os.PathLike[str],
    *,
    steps: int = 1,
    force: bool = False,
    hook: files.WriteHook | None = None,
    now: Callable[[], datetime] | None = None,
) -> list[RevertResult]:
    """Undo the newest ``steps`` applies, newest first.  Raises StoreError."""
    path = Path(path)
    refuse_store_file(path)
    folder = files.store_dir(path)
    problem = regular_file_problem(path)
    if problem == "no such file" and files.is_folder_or_closed(folder):
        raise StoreError(path, "the session file is gone; restore it from the backups folder by hand", "changed")
    if problem:
        raise StoreError(path, problem, "invalid")
    files.refuse_linked_store(path)
    files.refuse_foreign_store(path)
    if not files.is_folder_or_closed(folder):
        if os.path.lexists(folder):  # a file or a FIFO where the store's folder goes: said as history says it
            read_journal(folder)
        raise StoreError(path, "nothing to undo: no compaction was applied to this file", "nothing")
    results: list[RevertResult] = []
    owner = files.owner_of(path)
    try:
        with files.locked(folder):
            try:  # a revert a kill cut short is finished first: its outputs go, and the journal says so
                journal, said = finish_landed(path, folder, _at(now))
            except OSError as exc:
                raise _journal_error(path, exc) from None
            pending = journal.undoable()
            said += files.sweep(path, folder, {e.backup for e in pending},
                                {Path(o).parent for e in journal.entries for o in e.output_files})
            first = "".join(f" (first: {line})" for line in said)  # what was tidied is said even so
            if not pending:
                if not any(e.state in ("applied", "reverted") for e in journal.entries):
                    raise StoreError(path, f"nothing to undo: no compaction was applied to this file{first}",
                                     "nothing")
                raise StoreError(path, f"nothing to undo: every applied compaction was already reverted{first}",
                                 "nothing")
            if steps > len(pending):
                can = "1 apply" if len(pending) == 1 else f"{len(pending)} applies"
                raise StoreError(path, f"only {can} can be undone, not {steps}; nothing was changed", "nothing")
            for entry in pending[:steps]:
                results.append(_revert_one(path, folder, entry, force, hook, now))
            results = _told(results, tuple(said), tuple(pending[steps:]))
    finally:
        files.hand_over(path, owner)
    return results


def _told(results: list[RevertResult], said: tuple[str, ...], still: tuple[JournalEntry, ...]) -> list[RevertResult]:
    """The results, the first one carrying what was tidied first, the last one the applies still in force."""
    results = list(results)
    if results:
        results[0] = replace(results[0], housekeeping=said)
        results[-1] = replace(results[-1], still_applied=still)
    return results


def _journal(path: Path, folder: Path, event: dict[str, object], hook: files.WriteHook | None = None) -> None:
    """Write a journal event before the session is touched; a failure leaves the session as it was."""
    try:
        append_event(folder, event, hook)
    except OSError as exc:
        raise _journal_error(path, exc) from None


def _journal_error(path: Path, exc: OSError) -> StoreError:
    return StoreError(path, f"cannot write the journal: {describe_os_error(exc)}; the session was not changed", "io")


def _at(now: Callable[[], datetime] | None) -> str:
    return js_timestamp((now or (lambda: datetime.now(UTC)))())


def _backup_bytes(path: Path, folder: Path, entry: JournalEntry) -> bytes:
    backup = folder / "backups" / entry.backup
    try:
        data = files.read_own_file(backup)
    except FileNotFoundError:
        raise StoreError(path, f"the backup {backup} is missing; the session was not changed", "backup") from None
    except OSError as exc:
        raise StoreError(path, f"cannot read the backup {backup}: {describe_os_error(exc)}; the session was not "
                         "changed", "backup") from None
    if sha256(data) != entry.sha256_before:
        raise StoreError(path, f"the backup {backup} is damaged (hash differs); the session was not changed", "backup")
    return data


Cut = tuple[int, int, bytes]  # data[start:end] is replaced by these bytes


def _history_rewrite(path: Path, data: bytes, regions: tuple[Region, ...]) -> tuple[Rewrite | None, list[Cut]]:
    """The first line after the apply's checkpoint, outside the apply's own ``regions``, that
    rebuilds the whole history (``baseline.history_rewrite``): written after the apply, it rebuilds
    it from the compacted one, whatever revert restores before it.  A line Gemini CLI wrote while
    the apply was writing sits before the checkpoint: with the checkpoint gone, it does to the
    history what it did before.

    Gemini CLI writes a ``$set`` of ``messages`` every time it resumes a session, restating the
    history it read: one that restates the history as the file has it at that line rebuilds
    nothing.  It is returned as a cut (kept, it would set the compacted history again after the
    restored one): the line without ``messages`` (the other fields it sets, such as
    ``lastUpdated``), or no line; the search goes on after it."""
    ours = sorted((r.offset, r.offset + r.length) for r in regions)
    if not ours:
        return None, []
    cuts = [(lo, hi, b"") for lo, hi in ours]
    at = ours[0][1]
    while True:
        rewrite = first_history_rewrite(data, at, ours)
        rest = _restated(path, data, rewrite) if rewrite is not None else None
        if rewrite is None or rest is None:
            return rewrite, cuts
        at = rewrite.end + 1 if data[rewrite.end : rewrite.end + 1] == b"\n" else rewrite.end
        kept = json.dumps({"$set": rest}, ensure_ascii=False, separators=(",", ":")).encode() + b"\n" if rest else b""
        cuts.append((rewrite.start, at, kept))


def _restated(path: Path, data: bytes, rewrite: Rewrite) -> dict[str, Any] | None:
    """Where the line is a ``$set`` whose ``messages`` are the messages the file holds before it,
    the same in all but the form of a text content (Gemini CLI writes a text as ``[{"text": ...}]``
    where it was a string): the other fields it sets.  None where it rebuilds the history."""
    try:
        update = json.loads(data[rewrite.start : rewrite.end])["$set"]
        listed = update["messages"]
        if not isinstance(listed, list):
            return None
        before = parse(path, data[: rewrite.start]).messages
    except (ValueError, KeyError, TypeError, RecursionError, SessionError):
        return None
    same = len(listed) == len(before) and all(
        isinstance(theirs, dict) and _as_listed(dict(ours)) == _as_listed(theirs)
        for ours, theirs in zip(before, listed, strict=True)
    )
    return {key: value for key, value in update.items() if key != "messages"} if same else None


def _as_listed(message: dict[str, Any]) -> dict[str, Any]:
    content = message.get("content")
    return {**message, "content": [{"text": content}]} if isinstance(content, str) else message


def _spliced(data: bytes, start: int, cuts: list[Cut]) -> bytes:
    pieces, at = [], start
    for lo, hi, put in sorted(cuts):
        pieces += [data[at:lo], put]
        at = hi
    pieces.append(data[at:])
    return b"".join(pieces)


def _revert_one(
    path: Path,
    folder: Path,
    entry: JournalEntry,
    force: bool,
    hook: files.WriteHook | None,
    now: Callable[[], datetime] | None,
) -> RevertResult:
    jsonl = entry.format == "jsonl"
    try:
        base = read_baseline(path, appended_to=jsonl)
    except StoreError as exc:
        if exc.reason == "changed" and not os.path.lexists(path):
            raise StoreError(path, "the session file is gone; restore it from the backups folder by hand",
                             "changed") from None
        raise
    data = base.data
    new, kept, note = _restored(path, folder, entry, data, force)
    copy: Path | None = None
    if new is None:  # the apply never reached the file
        return _finish(path, folder, entry, data, 0, None, NEVER_REACHED, now)
    check_writable(path, base)
    if note == "forced":
        copy = folder / f"replaced-{entry.seq:04d}-{secrets.token_hex(3)}.bak"
        try:
            files.atomic_write(copy, data, no_clobber=True)
        except OSError as exc:
            raise StoreError(
                path, f"cannot keep a copy of the current file: {describe_os_error(exc)}; nothing changed"
            ) from None
    # Say what is about to be written before writing it: a crash after the
    # swap is then settled from the file (see ``settle``).
    _journal(path, folder, {
        "event": "reverting", "id": entry.id, "sha256": sha256(new), "size": len(new),
        "from_sha256": base.sha256, "from_size": base.size,
    }, hook)
    old = open_regular(base.path)  # the file being replaced: what is appended to it meanwhile is caught up
    keep = files.swapped_path(path, entry.id, "revert")
    try:
        try:
            files.make_folders(keep.parent, 0o700)
            if jsonl:
                swap = replace_recording(base, new, old, base.size, keep=keep, hook=hook)
            else:
                replace_file(base, new, hook=hook, keep=keep)
                swap = CaughtUp(0)
        except OSError as exc:
            raise StoreError(
                path, f"could not write: {describe_os_error(exc)}; the session was left as it was"
            ) from None
    finally:
        os.close(old)
    return _finish(path, folder, entry, new, kept + swap.copied, copy, note, now, swap)


def _restored(
    path: Path, folder: Path, entry: JournalEntry, data: bytes, force: bool
) -> tuple[bytes | None, int, str]:
    """(the bytes to restore, bytes kept from after the apply, note)."""
    when = entry.applied_at
    if entry.format == "jsonl":
        prefix_ok = len(data) >= entry.size_before and sha256(data[: entry.size_before]) == entry.sha256_before
        regions = find_regions(data, entry) if prefix_ok else None
        rewrite, cuts = _history_rewrite(path, data, regions) if regions is not None else (None, [])
        if regions is not None and rewrite is None:
            prefix = data[: entry.size_before]
            tail = _spliced(data, entry.size_before, cuts)
            glue = b"\n" if tail and prefix and not prefix.endswith(b"\n") else b""
            return prefix + glue + tail, len(tail), "kept lines appended after the apply" if tail else ""
        if rewrite is not None:  # kept, that line would keep the compaction in effect
            what = (f"line {rewrite.line:,} {rewrite.does}, as Gemini CLI does when it resumes a session: kept, "
                    "it would keep the compaction in effect")
        elif prefix_ok and entry.state == "incomplete":
            return None, 0, ""  # the swap never happened (it is all or nothing): none of it is there
        else:
            what = "its start no longer matches the file before the apply" if not prefix_ok else \
                "the lines the apply wrote are no longer there"
    else:
        current = sha256(data)
        if current == (entry.sha256_after or entry.planned_sha256):
            return _backup_bytes(path, folder, entry), 0, ""
        if entry.state == "incomplete" and current == entry.sha256_before:
            return None, 0, ""
        what = "it is not the file the apply wrote"
    if not force:
        raise StoreError(
            path,
            f"the file changed since the apply of {when} ({what}); revert --force restores the backup "
            "after keeping a copy of the current file",
            "conflict",
        )
    return _backup_bytes(path, folder, entry), 0, "forced"


def _finish(
    path: Path,
    folder: Path,
    entry: JournalEntry,
    data: bytes,
    kept: int,
    copy: Path | None,
    note: str,
    now: Callable[[], datetime] | None,
    swap: CaughtUp | None = None,
) -> RevertResult:
    swap = swap or CaughtUp(0)
    digest = sha256(data)
    at = _at(now)
    remove_outputs(entry)
    with contextlib.suppress(OSError):  # an apply undone is never undone again: its backup is of no more use
        (folder / "backups" / entry.backup).unlink()
    with contextlib.suppress(OSError):
        append_event(folder, {
            "event": "revert", "id": entry.id, "at": at, "sha256": digest, "size": len(data),
            "kept_bytes": kept, "copy": str(copy) if copy else None, "note": note, "lost_note": swap.lost_note(),
            "late_bytes": swap.late, "swapped_size": swap.drained_to if swap.kept is not None else None,
            "swap_note": swap.note,
        })
    files.note_own_write(path, digest, len(data))
    return RevertResult(entry, len(data), digest, kept, copy, note, swap.lost_note(), swap.late, swap.note)
