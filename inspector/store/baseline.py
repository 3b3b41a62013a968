"""The session file as one read saw it, and replacing it only if it is still that.

An apply decides everything from one read of the file.  ``read_baseline``
keeps those bytes and which file they came from; ``replace_file`` swaps the
new file in only if the file is still exactly that, checked right before the
swap and once more on what the swap took away (``renameat2`` with
``RENAME_EXCHANGE``), so another writer's change (Gemini CLI rewriting the
file by temp + rename, or in place) is never overwritten: the swap is undone
and the apply refused.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import hashlib
import json
import os
import stat
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from inspector.format import describe_os_error
from inspector.session.loader import not_a_file
from inspector.store import drain as draining
from inspector.store.drain import writers_of
from inspector.store.errors import StoreError
from inspector.store.files import WriteHook, fsync_dir, temp_name, write_temp


@dataclass(frozen=True)
class Baseline:
    """A session file as one read saw it: the bytes, and the file they came from.

    Everything an apply or revert decides is decided from these bytes, and
    the file is checked to still be exactly this (same file, same bytes)
    right before it is replaced.
    """

    path: Path  # the file itself (a symlink resolved)
    data: bytes
    sha256: str
    dev: int
    ino: int
    mtime_ns: int
    ctime_ns: int
    mode: int
    uid: int
    gid: int
    links: int  # the names the file has (hard links)

    @property
    def size(self) -> int:
        return len(self.data)

    def same_file(self, info: os.stat_result) -> bool:
        return (info.st_dev, info.st_ino) == (self.dev, self.ino)

    def untouched(self, info: os.stat_result) -> bool:
        # (not ctime: a rename moves it, and the bytes are compared anyway)
        return self.same_file(info) and (info.st_size, info.st_mtime_ns) == (len(self.data), self.mtime_ns)


def _stat_key(info: os.stat_result) -> tuple[int, ...]:
    return (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)


def read_fd(fd: int, size: int) -> bytes:
    """Every byte of an open file from offset 0, however it grows meanwhile."""
    chunks, at = [], 0
    while True:
        chunk = os.pread(fd, max(size - at, 1 << 16), at)
        if not chunk:
            break
        chunks.append(chunk)
        at += len(chunk)
    return b"".join(chunks)


def regular_file_problem(path: Path) -> str | None:
    """Why ``path`` is not a session file (None if it is a regular file), in the reader's words,
    without opening it (a FIFO is never waited on)."""
    try:
        info = os.stat(path)
    except FileNotFoundError:
        return "no such file"
    except OSError as exc:
        return f"cannot read: {describe_os_error(exc)}"
    kind = not_a_file(info.st_mode)
    return None if kind is None else f"is {kind}, not a session file"


def open_regular(path: Path) -> int:
    """An O_RDONLY descriptor on a regular file (a FIFO or device is refused, never waited on)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        raise StoreError(path, "the session file is gone; nothing was written", "changed") from None
    except OSError as exc:
        raise StoreError(path, f"cannot read: {describe_os_error(exc)}; nothing was written", "io") from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise StoreError(path, "not a regular file (a folder, FIFO or device); nothing was written", "invalid")
    return fd


def read_baseline(path: Path, *, appended_to: bool = False, tries: int = 5) -> Baseline:
    """Read ``path`` once, keeping which file the bytes came from.

    A read that overlaps another writer (the file's size or times move while
    it is read) is read again, a few times at most.  ``appended_to`` (a JSONL
    recording, which Gemini CLI only appends to): the bytes up to the size
    the file had when the read began are the baseline, whatever is appended
    meanwhile.
    """
    target = Path(os.path.realpath(path))  # (a symlink loop is left for open to refuse, not raised here)
    fd = open_regular(target)
    try:
        for _ in range(tries):
            before = os.fstat(fd)
            data = os.pread(fd, before.st_size, 0) if appended_to else read_fd(fd, before.st_size)
            after = os.fstat(fd)
            settled = _stat_key(before) == _stat_key(after) and len(data) == after.st_size
            if settled or (appended_to and len(data) == before.st_size and after.st_size >= before.st_size):
                return Baseline(
                    target, data, hashlib.sha256(data).hexdigest(), after.st_dev, after.st_ino,
                    after.st_mtime_ns, after.st_ctime_ns, after.st_mode, after.st_uid, after.st_gid, after.st_nlink,
                )
    finally:
        os.close(fd)
    raise StoreError(
        path, "the file kept changing while it was read (another program is writing it); "
        "try again once it is quiet. Nothing was written", "changed",
    )


def _hash_of(path: Path, length: int | None = None) -> tuple[os.stat_result, str] | None:
    """(stat, sha256 of the first ``length`` bytes, or all) of the file at ``path``; None if gone."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return None
        data = read_fd(fd, info.st_size) if length is None else os.pread(fd, length, 0)
        return info, hashlib.sha256(data).hexdigest()
    finally:
        os.close(fd)


def still(baseline: Baseline, at: Path | None = None, *, grown_ok: bool = False, content: bool = True) -> bool:
    """Is the file at ``at`` (default: the baseline's path) still the baseline's file and bytes?

    ``grown_ok``: bytes appended after the baseline's are allowed.  With
    ``content`` the bytes are hashed again (a rewrite of the same size within
    one tick of the file system's clock changes neither size nor times);
    without, only which file it is, its size and its times are compared.
    """
    target = at or baseline.path
    if not content:
        try:
            info = os.stat(target)
        except FileNotFoundError:
            return False
        if grown_ok:
            return baseline.same_file(info) and info.st_size >= baseline.size
        return baseline.untouched(info)
    found = _hash_of(target, baseline.size if grown_ok else None)
    if found is None:
        return False
    info, digest = found
    if not baseline.same_file(info) or digest != baseline.sha256:
        return False
    return info.st_size >= baseline.size if grown_ok else baseline.untouched(info)


def history_rewrite(line: bytes) -> str | None:
    """What a JSONL line does to the whole history when it rebuilds it: it rewinds it
    (``$rewindTo``) or sets every message (``$set.messages``, as Gemini CLI writes when it
    resumes a session); None for any other line."""
    if b'"$rewindTo"' not in line and not (b'"$set"' in line and b'"messages"' in line):
        return None  # (a cheap test first: most lines are messages)
    try:
        record = json.loads(line)
    except ValueError:
        return None
    if not isinstance(record, dict):
        return None
    if "$rewindTo" in record:
        return "rewinds the history ($rewindTo)"
    update = record.get("$set")
    return "sets the whole history ($set.messages)" if isinstance(update, dict) and "messages" in update else None


@dataclass(frozen=True)
class Rewrite:
    """A JSONL line that rebuilds the whole history (``history_rewrite``)."""

    line: int  # its number, from 1
    does: str  # what it does, in words
    start: int  # its bytes: data[start:end] (without the newline)
    end: int


def first_history_rewrite(data: bytes, start: int, skip: Sequence[tuple[int, int]] = ()) -> Rewrite | None:
    """The first line of ``data`` from offset ``start`` on that rebuilds the whole history
    (``history_rewrite``), leaving out lines that begin inside one of the ``skip`` spans (start,
    end); None when there is none."""
    at = start
    while at < len(data):
        end = data.find(b"\n", at)
        end = len(data) if end < 0 else end
        does = None if any(lo <= at < hi for lo, hi in skip) else history_rewrite(data[at:end])
        if does is not None:
            return Rewrite(data.count(b"\n", 0, at) + 1, does, at, end)
        at = end + 1
    return None


def changed_error(path: Path) -> StoreError:
    return StoreError(
        path, "another program changed the file while the compaction was being written (Gemini CLI?); "
        "it was left as that program wrote it. Preview again", "changed",
    )


# renameat2(RENAME_EXCHANGE): swap two names atomically, so the name the
# session had ends up on what it held at the very moment of the swap.
_AT_FDCWD = -100
_RENAME_EXCHANGE = 2
try:
    _renameat2: Callable[..., int] | None = ctypes.CDLL(None, use_errno=True).renameat2
except (AttributeError, OSError):
    _renameat2 = None


def exchange(a: Path, b: Path) -> bool:
    """Swap the files named ``a`` and ``b``; False where the system cannot."""
    if _renameat2 is None:
        return False
    if _renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) == 0:
        return True
    error = ctypes.get_errno()
    if error in (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP):
        return False
    raise OSError(error, os.strerror(error), str(b))


def check_writable(path: Path, baseline: Baseline, *, rewrite: bool = True) -> None:
    """Refuse a file its user could not write (or that is marked read-only, even for root),
    or, for a ``rewrite``, one whose owner or group the new file could not keep."""
    problem = writable_problem(baseline.path, baseline.mode, baseline.uid, baseline.gid, baseline.links,
                               rewrite=rewrite)
    if problem:
        raise StoreError(path, f"{problem}; nothing was written", "io")


def check_writable_now(path: Path, *, rewrite: bool) -> None:
    """``check_writable`` on the file as it is now: asked before anything is created for an
    apply, so that one refused for this reason leaves no trace (not even the store's folder)."""
    target = Path(os.path.realpath(path))
    try:
        info = os.stat(target)
    except OSError:
        return  # the read under the lock says what is wrong
    problem = writable_problem(target, info.st_mode, info.st_uid, info.st_gid, info.st_nlink, rewrite=rewrite)
    if problem:
        raise StoreError(path, f"{problem}; nothing was written", "io")


def writable_problem(target: Path, mode: int, uid: int, gid: int, links: int, *, rewrite: bool) -> str | None:
    """Why this process must not write ``target`` (its ``mode``, owner ``uid``, group ``gid`` and
    number of names ``links``), or None."""
    if not mode & 0o222:
        return "the file is read-only"
    if not os.access(target, os.W_OK):
        return "you cannot write the file (permission denied)"
    if rewrite and links > 1:
        return (f"the file has {links} names (hard links); it is written as a new file, which its other names "
                "would not follow (they would keep the old bytes, and lines written through them would be lost)")
    me = os.geteuid()
    if not rewrite or me == 0:
        return None
    if uid != me:
        return f"the file belongs to another user (uid {uid}); a rewrite would make it yours. Run this as its owner"
    if gid not in (os.getegid(), *os.getgroups()):
        return f"the file's group (gid {gid}) is not one of yours; a rewrite would change it"
    return None


def replace_file(
    baseline: Baseline, data: bytes, *, hook: WriteHook | None = None, grown_ok: bool = False,
    keep: Path | None = None, wait: float | None = None,
) -> None:
    """Replace the baseline's file with ``data``, only if it is still the baseline.

    The new file keeps the old one's mode, owner and group.  The check is
    made right before the swap, and again on the file the swap took away,
    once no process holds it open for writing any more (``drain.writers_of``:
    a program that opened the file before the swap rewrites the old one):
    if another program replaced or rewrote it meanwhile, the swap is undone
    and StoreError(``changed``) raised, its file left in place.  ``keep``:
    where the new file is written before the swap, and the old one then
    stays for the next apply or revert (``late.carry_swapped``: removed if
    untouched, kept and said if written since); default: a temp name
    beside the file, removed once settled.
    """
    swapped = swap_in(baseline, data, hook=hook, grown_ok=grown_ok, temp=keep)
    if swapped is not None:
        _rewritten_after_swap(baseline, data, swapped, grown_ok,
                              draining.WRITER_WAIT_SECONDS if wait is None else wait)
        if keep is not None:  # kept for the next apply or revert, which says so if it was written since
            with contextlib.suppress(OSError):
                os.chmod(swapped, 0o600)
    settle_swap(baseline.path, swapped, keep=keep is not None)


def _rewritten_after_swap(baseline: Baseline, data: bytes, swapped: Path, grown_ok: bool, wait: float) -> None:
    """Wait until no process holds the swapped-out file (now at ``swapped``) open for writing, then
    check it is still the baseline; if another program wrote it after the swap, or still holds it
    after ``wait`` seconds, the swap is undone (while the session is still only ``data``) and
    StoreError raised."""
    try:
        fd = open_regular(swapped)
    except StoreError:
        return
    try:
        deadline, pause = time.monotonic() + wait, 0.0005
        while (writers := writers_of(fd)) and time.monotonic() < deadline:
            time.sleep(pause)  # (a writer between its open() and its close())
            pause = min(pause * 2, 0.02)
    finally:
        os.close(fd)
    if not writers and still(baseline, swapped, grown_ok=grown_ok):
        return
    target = baseline.path
    ours = _hash_of(target)
    if ours is not None and ours[1] == hashlib.sha256(data).hexdigest() and exchange(swapped, target):
        with contextlib.suppress(OSError):
            os.unlink(swapped)
        if writers:
            raise busy_error(target, wait)
        raise changed_error(target)
    # the new file was rewritten too: it is the other program's now, and stays


def busy_error(path: Path, wait: float) -> StoreError:
    return StoreError(
        path, f"another program (Gemini CLI?) kept the session open for writing for over {wait:g} s while it "
        "was being swapped; the swap was undone and the session left as that program writes it. Try again "
        "once it is quiet", "busy",
    )


def swap_in(baseline: Baseline, data: bytes, *, hook: WriteHook | None, grown_ok: bool,
          temp: Path | None = None) -> Path | None:
    """``replace_file`` up to the swap: returns the name the old file has now where it was swapped
    (``temp``, or a temp name beside it), None where it was replaced."""
    target = baseline.path
    keep = temp
    temp = write_temp(target, data, hook, mode=baseline.mode, owner=(baseline.uid, baseline.gid),
                      temp=temp_name(keep) if keep is not None else None)
    try:
        if keep is not None:  # (whole and flushed before it takes the name a later run looks at)
            os.link(temp, keep)
            os.unlink(temp)
            temp = keep
        # A cheap look first (no swap at all if it visibly changed); the
        # bytes are compared on what the swap took away, below.
        if not still(baseline, grown_ok=grown_ok, content=False):
            raise changed_error(target)
        if hook:
            hook("checked")
        swapped = exchange(temp, target)
        if not swapped:
            if not still(baseline, grown_ok=grown_ok):  # no swap here: compare the bytes before replacing
                raise changed_error(target)
            os.replace(temp, target)
        elif not still(baseline, temp, grown_ok=grown_ok):
            # Someone replaced or rewrote it between the check and the swap.
            exchange(temp, target)
            raise changed_error(target)
        if hook:
            hook("renamed")
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise
    return temp if swapped else None


def settle_swap(target: Path, old: Path | None, *, keep: bool = False) -> None:
    """After a swap: the old file's name removed (unless ``keep``), the folders flushed.  The swap
    has happened: a failure to flush now must not be reported as a write that did not happen
    (the caller would say the file was left as it was, and drop its backup)."""
    if old is not None and not keep:
        with contextlib.suppress(OSError):
            os.unlink(old)
    for folder in {target.parent, *((old.parent,) if old is not None else ())}:
        with contextlib.suppress(OSError):
            fsync_dir(folder)
