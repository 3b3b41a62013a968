"""Read any Gemini CLI session file into one model, the way Gemini CLI reads it.

Three formats, told apart by content, never by name:

* ``jsonl``: today's append-only recording (metadata line, message records,
  ``$set`` updates and checkpoints, ``$rewindTo``), replayed exactly as
  ``loadConversationRecord`` replays it: unreadable lines are skipped (and
  reported as warnings), a repeated id replaces a message in place.
* ``json``: the legacy single-object ``ConversationRecord``.
* ``checkpoint``: a ``/chat save`` file, ``{"history": Content[], ...}`` or a
  bare ``Content[]``.
"""

from __future__ import annotations

import gc
import hashlib
import json
import os
import re
import stat
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import orjson

from inspector.session.errors import LoadWarning, SessionError
from inspector.session.jsonl import ITEM_KIND, collect, line_spans, replay
from inspector.session.locate import line_of
from inspector.session.reader import QUIET, BinaryData, ReadWatch, read_at, scan_fd, scan_file
from inspector.session.records import MessageList, js_json_loads, loads_line
from inspector.session.turn_index import TurnIndex
from inspector.session.validate import check_content, check_message, type_name

if TYPE_CHECKING:
    from inspector.antigravity.transcript import Transcript

Format = Literal["jsonl", "json", "checkpoint", "antigravity"]  # antigravity: read only (inspector.antigravity)

# Bytes JavaScript's trim() treats as blank on a line of its own (ASCII subset).
_BLANK_BYTES = b" \t\n\r\v\f"


@dataclass
class Session:
    """One session file as read: everything needed to show it and write it back."""

    path: Path
    format: Format
    metadata: dict[str, Any]
    messages: Sequence[dict[str, Any]] = field(default_factory=list)  # a MessageList for JSONL
    contents: list[dict[str, Any]] | None = None  # checkpoint files only
    warnings: list[LoadWarning] = field(default_factory=list)
    message_lines: dict[str, int] = field(default_factory=dict)  # id -> line (jsonl)
    line_count: int = 0
    size: int = 0
    sha256: str = ""
    mtime_ns: int = 0
    inode: int | None = None  # the file read (its mtime_ns and inode as it was opened)
    ends_with_newline: bool = True
    bare_checkpoint: bool = False
    # JSONL only: every turn's figures, measured while reading (its message_starts map messages to turns)
    turn_index: TurnIndex | None = None
    transcript: Transcript | None = None  # an Antigravity transcript's steps (format "antigravity")

    @property
    def session_id(self) -> str | None:
        value = self.metadata.get("sessionId")
        return value if isinstance(value, str) else None

    @property
    def model(self) -> str | None:
        """The model of the newest model turn that names one."""
        for record in reversed(self.messages):
            model = record.get("model")
            if record.get("type") == "gemini" and isinstance(model, str) and model:
                return model
        return None


MAX_FILE_BYTES = 2**30  # Gemini CLI writes far smaller ones; the analysis needs ~2x the file in memory


def open_session_file(path: Path) -> int:
    """A read-only descriptor of the file, or a SessionError saying plainly why not."""
    try:
        # O_NONBLOCK: opening a FIFO must not wait for a writer (a regular file ignores the flag)
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise SessionError(path, "no such file") from None
    except PermissionError:
        raise SessionError(path, "permission denied") from None
    except IsADirectoryError:
        raise SessionError(path, "is a folder, not a session file") from None
    except OSError as exc:
        raise SessionError(path, f"cannot read: {exc.strerror or exc}") from None
    info = os.fstat(fd)
    kind = not_a_file(info.st_mode)
    if kind is not None:
        os.close(fd)
        raise SessionError(path, f"is {kind}, not a session file")
    if info.st_size > MAX_FILE_BYTES:
        os.close(fd)
        raise SessionError(path, f"is {info.st_size / 2**30:,.1f} GiB; session files over "
                                 f"{MAX_FILE_BYTES / 2**30:g} GiB are not read (reading one needs several times "
                                 "its size in memory)")
    return fd


def not_a_file(mode: int) -> str | None:
    """What a path is when it is not a regular file ("a folder", "a FIFO", ...), else None."""
    if stat.S_ISREG(mode):
        return None
    for test, kind in ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a FIFO (named pipe)"),
                       (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                       (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return kind
    return "not a regular file"


def _read_all(path: Path, fd: int) -> bytes:
    chunks = []
    try:
        while chunk := os.read(fd, 1 << 24):
            chunks.append(chunk)
    except OSError as exc:
        raise SessionError(path, f"cannot read: {exc.strerror or exc}") from None
    return b"".join(chunks)


def read_bytes(path: Path) -> bytes:
    """The file's bytes, or a SessionError saying plainly why not."""
    fd = open_session_file(path)
    try:
        return _read_all(path, fd)
    finally:
        os.close(fd)


@contextmanager
def paused_gc() -> Iterator[None]:
    """Hold the cyclic garbage collector while building many long-lived objects.

    Parsing a big session allocates hundreds of thousands of dicts and lists
    that all live on; each collection would scan them all again (it doubles
    the load time of a 100 MB file).  Nothing parsed here forms a cycle.  In
    a single-threaded process (the command line, which ends soon after) the
    survivors are then frozen (``gc.freeze``) so that later collections skip
    them too.  The app (threads) does not freeze: frozen objects that later
    form garbage cycles would never be collected in a long-running process.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            if threading.active_count() == 1:
                gc.freeze()
            gc.enable()


STREAM_MIN_BYTES = 8 << 20  # recordings at least this big are read block by block, not held in memory


def load(path: str | os.PathLike[str], watch: ReadWatch = QUIET) -> Session:
    """Read a session file of any format.  Raises SessionError for bad input, ReadCancelled
    when ``watch`` says to stop."""
    path = Path(path)
    fd = open_session_file(path)
    try:
        return read_open(path, fd, watch)
    finally:
        os.close(fd)


def read_open(path: Path, fd: int, watch: ReadWatch = QUIET) -> Session:
    """``load`` of a file already open (``open_session_file``); the descriptor stays open."""
    info = os.fstat(fd)
    try:
        return _read_open(path, fd, info, watch)
    except MemoryError:  # (what was built is dropped on the way here: the error can be said)
        raise SessionError(path, f"cannot be read in the memory this process may use ({info.st_size:,} bytes; "
                                 "reading a session takes several times its size, a very long line more)") from None


def _read_open(path: Path, fd: int, info: os.stat_result, watch: ReadWatch) -> Session:
    session = None
    if info.st_size >= STREAM_MIN_BYTES and not _antigravity(read_at(fd, 0, min(info.st_size, 1 << 20))):
        with paused_gc():
            session = _stream_jsonl(path, fd, info.st_size, watch)
    if session is None:
        data = _read_all(path, fd)
        watch.check()
        with paused_gc():
            session = parse(path, data, fd)
    session.mtime_ns = info.st_mtime_ns
    session.inode = info.st_ino
    return session


def _stream_jsonl(path: Path, fd: int, size: int, watch: ReadWatch) -> Session | None:
    """A big recording read from its file without holding its bytes; None when it
    is not plainly one (the caller then reads the whole file the usual way)."""
    if not _several_values(read_at(fd, 0, min(size, 1 << 20))):  # the start of the file, as parse() decides
        return None
    try:
        streamed = scan_fd(fd, size, watch)
    except BinaryData as found:
        raise _binary(path, found.offset, found.line) from None
    if streamed is None:
        return None
    own = os.dup(fd)
    session = _jsonl_session(path, streamed.items, streamed.line_count, None, fd=own)
    if session is None:
        os.close(own)
        return None
    session.size = size
    session.sha256 = streamed.sha256
    session.ends_with_newline = streamed.ends_with_newline
    return session


def parse(path: Path, data: bytes, fd: int | None = None) -> Session:
    """The session ``data`` holds; ``fd``: the file it was read from, which a big recording's messages
    are then read again from (``data`` is not kept)."""
    if _NOT_BLANK.search(data) is None:
        raise SessionError(path, "the file is empty")
    nul = data.find(b"\x00")
    if nul != -1:
        raise _binary(path, nul, data.count(b"\n", 0, nul) + 1)
    if _antigravity(data[: 1 << 20]):
        from inspector.antigravity.session import read_session

        read = read_session(path, data)
        session = Session(path=path, format="antigravity", metadata=read.metadata, messages=read.messages,
                          warnings=read.warnings, line_count=read.line_count, transcript=read.transcript)
    else:
        whole = _parse_whole(data)
        session = _read_jsonl(path, data, fd=fd) if whole is _FAILED else _from_document(path, data, whole)
    session.size = len(data)
    session.sha256 = hashlib.sha256(data).hexdigest()
    session.ends_with_newline = data.endswith(b"\n")
    return session


def _antigravity(head: bytes) -> bool:
    """Whether a file beginning ``head`` is an Antigravity transcript (one step a line)."""
    from inspector.antigravity.transcript import looks_like_transcript

    return looks_like_transcript(head)


def _binary(path: Path, offset: int, line: int) -> SessionError:
    return SessionError(path, f"binary data (a NUL byte at offset {offset:,}), not a session file", line)


_FAILED = object()
_NOT_BLANK = re.compile(rb"[^ \t\n\r\v\f]")


def _several_values(data: bytes) -> bool:
    """A complete JSON value on the first line and more after it: JSONL, not one document.

    Checked first because parsing a 100 MB file as one document only to fail
    on line 2 costs orjson about ten times the file's size in memory.
    """
    first = _NOT_BLANK.search(data)  # blank lines before it cost nothing (a run of them is looked over in C)
    if first is None:
        return False
    begin = max(data.rfind(b"\n", 0, first.start()), data.rfind(b"\r", 0, first.start())) + 1
    for start, end in line_spans(data, begin):
        line = data[start:end]
        if not line.strip(_BLANK_BYTES):
            continue
        try:
            loads_line(line)
        except (ValueError, RecursionError):
            return False
        return _NOT_BLANK.search(data, end) is not None
    return False


def _parse_whole(data: bytes) -> Any:
    if _several_values(data):
        return _FAILED
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:
        pass
    if data.count(b"\n", 0, 1 << 16) > 1 and b"\n{" in data:
        return _FAILED  # looks like JSONL; the line reader decides
    try:
        return js_json_loads(data.decode("utf-8", "replace"))
    except (ValueError, RecursionError):
        return _FAILED


def _json_error(path: Path, data: bytes) -> SessionError:
    if data.startswith(b"\xef\xbb\xbf"):
        return SessionError(path, "the file begins with a byte order mark (EF BB BF): Gemini CLI never writes "
                                  "one, and JSON.parse refuses the line that holds it; save the file without it", 1)
    text = data.decode("utf-8", "replace")
    try:
        js_json_loads(text)
    except json.JSONDecodeError as exc:
        return SessionError(path, f"broken JSON at column {exc.colno}: {exc.msg}", exc.lineno)
    except RecursionError:
        return SessionError(path, "JSON nested too deeply")
    except ValueError as exc:
        return SessionError(path, f"broken JSON: {exc}")
    return SessionError(path, "not a Gemini CLI session (no sessionId, projectHash or history)")


def _from_document(path: Path, data: bytes, doc: Any) -> Session:
    if isinstance(doc, list):
        return _checkpoint(path, data, {}, doc, bare=True)
    if not isinstance(doc, dict):
        raise SessionError(path, "not a Gemini CLI session: the file holds a single JSON value, not an object")
    if "sessionId" in doc:
        core = data.strip(_BLANK_BYTES)
        if b"\n" not in core and b"\r" not in core:
            # One line: Gemini CLI reads it as a JSONL recording first (a
            # metadata line, maybe with messages; repeated ids collapse) and
            # falls back to the legacy reading only if that finds no metadata.
            return _read_jsonl(path, data, legacy=doc)
        return _legacy(path, data, doc)
    if "history" not in doc:
        raise SessionError(path, "not a Gemini CLI session (no sessionId, projectHash or history)")
    history = doc["history"]
    if not isinstance(history, list):
        raise _wrong(path, data, ["history"], f"'history' must be a list of turns, not {type_name(history)}")
    return _checkpoint(path, data, {k: v for k, v in doc.items() if k != "history"}, history, bare=False)


def _wrong(path: Path, data: bytes, where: Sequence[str | int], problem: str) -> SessionError:
    """The error about the value at ``where`` in the document ``data``, naming the line it starts on
    (the wrong value's own line, for a problem ``validate`` found inside a record)."""
    return SessionError(path, problem, line_of(data, where))


def _legacy(path: Path, data: bytes, doc: dict[str, Any]) -> Session:
    messages = doc.get("messages")
    if messages is None:
        messages = []
    if not isinstance(messages, list):
        raise _wrong(path, data, ["messages"], f"'messages' must be a list, not {type_name(messages)}")
    for i, record in enumerate(messages):
        if not isinstance(record, dict):
            raise _wrong(path, data, ["messages", i], f"messages[{i}] must be an object, not {type_name(record)}")
        problem = check_message(record)
        if problem is not None:
            ident = record.get("id")
            raise _wrong(path, data, ["messages", i, *problem.path], f"messages[{i}] (id {ident!r}): {problem}")
    metadata = {k: v for k, v in doc.items() if k != "messages"}
    return Session(path=path, format="json", metadata=metadata, messages=messages)


def _checkpoint(path: Path, data: bytes, wrapper: dict[str, Any], history: list[Any], bare: bool) -> Session:
    for i, content in enumerate(history):
        problem = check_content(content)
        if problem is not None:
            where = [i, *problem.path] if bare else ["history", i, *problem.path]
            raise _wrong(path, data, where, f"history[{i}]: {problem}")
    return Session(path=path, format="checkpoint", metadata=wrapper, contents=history, bare_checkpoint=bare)


def _read_jsonl(path: Path, data: bytes, legacy: dict[str, Any] | None = None, fd: int | None = None) -> Session:
    items, line_count = scan_file(data)
    own = os.dup(fd) if fd is not None and _read_again_from(fd, data) else None
    session = _jsonl_session(path, items, line_count, data if own is None else None, fd=own)
    if session is not None:
        return session
    if own is not None:
        os.close(own)
    if legacy is not None:
        return _legacy(path, data, legacy)
    if any(item[ITEM_KIND] == "w" for item in items):
        raise _json_error(path, data)
    raise SessionError(path, "not a Gemini CLI session: no line holds sessionId and projectHash")


def _read_again_from(fd: int, data: bytes) -> bool:
    """Whether a recording read whole (not block by block: it holds CR bytes) is big enough to read
    its messages again from its file instead of keeping its bytes, and may be: the file is still
    the size read, and every CR ends a line with LF (CRLF), so that lines are counted as in a file
    read block by block."""
    return (len(data) >= STREAM_MIN_BYTES and os.fstat(fd).st_size == len(data)
            and data.count(b"\r") == data.count(b"\r\n"))


def _jsonl_session(
    path: Path, items: list[tuple[Any, ...]], line_count: int, data: bytes | None, fd: int | None = None,
) -> Session | None:
    """The session the items replay to; None without metadata (not a recording)."""
    state = replay(items)
    if state.problem is not None:
        line, problem = state.problem
        if fd is not None:
            os.close(fd)
        raise SessionError(path, problem, line)
    metadata = state.metadata
    if not metadata.get("sessionId") or not metadata.get("projectHash"):
        return None
    wheres, lines, rows = collect(state)
    # Every item is now in ``rows`` and ``state.blocks`` or no longer needed: the items go, so that each block
    # of rows is freed as it is made into columns (the reader's peak is there).
    items.clear()
    state.entries.clear()
    messages = MessageList(data, wheres, fd=fd, ids=list(lines) if fd is not None else None, path=path)
    del wheres
    return Session(
        path=path,
        format="jsonl",
        metadata=metadata,
        messages=messages,
        warnings=state.warnings,
        message_lines=lines,
        line_count=line_count,
        turn_index=TurnIndex.of_messages(rows, state.blocks),
    )

