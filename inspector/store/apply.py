"""Apply a new history to a session file on disk, reversibly.

Order of work, so that a failure at any point loses nothing:

1. check the file is still what the preview was computed from;
2. build the bytes to write and prove the project's own loader reads them
   back as exactly the new history (else refuse);
3. check every tool-output file can be written without overwriting a
   different one (else refuse);
4. back up the file (atomically) and journal the intent;
5. write the full tool outputs, then the session, whole, by an atomic swap
   (JSONL: the file with a checkpoint line added, as Gemini CLI's /compress
   appends it; legacy JSON and checkpoints: the new document);
6. drain the swapped-out file: wait until no process holds it open for
   writing, copying every line written to it (``recording``, ``drain``), and
   keep it in the store's ``swapped/`` folder for the next apply or revert
   (``late``), so a line written to it later still, or after a kill, is carried;
7. journal where it landed and what came late.
"""

from __future__ import annotations

import contextlib
import os
import secrets
from collections.abc import Callable, Sequence
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson

from inspector.compaction.budget import Truncation
from inspector.format import describe_os_error
from inspector.session.history import Turn
from inspector.session.loader import Session
from inspector.store import files
from inspector.store.baseline import (
    Baseline,
    changed_error,
    check_writable,
    check_writable_now,
    first_history_rewrite,
    open_regular,
    read_baseline,
    read_fd,
    replace_file,
)
from inspector.store.build import grown_records, js_json, js_timestamp, plan_bytes, sha256
from inspector.store.errors import StoreError
from inspector.store.journal import JournalEntry, JournalInfo, Region, append_event
from inspector.store.outputs import plan_outputs, write_outputs
from inspector.store.recording import CaughtUp, replace_recording
from inspector.store.settle import finish_landed

__all__ = ["apply_history", "js_json", "js_timestamp", "preview_state", "refuse_store_file", "refuse_unread_lines",
           "sha256"]

Content = dict[str, Any]


def refuse_store_file(path: Path) -> None:
    """Never treat the store's own files (backups, journal, temp files) as a session."""
    if files.is_store_path(path) or files.is_store_path(os.path.realpath(path)):
        raise StoreError(
            path, "this is one of session-inspector's own files (a backup, journal or temp file), not a session; "
            "nothing was written", "invalid",
        )


def refuse_unread_lines(session: Session) -> None:
    """Never apply over a line Gemini CLI reads and this reader could not: the new history would
    leave its message out of what Gemini CLI resumes."""
    unread = next((w for w in session.warnings if w.gemini_reads), None)
    if unread is not None:
        raise StoreError(session.path, f"line {unread.line} could not be read here but Gemini CLI reads it; "
                                       "applying would drop it from what Gemini CLI resumes. Nothing was written",
                         "invalid")


def read_current(path: Path) -> bytes:
    return read_baseline(path).data


def compare_with_preview(path: Path, current: bytes, size: int, digest: str, known: str | None = None) -> str:
    """``same``, ``grown`` (the previewed bytes, then more) or ``changed`` (``known``: sha256 of ``current``)."""
    if len(current) == size and (known or sha256(current)) == digest:
        return "same"
    if len(current) > size and sha256(current[:size]) == digest:
        return "grown"
    return "changed"


def preview_state(session: Session, expected_sha256: str | None = None, expected_size: int | None = None) -> str:
    """Is a preview made from ``session`` still good?  ``same``, ``grown`` or ``changed``.

    (``changed`` also when the file is gone.)  The app asks this on a watch
    event to mark a preview stale; apply refuses on anything but ``same``.
    """
    try:
        current = read_current(session.path)
    except StoreError:
        return "changed"
    size = session.size if expected_size is None else expected_size
    return compare_with_preview(session.path, current, size, expected_sha256 or session.sha256)


def apply_history(
    session: Session,
    turns: Sequence[Turn],
    new_history: Sequence[Content],
    sources: Sequence[Turn | None] | None = None,
    *,
    truncations: Sequence[Truncation] = (),
    journal: JournalInfo | None = None,
    expected_sha256: str | None = None,
    expected_size: int | None = None,
    allow_grown: bool = False,
    hook: files.WriteHook | None = None,
    now: Callable[[], datetime] | None = None,
) -> JournalEntry:
    """Write ``new_history`` as the session's conversation; returns the journal entry.

    ``turns`` is the history the preview was computed from (``history(session)``)
    and ``sources[i]`` the turn ``new_history[i]`` came from (None if new).
    ``expected_sha256``/``expected_size`` name the bytes the preview saw
    (default: the session as loaded).  Raises StoreError, having written
    nothing to the session, when it refuses or fails.
    """
    path = session.path
    refuse_store_file(path)
    refuse_unread_lines(session)
    info = journal or JournalInfo()
    sources = list(sources) if sources is not None else [None] * len(new_history)
    base_sha = expected_sha256 or session.sha256
    base_size = session.size if expected_size is None else expected_size
    # (a JSONL apply only appends, but its revert rewrites: refuse what could not be undone as it was)
    check_writable_now(path, rewrite=True)
    files.refuse_foreign_store(path)
    owner = files.owner_of(path)
    folder = files.ensure_store_dir(path)
    made: list[Path] = []  # folders made for the outputs, then the outputs written
    try:
        with files.locked(folder):
            # Everything below is decided from this one read; the file is
            # checked to still be these bytes right before it is written.
            base = read_baseline(path, appended_to=session.format == "jsonl")
            current = base.data
            if hook:
                hook("read")
            state = compare_with_preview(path, current, base_size, base_sha, base.sha256)
            extra: list[dict[str, Any]] = []
            if state == "changed":
                raise StoreError(
                    path, "the file changed on disk since the preview; reload and preview again. Nothing was written",
                    "changed",
                )
            if state == "grown":
                grown = len(current) - base_size
                if session.format != "jsonl" or not allow_grown:
                    raise StoreError(
                        path,
                        f"the preview is stale: {grown:,} bytes were appended since it was made (Gemini CLI is still "
                        "writing this session?); preview again. Nothing was written",
                        "stale",
                    )
                extra = grown_records(session, current)
            moment = (now or (lambda: datetime.now(UTC)))()
            timestamp = js_timestamp(moment)
            plan = plan_bytes(session, current, turns, new_history, sources, extra, timestamp)
            check_writable(path, base)
            try:  # a revert a kill cut short is finished first (its outputs go before new ones are numbered)
                record, said = finish_landed(path, folder, timestamp)
            except OSError as exc:
                raise StoreError(
                    path, f"cannot write the journal: {describe_os_error(exc)}; nothing was written", "io"
                ) from None
            outputs = plan_outputs(path, truncations)
            in_use = {e.backup for e in record.entries if e.state in ("applied", "incomplete")}
            output_folders = {Path(o).parent for e in record.entries for o in e.output_files}
            said += files.sweep(path, folder, in_use, output_folders | {o.path.parent for o in outputs})
            seq = record.next_seq()
            ident = f"{seq:04d}-{secrets.token_hex(4)}"
            keep = files.swapped_path(path, ident, "apply")
            backup = f"{seq:04d}-{moment.strftime('%Y%m%dT%H%M%S')}-{secrets.token_hex(3)}.bak"
            try:
                files.atomic_write(folder / "backups" / backup, current, hook=hook, no_clobber=True)
            except OSError as exc:
                raise StoreError(
                    path, f"cannot write the backup: {describe_os_error(exc)}; nothing was written", "io"
                ) from None
            entry = JournalEntry(
                id=ident,
                seq=seq,
                applied_at=timestamp,
                file=path.name,
                format=session.format,
                info=info,
                size_before=len(current),
                sha256_before=sha256(current),
                backup=backup,
                planned_sha256=sha256(plan.data),
                planned_length=len(plan.data),
                output_files=tuple(str(o.path) for o in outputs),
                outputs_new=tuple(str(o.path) for o in outputs if not o.exists),
                outputs_new_sha256=tuple(sha256(o.data) for o in outputs if not o.exists),
                turns_before=len(turns),
                turns_after=plan.turns_after,
                records_reused=plan.reused,
                records_adapted=plan.adapted,
                records_created=plan.created,
                housekeeping=tuple(said),
                state="incomplete",
            )
            created: list[Path] = []
            journalled = False
            try:
                append_event(folder, {"event": "apply", **entry.to_json()}, hook)
                journalled = True
                if hook:
                    hook("journalled")
                write_outputs(path, outputs, base.mode, hook, created, made)
                made.extend(created)
                files.make_folders(keep.parent, 0o700)
                if plan.append:
                    regions, carried, after, swap = _append(path, base, plan.data, keep, hook)
                else:
                    replace_file(base, plan.data, hook=hook, keep=keep)
                    regions, carried, after, swap = (), 0, plan.data, CaughtUp(0)
            except (OSError, StoreError) as exc:
                for leftover in [*created, folder / "backups" / backup, keep]:
                    with contextlib.suppress(OSError):
                        leftover.unlink()
                for made_folder in reversed(made):  # the folders made for the outputs, now empty
                    with contextlib.suppress(OSError):
                        made_folder.rmdir()
                message = exc.message if isinstance(exc, StoreError) else describe_os_error(exc)
                if journalled:
                    with contextlib.suppress(OSError):
                        append_event(folder, {"event": "failed", "id": entry.id, "error": message})
                if isinstance(exc, StoreError):
                    raise
                raise StoreError(path, f"could not write: {message}; the session was left as it was", "io") from None
            entry = replace(
                entry, state="applied", regions=regions, carried_lines=carried, size_after=len(after),
                sha256_after=sha256(after), lost_bytes=swap.lost, lost_reason=swap.error, late_bytes=swap.late,
                swapped_size=swap.drained_to if swap.kept is not None else None, swap_note=swap.note,
            )
            with contextlib.suppress(OSError):
                append_event(folder, {
                    "event": "applied", "id": entry.id, "size_after": entry.size_after,
                    "sha256_after": entry.sha256_after, "regions": [r.__dict__ for r in regions],
                    "carried_lines": carried, "lost_bytes": swap.lost, "lost_reason": swap.error,
                    "late_bytes": swap.late, "swapped_size": entry.swapped_size, "swap_note": swap.note,
                })
            files.note_own_write(path, entry.sha256_after or "", len(after))
            return entry
    finally:
        files.hand_over(path, owner, made)


def _append(
    path: Path, base: Baseline, data: bytes, keep: Path, hook: files.WriteHook | None
) -> tuple[tuple[Region, ...], int, bytes, CaughtUp]:
    """Append ``data`` as Gemini CLI's /compress does, but written whole: the file, as it is now,
    plus ``data`` is written beside it and swapped in (``replace_file``).

    A write cut short (a kill, a crash, a full disk) would leave a line without its newline,
    and the next line Gemini CLI appends would join it: one line no reader parses, its message
    lost.  A swap is all or nothing.  Gemini CLI opens the file by name for every line it
    appends, so its next line goes to the new file; a line it writes to the old one (opened before
    the swap) is copied over until no process holds the old one open for writing
    (``replace_recording``), and the old one is kept at ``keep`` for the next apply or revert.
    Only while the file still starts with the bytes that were read; else refuses (StoreError
    ``changed``), leaving the other writer's file.
    """
    old = open_regular(base.path)
    try:
        now = read_fd(old, os.fstat(old).st_size)
        if not (base.same_file(os.fstat(old)) and now[: base.size] == base.data):
            raise changed_error(path)
        # Lines another writer appended since the read stay where they are, before the
        # checkpoint, which would hide their messages: they are written again after it.  Whole
        # lines only; a line still being written is caught up after the swap.  A line that
        # rebuilds the whole history (a rewind, or a resume's $set.messages) is refused: before
        # the checkpoint the compaction would undo it, after it, it would undo the compaction.
        whole = now[: now.rfind(b"\n") + 1] if len(now) > base.size else base.data
        start = base.data.rfind(b"\n") + 1
        between = whole[start:] if len(whole) > base.size else b""
        rewrite = first_history_rewrite(whole, start) if len(whole) > base.size else None
        if rewrite is not None:
            raise StoreError(
                path, f"another program wrote line {rewrite.line:,} while the compaction was being written (Gemini "
                f"CLI?): it {rewrite.does}; the file was left as that program wrote it. Reload and preview again",
                "changed",
            )
        again = b"".join(line + b"\n" for line in between.split(b"\n") if _carried(line))
        regions = [Region(len(whole), len(data), sha256(data))]
        if again:
            regions.append(Region(len(whole) + len(data), len(again), sha256(again)))
        written = whole + data + again
        swap = replace_recording(base, written, old, len(whole), keep=keep, hook=hook)
        after = written + os.pread(old, swap.copied, len(whole)) if swap.copied else written
    finally:
        os.close(old)
    if hook:
        hook("appended")
    return tuple(regions), len(again.splitlines()), after, swap


def _carried(line: bytes) -> bool:
    if not line.strip():
        return False
    try:
        return isinstance(orjson.loads(line), dict)
    except orjson.JSONDecodeError:
        return False
