"""After a recording is swapped: wait for every writer of the old file to finish, and carry its lines.

Gemini CLI appends a line by opening the recording by name, writing the line and closing it.  A
writer that opened the file just before the swap writes its line into the file that was swapped
out, however late (a busy machine can stop it for a whole time slice between ``open()`` and
``write()``).  So the swap is not the end of an apply or a revert: ``drain`` keeps a descriptor on
the swapped-out file and copies what is written to it into the session until no process holds it
open for writing any more, which it learns from the kernel:

* a read lease (``F_SETLEASE``, ``F_RDLCK``) on the swapped-out file is granted only while no open
  file description anywhere may write it (the kernel checks this atomically, opens in progress
  included); the lease is released at once;
* where leases are not available, ``/proc/<pid>/fd`` and ``fdinfo`` of every process this user
  may see are read for a descriptor on the file opened for writing;
* where neither can be read, nothing can be waited for: the copy is made a few times and the result
  says it was not verified (``Drained.verified``).

Once no writer holds it, its size is final: the last bytes are copied and the drain ends.  A
writer that keeps it open past ``WRITER_WAIT_SECONDS`` is reported (``Drained.still_open``); the
caller undoes the swap or says so.  What is left is the instant inside the kernel between an
``open()``'s look-up of the name (before the swap) and its taking write access (after the last
check): the swapped-out file is therefore kept, under a name the store knows, until the next apply
or revert, which carries any line found in it then (``late.carry_swapped``).
"""

from __future__ import annotations

import errno
import fcntl
import os
import signal
import time
from dataclasses import dataclass
from pathlib import Path

from inspector.store.files import WriteHook, append_bytes

WRITER_WAIT_SECONDS = 10.0  # Gemini CLI holds the file for one write; one stopped (Ctrl+Z) holds it for ever

_F_SETSIG = 10
_F_SETLEASE = 1024


def _lease_says(fd: int) -> bool | None:
    """Whether any open file description may write ``fd``'s file (asked of the kernel with a read
    lease, released at once); None where leases are not available here."""
    try:
        # A lease broken while held signals its holder; SIGURG is ignored unless a program asks
        # for it (SIGIO, the default, would end this process).
        fcntl.fcntl(fd, _F_SETSIG, signal.SIGURG)
        fcntl.fcntl(fd, _F_SETLEASE, fcntl.F_RDLCK)
    except BlockingIOError:
        return True
    except OSError as exc:
        if exc.errno == errno.EAGAIN:
            return True
        return None  # EINVAL (no leases on this file system), EACCES (not the owner, no CAP_LEASE), ENOLCK
    fcntl.fcntl(fd, _F_SETLEASE, fcntl.F_UNLCK)
    return False


def _proc_says(fd: int) -> bool | None:
    """Whether a process this user can see holds ``fd``'s file open for writing (``/proc``); None
    where ``/proc`` cannot be read."""
    info = os.fstat(fd)
    try:
        pids = [name for name in os.listdir("/proc") if name.isdigit()]
    except OSError:
        return None
    for pid in pids:
        try:
            fds = os.listdir(f"/proc/{pid}/fd")
        except OSError:
            continue  # gone, or another user's (only root sees those)
        for number in fds:
            try:
                target = os.stat(f"/proc/{pid}/fd/{number}")
                if (target.st_dev, target.st_ino) != (info.st_dev, info.st_ino):
                    continue
                with open(f"/proc/{pid}/fdinfo/{number}", encoding="ascii") as handle:
                    flags = next((line.split()[1] for line in handle if line.startswith("flags:")), "0")
            except (OSError, StopIteration, IndexError):
                continue
            if int(flags, 8) & (os.O_WRONLY | os.O_RDWR):
                return True
    return False


def writers_of(fd: int) -> bool | None:
    """Whether some process holds ``fd``'s file open for writing; None where this cannot be known."""
    said = _lease_says(fd)
    return _proc_says(fd) if said is None else said


@dataclass(frozen=True)
class Drained:
    """What ``drain`` copied from the swapped-out file into the session."""

    copied: int  # bytes of the swapped-out file copied (from where the caller said)
    size: int  # the swapped-out file's size when the drain ended
    verified: bool  # no process held it open for writing at the end (False: it could not be known)
    still_open: bool = False  # a process still held it open for writing when the wait ran out
    out_of_order: bool = False  # another program appended to the session before a late line was copied
    ended_torn: bool = False  # its last line had no newline (a writer killed mid-line): one was added


def drain(old: int, target: Path, start: int, *, hook: WriteHook | None = None,
          wait: float | None = None, expected_end: int | None = None) -> Drained:
    """Copy what is written to the swapped-out file ``old`` from byte ``start`` on to the end of
    ``target`` (the session), whole lines only while a writer may still add to them, until no
    process holds ``old`` open for writing or ``wait`` seconds pass.  ``expected_end``: the
    session's size right after the swap (a copy that lands later than that follows bytes another
    program appended there: ``Drained.out_of_order``).  Raises OSError when a copy fails."""
    deadline = time.monotonic() + (WRITER_WAIT_SECONDS if wait is None else wait)
    consumed, pause, out_of_order, torn, rounds = start, 0.0005, False, False, 0
    while True:
        writers = writers_of(old)
        size = os.fstat(old).st_size
        if size > consumed:
            chunk = os.pread(old, size - consumed, consumed)
            piece = chunk if writers is False else chunk[: chunk.rfind(b"\n") + 1]
            if piece:
                ending = b"\n" if not piece.endswith(b"\n") else b""
                torn = torn or bool(ending)
                at = append_bytes(target, piece + ending, hook=hook)
                if expected_end is not None:
                    out_of_order = out_of_order or at != expected_end
                    expected_end = at + len(piece) + len(ending)
                consumed += len(piece)
        rounds += 1
        if writers is False and os.fstat(old).st_size == consumed:
            return Drained(consumed - start, consumed, True, False, out_of_order, torn)
        if writers is None and rounds >= 3:
            return Drained(consumed - start, consumed, False, False, out_of_order, torn)
        if time.monotonic() >= deadline:
            return Drained(consumed - start, consumed, False, writers is True, out_of_order, torn)
        time.sleep(pause)  # (a writer is between its open() and its close(): a few ms at most)
        pause = min(pause * 2, 0.02)
