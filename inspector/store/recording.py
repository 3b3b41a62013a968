"""Replacing a JSONL recording another program appends to, losing none of its lines.

Gemini CLI appends to a recording by opening it by name for every line.  ``replace_recording``
swaps the new file in (``baseline.replace_file``'s swap, checked on both sides), then drains the
old one (``drain.drain``): every line written to it, before or after the swap, by a program that
opened it before the swap, is copied to the end of the new file, until no process holds the old
file open for writing.  The old file is kept (at ``keep``, a name in the store the journal knows)
so that a line written to it later still (a kill of this process mid-drain, or an ``open()``
caught inside the kernel at the instant of the last check) is carried by the next apply or revert
(``late.carry_swapped``).
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass
from pathlib import Path

from inspector.format import describe_os_error, plural
from inspector.store import drain as draining
from inspector.store.baseline import Baseline, busy_error, exchange, open_regular, read_fd, settle_swap, swap_in
from inspector.store.drain import drain
from inspector.store.errors import StoreError
from inspector.store.files import WriteHook


@dataclass(frozen=True)
class CaughtUp:
    """What another writer appended to a recording while and after it was swapped (``replace_recording``)."""

    copied: int  # bytes copied from the old file to the new one (during the swap and after it)
    lost: int = 0  # bytes that could not be copied, where the swap could not be undone
    error: str = ""  # why they could not
    late: int = 0  # of ``copied``, those the drain copied (written to the old file while or after it was swapped)
    kept: Path | None = None  # where the old file is kept (its lines carried by the next apply or revert)
    drained_to: int | None = None  # the old file's size when it was last copied from
    note: str = ""  # what else a person must know (the copy's order, a writer that could not be waited for)

    def lost_note(self) -> str:
        """What a person must be told when bytes were lost ("" when none were)."""
        if not self.lost:
            return ""
        where = f"; they are kept in {self.kept} and the next apply or revert carries them" if self.kept else ""
        return (f"{plural(self.lost, 'byte', 'bytes')} another writer appended during the swap could not be copied "
                f"to the new file ({self.error}){where}" + ("" if where else " and are not in the session"))


def replace_recording(
    baseline: Baseline, data: bytes, old: int, start: int, *, keep: Path | None = None,
    hook: WriteHook | None = None, wait: float | None = None,
) -> CaughtUp:
    """``replace_file`` for a recording another program (Gemini CLI) appends to, by opening it by
    name for every line: its next line goes to the new file, and what it wrote to the old one
    (``old``, a descriptor on it) from byte ``start`` on is copied over, until no process holds
    the old one open for writing (``drain``).  ``keep``: where the new file is written before the
    swap, and the old one then stays.

    If a copy fails (a full disk), or a writer still holds the old file after ``wait`` seconds,
    the swap is undone while the new file holds nothing but what was written here and a start of
    the old file's bytes, and StoreError (``io``, ``busy``) raised: the file is left as the other
    program wrote it.  Where it cannot be undone (this filesystem cannot swap, or the other program
    already appended to the new file too), the new file stays and the bytes not copied are counted
    in ``CaughtUp.lost`` (they stay in the kept old file).
    """
    wait = draining.WRITER_WAIT_SECONDS if wait is None else wait
    swapped = swap_in(baseline, data, hook=hook, grown_ok=True, temp=keep)
    copied, drained_to = 0, start
    if swapped is not None and keep is not None:
        with contextlib.suppress(OSError):
            os.chmod(swapped, 0o600)  # kept in the store, as private as a backup
    try:
        if not baseline.same_file(os.fstat(old)):
            return CaughtUp(0)
        drained = drain(old, baseline.path, start, hook=hook, wait=wait, expected_end=len(data))
        copied, drained_to = drained.copied, drained.size
        notes = []
        if drained.still_open:
            if swapped is not None and _only_ours(baseline.path, data, old, start) \
                    and _swap_back(swapped, baseline.path):
                _drop(swapped)
                swapped = None
                raise busy_error(baseline.path, wait)
            notes.append(f"another program still held the old file open for writing after {wait:g} s; what it "
                         "writes there is carried by the next apply or revert")
        elif not drained.verified:
            notes.append("which programs still wrote to the old file could not be known here (no file leases, "
                         "no /proc); lines written to it later are carried by the next apply or revert")
        if drained.out_of_order:
            notes.append("a line written to the old file after the swap was copied after a line another program "
                         "had appended to the new one: the two are in the order they were copied, not written")
        if drained.ended_torn:
            notes.append("the old file's last line was cut short (its writer stopped mid-line); it was copied "
                         "ended by a newline, and no reader reads it")
        return CaughtUp(copied, late=copied, kept=swapped if keep is not None else None, drained_to=drained_to,
                        note="; ".join(notes))
    except OSError as exc:
        if swapped is not None and _only_ours(baseline.path, data, old, start) and _swap_back(swapped, baseline.path):
            _drop(swapped)
            swapped = None
            raise StoreError(
                baseline.path, f"could not copy what another program appended during the swap "
                f"({describe_os_error(exc)}); the swap was undone and the session left as that program wrote it",
                "io",
            ) from None
        size = os.fstat(old).st_size
        return CaughtUp(copied, max(size - drained_to, 0), describe_os_error(exc),
                        kept=swapped if keep is not None else None, drained_to=drained_to)
    finally:
        settle_swap(baseline.path, swapped, keep=keep is not None)


def _drop(path: Path) -> None:
    with contextlib.suppress(OSError):
        os.unlink(path)


def _only_ours(target: Path, data: bytes, old: int, start: int) -> bool:
    """Does ``target`` hold ``data`` plus at most a start of the old file's bytes after ``start``
    (a copy cut short), and nothing another program wrote to it?"""
    try:
        fd = open_regular(target)
    except (OSError, StoreError):
        return False
    try:
        now = read_fd(fd, os.fstat(fd).st_size)
    finally:
        os.close(fd)
    tail = now[len(data):]
    return now.startswith(data) and os.pread(old, len(tail), start) == tail


def _swap_back(old: Path, target: Path) -> bool:
    """Put the old file (now named ``old``) back at ``target``; the new one takes the name ``old``."""
    try:
        return exchange(old, target)
    except OSError:
        return False
