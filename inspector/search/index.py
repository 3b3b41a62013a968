"""Search the text of every session: prompts, replies, thoughts, tool calls and their results.

The text of each turn of the curated history (the turn numbers the session
view shows) goes into a full-text index on disk: sqlite3's FTS5 with the
trigram tokenizer, from the standard library, so any run of three or more
characters is found (``parse`` finds ``parser``), case-insensitively.

Why on disk: reading a session is most of the cost (parsing JSON, rebuilding
the history), and a person searches many times over files that rarely
change.  Each file is stored with its size and modification time; a file
whose path, size and time are unchanged is not read again, so a second
search over thousands of sessions costs one stat per file.  The index is a
cache (``$XDG_CACHE_HOME/session-inspector/``, else ``~/.cache``): deleting
it loses nothing, and one that cannot be opened is rebuilt.

A turn's row id is ``file id << 24 | turn``: the rows of one file are one
range, so a changed file's rows are dropped with one range delete.
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from inspector.catalog.candidate import Candidate
from inspector.catalog.listing import describe_session
from inspector.format import describe_os_error
from inspector.session import Session, SessionError, history
from inspector.session.loader import open_session_file, read_open
from inspector.user_cache import HomeUnknown, cache_dir, made_cache_dir

SCHEMA = 1
TURN_BITS = 24  # up to 16,777,215 turns a session
MIN_WORD = 3  # the trigram tokenizer finds runs of three characters or more
COMMIT_EVERY = 200  # files: a stopped indexing keeps what it did
SNIPPET = 100  # characters of context shown around a hit
BUSY_SECONDS = 10.0  # how long to wait for another search that is writing the index (then it is said)

Progress = Callable[[int, int], None]


class SearchError(ValueError):
    """A query the index cannot answer (said in one line)."""


@dataclass(frozen=True)
class Hit:
    """One turn whose text holds every word searched for."""

    path: Path
    session_id: str | None
    title: str
    turn: int
    role: str
    snippet: str
    updated: float  # the session's lastUpdated (seconds), newest sessions first


@dataclass(frozen=True)
class Unreadable:
    """A file in scope that is not searched, and why (the reader's one line, naming the line)."""

    path: Path
    reason: str


@dataclass(frozen=True)
class IndexReport:
    """What an update of the index did."""

    files: int  # files in scope
    read: int  # read (new or changed)
    failed: int  # in scope and not searched: could not be read, now or when last read unchanged
    removed: int  # gone from disk, dropped from the index
    unreadable: tuple[Unreadable, ...] = ()  # the ``failed`` files, in the order of the candidates


def unreadable_words(report: IndexReport) -> str | None:
    """What was not searched, as both faces say it: how many files, the first one and why (None when
    every file in scope was searched)."""
    if not report.failed:
        return None
    words = f"{report.failed:,} file{'' if report.failed == 1 else 's'} could not be searched"
    if report.unreadable:
        first = report.unreadable[0]
        words += f", the first: {first.path}: {first.reason}"
        if report.failed > 1:
            words += f" (and {report.failed - 1:,} more)"
    return words


def is_busy(exc: sqlite3.Error) -> bool:
    """Whether sqlite gave up waiting for another connection's lock (SQLITE_BUSY / SQLITE_LOCKED)."""
    name = getattr(exc, "sqlite_errorname", "")
    return name.startswith(("SQLITE_BUSY", "SQLITE_LOCKED")) or "database is locked" in str(exc)


def busy_error(path: Path) -> SearchError:
    return SearchError(f"the search index at {path} is busy: another search has been writing to it for over "
                       f"{BUSY_SECONDS:g} s (a stopped one, Ctrl+Z, holds it until it goes on or ends); try again")


def default_index_path() -> Path:
    return cache_dir() / f"search-v{SCHEMA}.sqlite"


def _clean(text: str) -> str:
    """Text sqlite can store: lone surrogates (invalid UTF-8) become U+FFFD."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return "".join("\ufffd" if "\ud800" <= c <= "\udfff" else c for c in text)


def _clean_or_none(text: str | None) -> str | None:
    return None if text is None else _clean(text)


def _leaves(value: Any, depth: int = 0) -> Iterator[str]:
    """The words of a JSON value as a person would search them: strings as they are (not
    JSON-escaped), numbers and booleans as JSON writes them, each under its key."""
    if depth > 64:
        return
    if isinstance(value, dict):
        for key, item in value.items():
            if isinstance(item, (dict, list)):
                yield str(key)
                yield from _leaves(item, depth + 1)
            else:
                yield f"{key}: {next(_leaves(item, depth + 1), '')}"
    elif isinstance(value, list):
        for item in value:
            yield from _leaves(item, depth + 1)
    elif isinstance(value, str):
        yield value
    elif value is not None:
        yield json.dumps(value)


def turn_text(parts: Sequence[Any]) -> str:
    """The searchable text of a turn: its text and thoughts, each tool call's name and arguments,
    each tool result's name and response."""
    pieces: list[str] = []
    for part in parts:
        if not isinstance(part, dict):
            continue
        text = part.get("text")
        if isinstance(text, str):
            pieces.append(text)
        call = part.get("functionCall")
        if isinstance(call, dict):
            pieces.append(" ".join([str(call.get("name", "")), *_leaves(call.get("args"))]))
        response = part.get("functionResponse")
        if isinstance(response, dict):
            pieces.append(" ".join([str(response.get("name", "")), *_leaves(response.get("response"))]))
    return "\n".join(pieces)


def session_turns(session: Session) -> Iterator[tuple[int, str, str]]:
    """``(turn, role, text)`` for every turn of a session's history that has text."""
    for index, turn in enumerate(history(session)):
        text = turn_text(turn.parts)
        if text.strip():
            yield index, turn.role, _clean(text)


def query_words(text: str) -> list[str]:
    """The words of a query; at least one must be three characters or longer."""
    words = text.split()
    if not words:
        raise SearchError("nothing to search for: give some words")
    if all(len(w) < MIN_WORD for w in words):
        raise SearchError(f"search for at least one word of {MIN_WORD} or more characters")
    return words


def snippet(text: str, words: Sequence[str], width: int = SNIPPET) -> str:
    """One line of ``text`` around the first word found, whitespace collapsed."""
    flat = " ".join(text.split())
    folded = flat.casefold()
    positions = [p for p in (folded.find(w.casefold()) for w in words) if p >= 0]
    at = min(positions) if positions else 0
    start = max(at - width // 3, 0)
    piece = flat[start:start + width]
    return ("…" if start else "") + piece + ("…" if start + width < len(flat) else "")


class SearchIndex:
    """The on-disk index: ``update`` it with the files in scope, then ``search`` them."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path or default_index_path()
        self.db = self._open()

    def _open(self) -> sqlite3.Connection:
        # The index holds the text of every session: the owner's only, like the sessions Gemini CLI keeps.
        # SQLite gives its -wal and -shm files the database file's mode.
        made_cache_dir(self.path.parent)
        with contextlib.suppress(FileExistsError):
            self._create_private()
        try:
            return self._connect()
        except sqlite3.DatabaseError as exc:  # not a database, or an older layout: it is a cache, start again
            if is_busy(exc):  # (but one another search is writing to is neither: it is kept)
                raise
            for suffix in ("", "-wal", "-shm", "-journal"):
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(f"{self.path}{suffix}")
            self._create_private()
            return self._connect()

    def _create_private(self) -> None:
        """The empty database file, readable by its owner only (FileExistsError if it is there)."""
        os.close(os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600))

    def _connect(self) -> sqlite3.Connection:
        db = sqlite3.connect(self.path, timeout=BUSY_SECONDS, check_same_thread=False)
        try:
            db.execute("PRAGMA journal_mode=WAL")
            version = db.execute("PRAGMA user_version").fetchone()[0]
            if version not in (0, SCHEMA):
                raise sqlite3.DatabaseError(f"index layout {version}")
            db.executescript(
                """
                CREATE TABLE IF NOT EXISTS files (
                    id INTEGER PRIMARY KEY, path TEXT UNIQUE NOT NULL, size INTEGER NOT NULL,
                    mtime_ns INTEGER NOT NULL, session_id TEXT, title TEXT NOT NULL DEFAULT '',
                    updated REAL NOT NULL DEFAULT 0, error TEXT);
                CREATE VIRTUAL TABLE IF NOT EXISTS turns USING fts5(text, role UNINDEXED, tokenize='trigram');
                """
            )
            db.execute(f"PRAGMA user_version={SCHEMA}")
            db.commit()
        except sqlite3.DatabaseError:
            db.close()
            raise
        return db

    def close(self) -> None:
        self.db.close()

    def __enter__(self) -> SearchIndex:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- keeping it current ------------------------------------------------------------------
    # (a file's path is kept as its bytes: a name that is not UTF-8 is still a file to index)
    def update(self, candidates: Sequence[Candidate], progress: Progress | None = None,
               cancelled: Callable[[], bool] = lambda: False) -> IndexReport:
        """Read the files that are new or changed since they were indexed; drop the ones gone."""
        db = self.db
        known = {_stored(path): (ident, size, mtime) for ident, path, size, mtime
                 in db.execute("SELECT id, path, size, mtime_ns FROM files")}
        read = removed = 0
        total = len(candidates)
        refused: dict[bytes, str] = {}  # could not be opened this time: not kept, tried again next time
        for done, candidate in enumerate(candidates, 1):
            if cancelled():
                break
            seen = known.get(_stored(candidate.path))
            if seen is not None and seen[1:] == (candidate.size, candidate.mtime_ns):
                continue
            if seen is not None:
                self._drop(seen[0])
            read += 1
            problem = self._add(candidate)
            if problem is not None:
                refused[_stored(candidate.path)] = problem
            if read % COMMIT_EVERY == 0:
                db.commit()
            if progress is not None:
                progress(done, total)
        in_scope = {_stored(c.path) for c in candidates}
        for key, (ident, _, _) in known.items():
            if key not in in_scope and not os.path.exists(key):
                self._drop(ident)
                removed += 1
        db.commit()
        refused.update((_stored(path), error) for path, error
                       in db.execute("SELECT path, error FROM files WHERE error IS NOT NULL"))
        unreadable = tuple(Unreadable(c.path, refused[key]) for c in candidates
                           if (key := _stored(c.path)) in refused)
        return IndexReport(total, read, len(unreadable), removed, unreadable)

    def _drop(self, ident: int) -> None:
        self.db.execute("DELETE FROM turns WHERE rowid >= ? AND rowid < ?",
                        (ident << TURN_BITS, (ident + 1) << TURN_BITS))
        self.db.execute("DELETE FROM files WHERE id = ?", (ident,))

    def _add(self, candidate: Candidate) -> str | None:
        """Index one file; why it could not be, or None.  A file that cannot be opened (permission
        denied, gone, a FIFO) is not kept as failed: opening it depends on who asks and when, not on
        its size and time, so it is tried again next time (a chmod changes neither)."""
        db = self.db
        try:
            fd = open_session_file(candidate.path)
        except SessionError as exc:
            return _clean(exc.message)
        try:
            session = read_open(candidate.path, fd)
            entry = describe_session(candidate, session)
            rows = list(session_turns(session)) if entry.conversation else []
        except (SessionError, OSError, ValueError, RecursionError, MemoryError) as exc:
            message = _clean(exc.message if isinstance(exc, SessionError) else (str(exc) or type(exc).__name__))
            if isinstance(exc, SessionError) and exc.line is not None:
                message = f"line {exc.line:,}: {message}"
            db.execute("INSERT INTO files (path, size, mtime_ns, error) VALUES (?, ?, ?, ?)",
                       (_stored(candidate.path), candidate.size, candidate.mtime_ns, message))
            return message
        finally:
            os.close(fd)
        cursor = db.execute(
            "INSERT INTO files (path, size, mtime_ns, session_id, title, updated) VALUES (?, ?, ?, ?, ?, ?)",
            (_stored(candidate.path), candidate.size, candidate.mtime_ns, _clean_or_none(entry.session_id),
             _clean(entry.title), entry.updated),
        )
        ident = cursor.lastrowid
        assert ident is not None
        db.executemany("INSERT INTO turns (rowid, text, role) VALUES (?, ?, ?)",
                       (((ident << TURN_BITS) | turn, text, role) for turn, role, text in rows
                        if turn < 1 << TURN_BITS))
        return None

    # -- asking it ------------------------------------------------------------------------------
    def search(self, text: str, candidates: Sequence[Candidate] | None = None, limit: int = 500) -> list[Hit]:
        """The turns holding every word of ``text`` (case-insensitive), newest sessions first,
        in the files of ``candidates`` (every indexed file when None)."""
        if any("\ud800" <= ch <= "\udfff" for ch in text):
            raise SearchError("the search text is not valid UTF-8 (it holds bytes that are no character); "
                              "type it again")
        words = query_words(text)
        long_words = [w for w in words if len(w) >= MIN_WORD]
        short_words = [w.casefold() for w in words if len(w) < MIN_WORD]
        match = " AND ".join('"' + w.replace('"', '""') + '"' for w in long_words)
        files = {ident: (Path(os.fsdecode(path)), session_id, title, updated)
                 for ident, path, session_id, title, updated
                 in self.db.execute("SELECT id, path, session_id, title, updated FROM files WHERE error IS NULL")}
        if candidates is not None:
            scope = {c.path for c in candidates}
            files = {ident: info for ident, info in files.items() if info[0] in scope}
        found: list[tuple[float, str, int, int, str]] = []
        try:
            for rowid, role in self.db.execute("SELECT rowid, role FROM turns WHERE turns MATCH ?", (match,)):
                info = files.get(rowid >> TURN_BITS)
                if info is not None:
                    found.append((-info[3], str(info[0]), rowid & ((1 << TURN_BITS) - 1), rowid, role))
        except sqlite3.OperationalError as exc:
            raise SearchError(f"cannot search for {text!r}: {exc}") from None
        found.sort()
        hits: list[Hit] = []
        for _, _, turn, rowid, role in found:
            if len(hits) >= limit:
                break
            body = self.db.execute("SELECT text FROM turns WHERE rowid = ?", (rowid,)).fetchone()[0]
            if short_words and not all(w in body.casefold() for w in short_words):
                continue
            path, session_id, title, updated = files[rowid >> TURN_BITS]
            hits.append(Hit(path, session_id, title, turn, role, snippet(body, words), updated))
        return hits


def search_sessions(text: str, candidates: Sequence[Candidate], index_path: Path | None = None,
                    progress: Progress | None = None, limit: int = 500) -> tuple[list[Hit], IndexReport]:
    """Bring the index up to date with ``candidates``, then search them (what both faces call)."""
    query_words(text)  # a bad query fails before any file is read
    with opened_index(index_path) as index:
        report = index.update(candidates, progress)
        return index.search(text, candidates, limit), report


@contextlib.contextmanager
def opened_index(index_path: Path | None = None) -> Iterator[SearchIndex]:
    """The index (at ``index_path``, else the user's), open for the ``with`` body; every way it cannot
    be used is a SearchError saying so: no place for it, a place it cannot be, another search writing
    to it (what was read before stays: it was committed).  Both faces open it through here."""
    try:
        path = index_path or default_index_path()
    except HomeUnknown as exc:  # HOME unset and no password entry for this user
        raise SearchError(f"no place for the search index: {exc.strerror}") from None
    try:
        index = SearchIndex(path)
    except (OSError, sqlite3.Error) as exc:  # (a broken file is started again; this is a place it cannot be)
        if isinstance(exc, sqlite3.Error) and is_busy(exc):
            raise busy_error(path) from None
        what = describe_os_error(exc) if isinstance(exc, OSError) else str(exc)
        raise SearchError(f"cannot keep the search index at {path}: {what}") from None
    with index:
        try:
            yield index
        except sqlite3.OperationalError as exc:
            if is_busy(exc):
                raise busy_error(path) from None
            raise


def _stored(path: Path | str | bytes) -> bytes:
    """A file's path as the index keeps it: its bytes (``os.fsencode``; a name that is not UTF-8
    holds surrogates as a str, which the database cannot take).  Rows an older index kept as text
    read back the same."""
    return os.fsencode(path)
