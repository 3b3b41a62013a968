"""What was written to a swapped-out file after its apply or revert ended, carried into the session.

An apply or a revert of a recording keeps the file it swapped out in the store's ``swapped/``
folder (``files.swapped_path``), named after the apply and what swapped it (``<id>-apply``,
``<id>-revert``): a writer that opened the session just before the swap may still write a line
into it after the drain ended (``drain``), or after a ``kill -9`` of the apply.  The next apply or
revert of the session, under the store's lock, looks at each such file (``carry_swapped``):

* a file that holds the bytes the operation meant to write (its swap never happened, or was
  undone) is removed;
* otherwise it is the old file: the lines written to it after the point the journal says it was
  copied to (``swapped_size``; or, after a kill, every line the session does not hold after the
  apply's start, counted line by line) are appended to the session, the journal says so
  (``carried`` event), and the file is removed.

A legacy JSON file is rewritten whole by Gemini CLI, so its late write cannot be carried line by
line: a swapped-out legacy file that is neither what was read nor what was written is kept, and said.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
from collections import Counter
from pathlib import Path

from inspector.format import plural
from inspector.store import files
from inspector.store.baseline import open_regular, read_fd
from inspector.store.errors import StoreError
from inspector.store.journal import Journal, JournalEntry, Region, append_event


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def find_regions(data: bytes, entry: JournalEntry, planned: bytes | None = None) -> tuple[Region, ...] | None:
    """The bytes the apply wrote, checked by hash (found by content if the apply never finished).

    A recording's apply appends whole lines at a line start from ``size_before`` on.  Found by content,
    they are looked for by themselves when known (``planned``, read back from where the session holds
    them: one linear search), else by hash at each line start whose span ends a line (a writer that
    kept appending would otherwise cost a hash of the whole plan for each of its lines)."""
    if entry.state == "applied":
        ok = all(
            r.offset >= entry.size_before and sha256(data[r.offset : r.offset + r.length]) == r.sha256
            for r in entry.regions
        )
        return entry.regions if ok else None
    length, digest = entry.planned_length, entry.planned_sha256
    if length is None or digest is None:
        return None
    if planned is not None and len(planned) == length and sha256(planned) == digest:
        at = data.find(planned, entry.size_before)
        while at != -1 and at != entry.size_before and data[at - 1] != 0x0A:
            at = data.find(planned, at + 1)
        return None if at == -1 else (Region(at, length, digest),)
    start = entry.size_before
    while start <= len(data) - length:
        if (length == 0 or data[start + length - 1] == 0x0A) and sha256(data[start : start + length]) == digest:
            return (Region(start, length, digest),)
        newline = data.find(b"\n", start)
        if newline == -1:
            break
        start = newline + 1
    return None


def planned_bytes(data: bytes, entry: JournalEntry) -> bytes | None:
    """The bytes the apply planned to append, where ``data`` holds them at its regions (checked by hash)."""
    for r in entry.regions:
        if r.length == entry.planned_length and r.sha256 == entry.planned_sha256:
            held = data[r.offset : r.offset + r.length]
            if sha256(held) == r.sha256:
                return held
    return None


def _checkpoint_in(data: bytes, entry: JournalEntry, current: bytes) -> tuple[Region, ...] | None:
    """Where ``data`` holds the lines the apply appended (its regions, else found by content; the
    session ``current`` may hold them at its regions, to look for)."""
    if entry.regions and all(sha256(data[r.offset : r.offset + r.length]) == r.sha256 for r in entry.regions):
        return entry.regions
    return find_regions(data, JournalEntry(**{**entry.__dict__, "state": "incomplete"}),
                        planned_bytes(current, entry))


def _lines(data: bytes) -> list[bytes]:
    """Whole lines, each with its newline (a last line without one gets it)."""
    return [line + b"\n" for line in data.split(b"\n")[: -1 if data.endswith(b"\n") else None] if line]


def _missing(candidates: bytes, session_tail: bytes) -> bytes:
    """The lines of ``candidates`` the session's tail does not hold (counted: a line written twice
    and found once is missing once), in their order."""
    have = Counter(_lines(session_tail))
    out = []
    for line in _lines(candidates):
        if have[line]:
            have[line] -= 1
        else:
            out.append(line)
    return b"".join(out)


def _late_bytes(current: bytes, entry: JournalEntry, kind: str, data: bytes) -> bytes | None:
    """What the swapped-out file ``data`` holds that the session ``current`` lacks; None when
    ``data`` is not the old file (it holds what the operation wrote: the swap never stood)."""
    regions = _checkpoint_in(data, entry, current)
    if kind == "apply":
        if regions is not None:
            return None  # the new file, never swapped in (or swapped back)
        drained = entry.swapped_size
    else:
        if regions is None:
            return None  # the restored file, never swapped in
        drained = entry.revert_swapped_size
    if drained is not None:
        tail = data[drained:]
        return tail + (b"\n" if tail and not tail.endswith(b"\n") else b"")
    # cut short by a kill: every line after the apply's start, less the apply's own, that the session lacks
    cut, at = [], entry.size_before
    for region in sorted(regions or (), key=lambda r: r.offset):
        cut.append(data[at : region.offset])
        at = max(at, region.offset + region.length)
    cut.append(data[at:])
    return _missing(b"".join(cut), current[entry.size_before :])


def carry_swapped(path: Path, folder: Path, journal: Journal, at: str) -> list[str]:
    """Carry into the session what each kept swapped-out file holds and it lacks, then remove the
    file; returns what a person must be told (one line each)."""
    kept = folder / files.SWAPPED_DIR
    try:
        names = sorted(os.listdir(kept))
    except OSError:
        return []
    by_id = {entry.id: entry for entry in journal.entries}
    said: list[str] = []
    for name in names:
        ident, kind = [*name.rsplit("-", 2), ""][:2] if name.count("-") >= 3 else ("", "")
        entry = by_id.get(ident)
        file = kept / name
        if entry is None or kind not in ("apply", "revert"):
            continue  # nothing this store wrote: left alone
        try:
            data = files.read_own_file(file)
            current = _session_bytes(path)
        except (OSError, StoreError):
            continue
        if entry.format != "jsonl":
            if sha256(data) in (entry.sha256_before, entry.sha256_after, entry.planned_sha256):
                _remove(file)
            else:
                said.append(f"{file} holds what another program wrote to the session while it was swapped; it is "
                            "kept for you to compare (remove it when done)")
            continue
        late = _late_bytes(current, entry, kind, data)
        if late:
            offset = files.append_bytes(path, late)
            lines = late.count(b"\n")
            append_event(folder, {"event": "carried", "id": entry.id, "from": name, "at": at, "offset": offset,
                                  "bytes": len(late), "lines": lines})
            said.append(f"{plural(lines, 'line', 'lines')} another program wrote to the session while "
                        f"it was swapped ({kind} {entry.id}) were found in {file} and appended to it now")
        _remove(file)
    return said


def _session_bytes(path: Path) -> bytes:
    fd = open_regular(path)
    try:
        return read_fd(fd, os.fstat(fd).st_size)
    finally:
        os.close(fd)


def _remove(file: Path) -> None:
    with contextlib.suppress(OSError):
        file.unlink()
