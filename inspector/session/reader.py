"""Reading a big recording from its file: block by block, in two processes at once.

A 100 MB recording is not held in memory: it is read in blocks of about
``BLOCK_BYTES`` that end at a line break, once forwards (line numbers, a NUL
or CR byte, the checksum) and once backwards to scan (``jsonl.scan``), each
block dropped when done.  Messages are later read again from the file by
their place (see ``records.MessageList``).

Lines are independent, so a big file is scanned in two parts at once: this
process takes the first ~55%, a second process the rest (it also hashes the
whole file) and sends its items back, marshalled.  The second process is

* a fork, when this process runs a single thread (the command line): it
  starts at once and shares everything;
* a fresh interpreter (``python -m inspector.session.reader``) given the
  file's descriptor, when other threads run (the app): forking a threaded
  process is unsafe (a lock held by another thread stays locked in the child).

Both faces read through here (``loader.load``); a ``ReadWatch`` reports
progress and stops the read between blocks (``ReadCancelled``).

This module is not compiled (setup.py): its loops go a block at a time, and
``python -m`` runs it as the second process.
"""

from __future__ import annotations

import contextlib
import gc
import hashlib
import marshal
import mmap
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from inspector.session.errors import ReadCancelled
from inspector.session.jsonl import count_newlines, line_count, scan

PARALLEL_MIN_BYTES = 8 << 20  # below this a second process costs more than it saves
BLOCK_BYTES = 4 << 20
Block = tuple[int, int, int]  # (start, end, number of its first line)
Items = list[tuple[Any, ...]]
Parallel = Literal["fork", "spawn"]


def _quiet(phase: str, done: int, total: int) -> None:
    pass


def _never() -> bool:
    return False


@dataclass(frozen=True)
class ReadWatch:
    """How a long read says how far it got, and learns it should stop (between blocks)."""

    progress: Callable[[str, int, int], None] = _quiet  # (phase, bytes done, bytes in all)
    cancelled: Callable[[], bool] = _never

    def check(self) -> None:
        """Raises ReadCancelled when the reader should stop."""
        if self.cancelled():
            raise ReadCancelled

    def report(self, phase: str, done: int, total: int) -> None:
        """Say how far; raises ReadCancelled when the reader should stop."""
        self.check()
        self.progress(phase, done, total)


QUIET = ReadWatch()


def second_process() -> Parallel | None:
    """How work may be shared with a second process here, or None: not at all (one CPU, or
    ``SESSION_INSPECTOR_SERIAL``).  A fork only from a single-threaded process (the command
    line); anywhere else a fresh interpreter."""
    if os.environ.get("SESSION_INSPECTOR_SERIAL") or (os.cpu_count() or 1) < 2:
        return None
    if threading.active_count() == 1 and hasattr(os, "fork"):
        return "fork"
    return "spawn"


def parallel_mode(size: int) -> Parallel | None:
    """How a file of ``size`` bytes is read in two processes here, or None: in one."""
    return second_process() if size >= PARALLEL_MIN_BYTES else None


# -- two processes ----------------------------------------------------------------------------------


def _payload_file() -> int:
    """A file in memory for a second process to leave its marshalled value in: it waits there, not in
    a pipe the child would block on until this process is ready for it (on Linux an anonymous
    ``memfd``; elsewhere, or where it is refused, a temporary file already unlinked).  Raises OSError
    when neither can be made."""
    if hasattr(os, "memfd_create"):
        with contextlib.suppress(OSError):  # (a sandbox may refuse it)
            return os.memfd_create("session-inspector-part", os.MFD_CLOEXEC)
    import tempfile  # (only here: it imports shutil and random, 4 ms at every start)

    handle, path = tempfile.mkstemp(prefix="session-inspector-part-")
    os.unlink(path)
    return handle


def _take_payload(fd: int, sent: bool) -> tuple[bool, Any]:
    """``(True, value)`` of what a second process left in ``fd`` (``_payload_file``) when it says it
    ``sent`` it, else ``(False, None)``; closes ``fd``."""
    try:
        size = os.fstat(fd).st_size
        if not sent or not size:
            return (False, None)
        with mmap.mmap(fd, size, prot=mmap.PROT_READ) as view:  # (read in place: no copy of it is made)
            return (True, marshal.loads(view))
    finally:
        os.close(fd)


class ForkedCall:
    """``work()`` begun now in a forked child; ``result()`` waits for its value, left marshalled (so
    it must be made of plain values) in a file in memory (``_payload_file``); ``kill()`` stops a child
    whose value is no longer wanted.  Only for a single-threaded process (``second_process``).  Where
    no such file can be made, no child is begun and ``result()`` says it sent nothing."""

    def __init__(self, work: Callable[[], Any]) -> None:
        self._pid, self._payload = 0, -1
        try:
            payload_fd = _payload_file()
        except OSError:
            return
        pid = os.fork()
        if pid == 0:  # the child: do the work, leave it, exit at once
            status = 1
            try:
                payload = marshal.dumps(work())
                with os.fdopen(payload_fd, "wb") as out:
                    out.write(payload)
                status = 0
            finally:
                os._exit(status)
        self._pid, self._payload = pid, payload_fd

    @property
    def pid(self) -> int:
        """The child's process id (0 once it has been waited for)."""
        return self._pid

    def result(self) -> tuple[bool, Any]:
        """``(True, value)`` once the child has sent it, ``(False, None)`` when it failed (or never began)."""
        if not self._pid:
            return (False, None)
        _, status = os.waitpid(self._pid, 0)
        self._pid = 0
        payload, self._payload = self._payload, -1
        return _take_payload(payload, status == 0)

    def kill(self) -> None:
        if self._payload >= 0:
            os.close(self._payload)
            self._payload = -1
        if self._pid:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self._pid, signal.SIGKILL)
            os.waitpid(self._pid, 0)
            self._pid = 0


def in_two_processes(first: Callable[[], Any], second: Callable[[], Any]) -> tuple[Any, Any]:
    """``(first(), second())``, with ``second`` run at the same time in a forked child
    (``ForkedCall``).  If the child fails, ``second`` runs here instead."""
    child = ForkedCall(second)
    try:
        done = first()
    except BaseException:
        child.kill()  # stopped (cancelled) or failed: the child's part is not wanted
        raise
    sent, value = child.result()
    return done, value if sent else second()


def beside_a_spawned_process(first: Callable[[], Any], fd: int, middle: int, size: int) -> tuple[Any, Any]:
    """``(first(), scan_tail(fd, middle, size))``, the second run at the same time by a fresh interpreter
    that is handed the descriptor (safe from a threaded process) and one to leave its part in
    (``_payload_file``).  If it fails, it runs here instead."""
    package_root = str(Path(__file__).resolve().parents[2])  # the same inspector package as this one
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (package_root, env.get("PYTHONPATH")) if p)
    try:
        payload = _payload_file()
    except OSError:  # nowhere for its part: both parts read here
        return first(), scan_tail(fd, middle, size)
    try:
        child = subprocess.Popen(
            [sys.executable, "-m", "inspector.session.reader", str(fd), str(middle), str(size), str(payload)],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, pass_fds=(fd, payload),
            env=env,
        )
    except BaseException:
        os.close(payload)
        raise
    try:
        done = first()
        status = child.wait()
    except BaseException:  # (stopped or failed, here or while waiting: the child's part is not wanted)
        os.close(payload)
        child.kill()
        child.wait()
        raise
    sent, value = _take_payload(payload, status == 0)
    return done, value if sent else scan_tail(fd, middle, size)


def scan_file(data: bytes) -> tuple[Items, int]:
    """Every item of ``data`` held in memory and its line count; big files in two processes at once
    when this process may fork (the child shares ``data`` without a copy), else in one."""
    lines = line_count(data)
    if parallel_mode(len(data)) != "fork" or b"\r" in data:
        return scan(data), lines
    # The child also has to send its items back: give it a little less than half.
    middle = data.find(b"\n", len(data) * 53 // 100) + 1
    if middle <= 0 or middle >= len(data):
        return scan(data), lines
    first_of_second = count_newlines(data, 0, middle) + 1
    first, second = in_two_processes(lambda: scan(data, 0, middle, 1),
                                     lambda: scan(data, middle, None, first_of_second))
    return first + second, lines


# -- block by block ---------------------------------------------------------------------------------


def read_at(fd: int, offset: int, length: int) -> bytes:
    """Exactly ``length`` bytes at ``offset`` (fewer only at the end of the file)."""
    chunks = []
    while length > 0:
        chunk = os.pread(fd, length, offset)
        if not chunk:
            break
        chunks.append(chunk)
        offset += len(chunk)
        length -= len(chunk)
    return chunks[0] if len(chunks) == 1 else b"".join(chunks)


class BinaryData(Exception):
    """The file holds a NUL byte: no session file does (the first one's offset and line)."""

    def __init__(self, offset: int, line: int) -> None:
        super().__init__(offset, line)
        self.offset, self.line = offset, line


@dataclass
class Blocks:
    """What a forward pass over ``[start, stop)`` learned."""

    blocks: list[Block] = field(default_factory=list)
    newlines: int = 0
    odd: str | None = None  # "nul", "cr" or "short": this reader cannot go on (the caller reads another way)
    nul: tuple[int, int] | None = None  # the first NUL byte's (offset, line), when ``odd`` is "nul"


def forward(fd: int, start: int, stop: int, first_line: int, hasher: Any = None, keep: bool = True,
            on_block: Callable[[int], None] | None = None) -> Blocks:
    """Line-aligned blocks covering ``[start, stop)`` (``keep=False``: only count and hash);
    ``on_block(bytes)`` after each block."""
    found = Blocks()
    pos = start
    line = first_line
    while pos < stop:
        chunks: list[bytes] = []
        size = cut = 0
        while cut == 0:  # until a line ends in the block (a line may be longer than a block)
            want = min(BLOCK_BYTES, stop - pos - size)
            more = read_at(fd, pos + size, want)
            if len(more) < want:
                found.odd = "short"  # the file shrank while being read
                return found
            nul = more.find(b"\x00")
            if nul != -1:  # said at once: a long run of NULs is never gathered into one "line"
                found.odd = "nul"  # (the chunks before this one in the block hold no line break)
                found.nul = (pos + size + nul, line + count_newlines(more, 0, nul))
                return found
            chunks.append(more)  # each chunk searched once, joined once: a long line costs its length
            size += len(more)
            if pos + size == stop:
                cut = size
            else:
                end = more.rfind(b"\n")
                cut = size - len(more) + end + 1 if end != -1 else 0
        data = chunks[0] if len(chunks) == 1 else b"".join(chunks)
        block = memoryview(data)[:cut]
        if data.find(b"\r", 0, cut) != -1:
            found.odd = "cr"
            return found
        if hasher is not None:
            hasher.update(block)
        count = count_newlines(data, 0, cut)
        if keep:
            found.blocks.append((pos, pos + cut, line))
        line += count
        found.newlines += count
        pos += cut
        if on_block is not None:
            on_block(cut)
    return found


def backward(fd: int, blocks: list[Block], later: set[str] | None = None,
             on_block: Callable[[int], None] | None = None) -> Items:
    """The items of ``blocks``, scanned from the last block to the first, in file order;
    ``on_block(bytes)`` after each block."""
    later = set() if later is None else later
    parts: list[Items] = []
    for k in range(len(blocks) - 1, -1, -1):
        start, end, line = blocks[k]
        parts.append(scan(read_at(fd, start, end - start), 0, None, line, base=start, later=later))
        if on_block is not None:
            on_block(end - start)
    items: Items = []
    for k in range(len(parts) - 1, -1, -1):
        items.extend(parts[k])
    return items


@dataclass
class Streamed:
    """A recording read from its file: its items and facts about its bytes."""

    items: Items
    line_count: int
    sha256: str
    ends_with_newline: bool


class _Progress:
    """Bytes done in one phase, reported through a watch (scaled to the whole file when this
    process reads only part of it)."""

    def __init__(self, watch: ReadWatch, phase: str, part: int, total: int) -> None:
        self.watch, self.phase, self.part, self.total, self.done = watch, phase, max(part, 1), total, 0

    def __call__(self, size: int) -> None:
        self.done += size
        self.watch.report(self.phase, self.done * self.total // self.part, self.total)


def scan_fd(fd: int, size: int, watch: ReadWatch = QUIET) -> Streamed | None:
    """Every item of the file's first ``size`` bytes, read block by block (two processes for a
    big file).  None when the file holds a CR byte or shrank: read it whole.  Raises BinaryData
    at a NUL byte (reading a 900 MB file of NULs whole only to say so took twice its size)."""
    last = read_at(fd, size - 1, 1) if size else b""
    ends_with_newline = last == b"\n"
    mode = parallel_mode(size)
    middle = _middle(fd, size) if mode is not None else 0
    if mode is None or middle <= 0:
        hasher = hashlib.sha256()
        found = forward(fd, 0, size, 1, hasher, on_block=_Progress(watch, "reading", size, size))
        if found.nul is not None:
            raise BinaryData(*found.nul)
        if found.odd:
            return None
        items = backward(fd, found.blocks, on_block=_Progress(watch, "parsing", size, size))
        return Streamed(items, _count_lines(found.newlines, size, ends_with_newline), hasher.hexdigest(),
                        ends_with_newline)

    def first() -> tuple[Any, ...]:
        found = forward(fd, 0, middle, 1, on_block=_Progress(watch, "reading", middle, size))
        if found.odd:
            return (found.odd, found.nul)
        return (None, backward(fd, found.blocks, on_block=_Progress(watch, "parsing", middle, size)))

    if mode == "fork":
        (odd_first, items), (odd_second, rest, newlines, sha256) = in_two_processes(
            first, lambda: scan_tail(fd, middle, size))
    else:
        (odd_first, items), (odd_second, rest, newlines, sha256) = beside_a_spawned_process(first, fd, middle, size)
    if odd_first == "nul":
        raise BinaryData(*items)
    if odd_second == "nul" and not odd_first:  # (the first NUL: the first part holds none)
        raise BinaryData(*rest)
    if odd_first or odd_second:
        return None
    items.extend(rest)
    return Streamed(items, _count_lines(newlines, size, ends_with_newline), sha256, ends_with_newline)


def scan_tail(fd: int, middle: int, size: int) -> tuple[Any, ...]:
    """The second process's part: ``(odd, items of [middle, size), newlines of the file, sha256)``.

    It also hashes the whole file and counts the first part's lines (the
    first process has the second's items to load afterwards)."""
    hasher = hashlib.sha256()
    head = forward(fd, 0, middle, 1, hasher, keep=False)
    if head.odd:
        return (head.odd, head.nul, 0, "")
    tail = forward(fd, middle, size, head.newlines + 1, hasher)
    if tail.odd:
        return (tail.odd, tail.nul, 0, "")
    return (None, backward(fd, tail.blocks), head.newlines + tail.newlines, hasher.hexdigest())


def _middle(fd: int, size: int) -> int:
    """Where the first process's part ends: the first line start after 55% of the file.

    The second process has more to do per byte of its part (it hashes the
    whole file and sends its items back), so the first takes the larger part.
    Since its messages' rows travel a block at a time (``rows.RowBlock``), 55%
    has the second's items arrive ~0.07 s after the first part is done on both
    bench shapes (60%: the first finished last, the load 0.1 s longer; 50%: the
    second 0.25 s after the first), forked or spawned."""
    guess = size * 55 // 100
    window = read_at(fd, guess, 1 << 20)
    cut = window.find(b"\n")
    return guess + cut + 1 if cut != -1 and guess + cut + 1 < size else 0


def _count_lines(newlines: int, size: int, ends_with_newline: bool) -> int:
    return newlines + (0 if ends_with_newline or not size else 1)


def _main(argv: list[str]) -> int:
    """The spawned second process: ``python -m inspector.session.reader FD MIDDLE SIZE OUT``, its part
    left marshalled in descriptor OUT."""
    fd, middle, size, out = (int(value) for value in argv)
    gc.disable()  # as loader.paused_gc does for the first part: nothing read forms a cycle
    payload = marshal.dumps(scan_tail(fd, middle, size))
    with os.fdopen(out, "wb") as written:
        written.write(payload)
    return 0


if __name__ == "__main__":
    raise SystemExit(_main(sys.argv[1:]))
