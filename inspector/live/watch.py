"""Watch one session file and say what happened to it, as plain events.

    async for event in watch_session(path):
        match event:
            case Appended(records=records): ...   # new JSONL records, with line numbers
            case Rewritten() | Truncated(): ...   # reload the file
            case Deleted(): ...

The session's *folder* is watched (watchfiles ``awatch``), not the file: a
watch on a single file goes quiet after an atomic replace, which is how both
this project and Gemini CLI rewrite files.  Changes to other names (our temp
files, the ``.session-inspector`` store, other sessions) are filtered out.

New complete lines at the end are reported as soon as watchfiles sees them
(Gemini CLI writes a record per line; a line still without its newline is
reported as ``pending`` until its newline comes).  A file that cannot be read
for a while (its permissions changed, a folder took its name) is reported
once as ``Unreadable``, and read whole again once it can be.  Anything else (a rewrite, a truncation, a deletion) makes
the app read the whole file, so it waits until the file has been quiet for
a moment (a quiet period, capped by a maximum wait, against an injectable
clock): a writer replacing the file is seen once, when done.  What happened is decided by ``classify``, a pure function
of the previous state and what is on disk now, so it is tested without
watching anything.  No Textual here: the app turns events into messages.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import hashlib
import os
import stat
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import orjson

from inspector.format import describe_os_error
from inspector.session.loader import MAX_FILE_BYTES, not_a_file
from inspector.session.reader import read_at
from inspector.store.files import is_store_path, own_writes

CHECK_BYTES = 4096  # bytes before the old end compared to prove the file only grew


# -- events --------------------------------------------------------------------


@dataclass(frozen=True)
class AppendedRecord:
    line: int  # 1-based line number in the file
    record: Any  # the parsed JSON value (None if the line is not JSON)
    error: str | None = None


@dataclass(frozen=True)
class Appended:
    """Complete lines were added at the end; earlier bytes are unchanged."""

    path: Path
    records: tuple[AppendedRecord, ...]
    start: int  # byte offset of the first new line
    size: int  # file size now
    own: bool = False  # the state this process itself wrote (an apply/revert)
    data: bytes = b""  # the new complete lines' bytes, from ``start`` on (``inspector.live.extend`` extends with them)
    pending: bytes = b""  # after them, a last line still without its newline (being written)
    pending_line: int = 0  # that line's number (0: none)


@dataclass(frozen=True)
class Rewritten:
    """The file was replaced or changed other than at its end: reload it."""

    path: Path
    size: int
    own: bool = False


@dataclass(frozen=True)
class Truncated:
    """The file got shorter in place."""

    path: Path
    size: int
    own: bool = False


@dataclass(frozen=True)
class Deleted:
    path: Path


@dataclass(frozen=True)
class Unreadable:
    """The file is there but cannot be read now (``reason``: what the system said).  Said once;
    when it can be read again, a ``Rewritten`` follows (what changed meanwhile is not known)."""

    path: Path
    reason: str


Event = Appended | Rewritten | Truncated | Deleted | Unreadable


# -- state and classification ----------------------------------------------------


@dataclass(frozen=True)
class FileState:
    """What is known of the file: enough to tell an append from anything else."""

    path: Path
    exists: bool = True
    inode: int | None = None
    size: int = 0  # bytes seen (complete lines + pending)
    lines: int = 0  # complete lines seen
    pending: bytes = b""  # a last line still waiting for its newline
    check: bytes = b""  # the last CHECK_BYTES bytes seen
    mtime_ns: int = 0
    unreadable: str | None = None  # why the last look could not read it (then the next one reads it all)


@dataclass(frozen=True)
class Observation:
    """The file as it is now: ``data`` holds its bytes from ``offset`` on."""

    exists: bool
    inode: int | None = None
    size: int = 0
    mtime_ns: int = 0
    offset: int = 0
    data: bytes = b""
    error: str | None = None  # it exists but could not be read (what the system said)


def state_of(path: Path | str, data: bytes, inode: int | None = None, mtime_ns: int = 0) -> FileState:
    """The state after reading ``data`` whole."""
    end = data.rfind(b"\n") + 1
    return FileState(
        Path(path), True, inode, len(data), data.count(b"\n", 0, end), data[end:], data[-CHECK_BYTES:], mtime_ns
    )


class _NotASession(OSError):
    """The path is no regular file (a FIFO, a device, a folder) or too big to read: said like a system error."""


def _read(path: Path, start: Callable[[os.stat_result], int]) -> tuple[os.stat_result, int, bytes]:
    """``(its stat, offset, its bytes from offset to the size it had when opened)``, ``offset`` being
    ``start(stat)``.  A FIFO or a device put in the file's place is never read (opening a FIFO without
    a writer would wait for ever, and /dev/zero never ends): ``_NotASession`` says what it is."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):  # as opening it to read says
            raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), str(path))
        kind = not_a_file(info.st_mode)
        if kind is not None:
            raise _NotASession(f"it is {kind} now, not a session file")
        if info.st_size > MAX_FILE_BYTES:
            raise _NotASession(f"it is {info.st_size / 2**30:,.1f} GiB now; files over "
                               f"{MAX_FILE_BYTES / 2**30:g} GiB are not read")
        offset = start(info)
        return info, offset, read_at(fd, offset, info.st_size - offset)
    finally:
        os.close(fd)


def _why(exc: OSError) -> str:
    return str(exc) if isinstance(exc, _NotASession) else describe_os_error(exc)


def initial_state(path: Path | str) -> FileState:
    path = Path(path)
    try:
        info, _, data = _read(path, lambda _: 0)
    except FileNotFoundError:
        return FileState(path, exists=False)
    except OSError as exc:
        return FileState(path, unreadable=_why(exc))
    return state_of(path, data, info.st_ino, info.st_mtime_ns)


def observe(path: Path | str, old: FileState) -> Observation:
    """Read what ``classify`` needs: only the bytes from just before the old end, when possible."""
    path = Path(path)

    def start(info: os.stat_result) -> int:
        same_file = (old.exists and old.unreadable is None and info.st_ino == old.inode
                     and info.st_size >= old.size)
        return max(old.size - len(old.check), 0) if same_file else 0

    try:
        info, offset, data = _read(path, start)
    except FileNotFoundError:
        return Observation(False)
    except OSError as exc:  # no permission now, a folder or a FIFO in its place, ...: said, and looked at again
        return Observation(True, error=_why(exc))
    return Observation(True, info.st_ino, offset + len(data), info.st_mtime_ns, offset, data)


def _parse_lines(chunk: bytes, first_line: int) -> tuple[AppendedRecord, ...]:
    records = []
    for number, raw in enumerate(chunk.split(b"\n")[:-1], start=first_line):
        if not raw.strip():
            continue
        try:
            records.append(AppendedRecord(number, orjson.loads(raw)))
        except orjson.JSONDecodeError as exc:
            records.append(AppendedRecord(number, None, str(exc)))
    return tuple(records)


def classify(old: FileState, new: Observation | bytes | None) -> tuple[Event | None, FileState]:
    """What happened between ``old`` and ``new`` (None: nothing worth telling).

    ``new`` is an ``Observation``, the whole file's bytes (same inode assumed),
    or None for a file that is gone.  Returns the event and the new state.
    """
    path = old.path
    if isinstance(new, (bytes, bytearray)):
        new = Observation(True, old.inode, len(new), old.mtime_ns, 0, bytes(new))
    if new is None or not new.exists:
        gone = FileState(path, exists=False)
        return (Deleted(path) if old.exists else None), gone
    if new.error is not None:
        if old.unreadable == new.error:
            return None, old
        return Unreadable(path, new.error), replace(old, unreadable=new.error)
    whole = new.offset == 0
    if not old.exists or old.unreadable is not None or new.inode != old.inode:
        state = _whole_state(path, new)
        return Rewritten(path, new.size), state
    if new.size < old.size:
        return Truncated(path, new.size), _whole_state(path, new) if whole else _unknown(path, new)
    start = old.size - len(old.check)
    if start < new.offset or new.data[start - new.offset : old.size - new.offset] != old.check:
        return Rewritten(path, new.size), _whole_state(path, new) if whole else _unknown(path, new)
    if new.size == old.size:
        if new.mtime_ns != old.mtime_ns and old.mtime_ns:
            # Written again in place, at the same length (or only touched): the end alone proves
            # nothing, so the whole file is read again (and found unchanged, if it is).
            return Rewritten(path, new.size), _whole_state(path, new) if whole else _unknown(path, new)
        return None, old
    added = new.data[old.size - new.offset :]
    chunk = old.pending + added
    end = chunk.rfind(b"\n") + 1
    complete, pending = chunk[:end], chunk[end:]
    state = FileState(
        path, True, new.inode, new.size, old.lines + complete.count(b"\n"), pending,
        (old.check + added)[-CHECK_BYTES:], new.mtime_ns,
    )
    pending_line = state.lines + 1 if pending else 0
    if not complete:  # more of a line still being written
        return Appended(path, (), new.size - len(pending), new.size, pending=pending, pending_line=pending_line), state
    first_offset = old.size - len(old.pending)
    return Appended(path, _parse_lines(complete, old.lines + 1), first_offset, new.size, data=complete,
                    pending=pending, pending_line=pending_line), state


def _unknown(path: Path, new: Observation) -> FileState:
    """Only the end was observed: a state that makes the next look read it all."""
    return FileState(path, True, None, new.size, 0, b"", b"", new.mtime_ns)


def _whole_state(path: Path, new: Observation) -> FileState:
    return state_of(path, new.data, new.inode, new.mtime_ns)


# -- debouncing ---------------------------------------------------------------------


@dataclass
class Debouncer:
    """Fire after ``quiet`` seconds without a change, or ``max_wait`` after the first."""

    quiet: float = 0.1
    max_wait: float = 1.0
    clock: Callable[[], float] = time.monotonic
    first: float | None = None
    last: float | None = None

    def touch(self) -> None:
        now = self.clock()
        if self.first is None:
            self.first = now
        self.last = now

    @property
    def pending(self) -> bool:
        return self.first is not None

    def due(self) -> bool:
        if self.first is None or self.last is None:
            return False
        now = self.clock()
        return now - self.last >= self.quiet or now - self.first >= self.max_wait

    def remaining(self) -> float | None:
        """Seconds until due (None: nothing pending)."""
        if self.first is None or self.last is None:
            return None
        now = self.clock()
        return max(0.0, min(self.last + self.quiet, self.first + self.max_wait) - now)

    def reset(self) -> None:
        self.first = self.last = None


# -- the watcher ------------------------------------------------------------------------


@dataclass
class WatchOptions:
    quiet: float = 0.1  # for changes other than appends (see the module's notes)
    max_wait: float = 1.0
    clock: Callable[[], float] = time.monotonic
    force_polling: bool | None = None
    poll_delay_ms: int = 50
    # watchfiles' own batching step, and how often its thread looks for changes: an append is
    # reported 1-2 steps after it is written.  Idle, each look costs a few microseconds
    # (bench/bench_idle.py: 0.2% of a core and an append after 83 ms at 50 ms; 0.4% and 32 ms
    # at 20 ms; 0.45% and 12 ms at 10 ms).  20 ms keeps an append on screen within 100 ms.
    step_ms: int = 20
    # How long watchfiles waits for a change before it reports "nothing yet".  Idle, the watcher
    # wakes only this often: debouncing has timers of its own (and looks at an injected clock each tick).
    tick_ms: int = 1_000
    extra: dict[str, Any] = field(default_factory=dict)  # passed on to awatch
    on_batch: Callable[[set[Any]], None] | None = None  # sees each batch of changes to the file


async def _mark_own(path: Path, event: Event) -> Event:
    """The event with ``own`` set when the file is now a state this process wrote (an apply or
    a revert): the file is hashed (in a thread) only when its size is one of those states' sizes."""
    if isinstance(event, (Deleted, Unreadable)):
        return event
    digests = {digest for digest, size in own_writes(path) if size == event.size}
    if not digests:
        return event
    try:
        digest = await asyncio.to_thread(lambda: hashlib.sha256(_read(path, lambda _: 0)[2]).hexdigest())
    except OSError:
        return event
    return replace(event, own=digest in digests)


async def watch_session(
    path: Path | str,
    *,
    options: WatchOptions | None = None,
    state: FileState | None = None,
    stop_event: asyncio.Event | None = None,
    ready: asyncio.Event | None = None,
) -> AsyncIterator[Event]:
    """Events about one session file until ``stop_event`` is set, or its folder is removed or
    moved away (the OS's watch cannot follow it back: the events end, and the caller says so).

    ``state`` is what the caller has already read (default: the file now);
    ``ready`` is set once the watch is in place (tests wait on it).
    """
    from watchfiles import awatch

    opts = options or WatchOptions()
    path = Path(path).absolute()
    folder = path.parent
    current = state or initial_state(path)
    debounce = Debouncer(opts.quiet, opts.max_wait, opts.clock)
    target = str(path)
    folder_name = str(folder)
    try:
        folder_inode: int | None = folder.stat().st_ino
    except OSError:
        folder_inode = None

    def wanted(_change: Any, changed: str) -> bool:
        return (changed == target and not is_store_path(changed)) or changed == folder_name

    def folder_gone() -> bool:
        """The watched folder was removed or moved away: the OS watch cannot follow it back."""
        try:
            return folder.stat().st_ino != folder_inode
        except OSError:
            return True

    stop = stop_event or asyncio.Event()
    watcher = awatch(
        folder,
        watch_filter=wanted,
        stop_event=stop,
        debounce=opts.step_ms,
        step=opts.step_ms,
        rust_timeout=opts.tick_ms,
        yield_on_timeout=True,
        force_polling=opts.force_polling,
        poll_delay_ms=opts.poll_delay_ms,
        recursive=False,
        **opts.extra,
    )
    batches: asyncio.Queue[set[Any] | None] = asyncio.Queue()

    async def pump() -> None:
        """Every batch watchfiles reports, into ``batches`` (None once it ends)."""
        try:
            upcoming = asyncio.ensure_future(anext(watcher))
            # awatch makes its notifier (which puts the OS's watch in place) in its first step, before it
            # first waits for changes: once that step ran, the watch is in place (else: at its first report,
            # a change or the first tick with none).
            await asyncio.sleep(0)
            if ready is not None and not upcoming.done():
                ready.set()
            while True:
                try:
                    changes = await upcoming
                except StopAsyncIteration:
                    break
                if ready is not None:
                    ready.set()
                if changes:
                    batches.put_nowait(changes)
                upcoming = asyncio.ensure_future(anext(watcher))
        finally:
            batches.put_nowait(None)

    pumping = asyncio.ensure_future(pump())
    try:
        with contextlib.suppress(asyncio.CancelledError):
            while not stop.is_set():
                wait = debounce.remaining()  # None: nothing pending, so sleep until a change comes
                if wait is not None:  # a clock of the caller's (``options.clock``) may move any time: look each tick
                    wait = min(wait, opts.tick_ms / 1000)
                try:
                    changes: set[Any] | None = await asyncio.wait_for(batches.get(), wait)
                except TimeoutError:
                    changes = set()
                if changes is None:
                    break
                if changes and any(changed == folder_name for _, changed in changes) and folder_gone():
                    event, current = classify(current, observe(path, current))
                    if event is not None:
                        yield event
                    break  # the watch ends: the caller says so
                if changes:
                    debounce.touch()
                    if opts.on_batch is not None:
                        opts.on_batch(changes)
                    seen = observe(path, current)
                    event, state = classify(current, seen)
                    if event is None or isinstance(event, (Appended, Unreadable)):  # new lines, part of one: at once
                        current = state
                        debounce.reset()
                        if event is not None:
                            yield await _mark_own(path, event)
                        continue
                if debounce.pending and debounce.due():
                    debounce.reset()
                    seen = observe(path, current)
                    event, current = classify(current, seen)
                    if isinstance(event, (Rewritten, Truncated)) and seen.offset:
                        current = initial_state(path)  # only the end was read: read it all
                    if event is not None:
                        yield await _mark_own(path, event)
    finally:
        pumping.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await pumping
