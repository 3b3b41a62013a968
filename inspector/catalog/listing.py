"""Finding sessions the way Gemini CLI's ``/resume`` lists them.

Gemini CLI 0.61 (``getSessionFiles`` in the CLI, over ``loadConversationRecord``
in the core) lists a project's sessions from a plain ``readdir`` of
``<project temp dir>/chats``:

* only regular files named ``session-*.json`` / ``session-*.jsonl``;
* a file that cannot be read, or has no ``sessionId``, is left out;
* a file with no conversation (only info / warning / error records, or only
  prompts it would never resend: commands, ``<session_context>``) is left out;
* ``kind: "subagent"`` files are left out of the list (they live in
  ``chats/<parent session id>/<id>.jsonl``);
* two files with one ``sessionId`` are one session: the later ``lastUpdated``;
* the title is the ``summary`` Gemini CLI wrote with ``$set``, else the first
  prompt; the time is ``lastUpdated`` (else ``startTime``, else the file's).

This module follows those rules, with three differences a person inspecting
files needs: subagent sessions are kept, under their parent; a ``session-*``
file that cannot be read is kept with the reason (``/resume`` hides it
silently); and a folder given by the user may hold any ``*.json``/``*.jsonl``
name (sample sessions, ``/chat save`` checkpoints), side files being the ones
that neither read as a session nor are named like one.  Everything here is
plain data: the app and the CLI present what it returns.
"""

from __future__ import annotations

import os
import re
import stat
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from inspector.catalog.candidate import SESSION_PREFIX, Candidate
from inspector.format import describe_os_error
from inspector.jsjson import js_to_string
from inspector.session import Session, SessionError, history, load
from inspector.session.history import is_ignored_user_content
from inspector.session.loader import not_a_file
from inspector.settings import gemini_home
from inspector.user_cache import HomeUnknown

SESSION_SUFFIXES = (".jsonl", ".json")
_UNSAFE_NAME = re.compile(r"[^a-zA-Z0-9_-]")


def gemini_tmp() -> Path:
    """``~/.gemini/tmp`` (honouring GEMINI_CLI_HOME): one folder per project."""
    return gemini_home() / ".gemini" / "tmp"


def searched_where(folder: Path | None) -> str:
    """Where the sessions listed or searched are, as both faces name it: ``folder``, else every
    project's ``chats`` folder (said so, with what to set, when no home folder is known)."""
    if folder is not None:
        return str(folder)
    try:
        return f"{gemini_tmp()}/*/chats"
    except HomeUnknown as exc:
        return f"~/.gemini/tmp/*/chats ({exc.strerror})"


def folder_name_for(session_id: str) -> str:
    """The folder Gemini CLI puts a session's subagents in: its id with every character but
    letters, digits, ``_`` and ``-`` made ``_`` (``sanitizeFilenamePart``)."""
    return _UNSAFE_NAME.sub("_", session_id)


@dataclass(frozen=True)
class SessionEntry:
    """What the browser shows of one session file, read once."""

    candidate: Candidate
    session_id: str | None = None
    kind: str = ""  # "main", "subagent", ... as recorded ("" when the file does not say)
    format: str = ""
    summary: str = ""  # the $set.summary title Gemini CLI wrote ("" when none)
    first_prompt: str = ""
    start_time: str = ""
    last_updated: str = ""  # as recorded; "" when the file has none
    turns: int = 0  # the curated history's turns: the count the session view shows
    directories: tuple[str, ...] = ()  # the folders the session recorded (its project's first)
    conversation: bool = False  # holds something /resume would resume
    error: str | None = None  # why it cannot be read

    @property
    def path(self) -> Path:
        return self.candidate.path

    @property
    def title(self) -> str:
        return self.summary or self.first_prompt

    @property
    def is_subagent(self) -> bool:
        return self.kind == "subagent"

    @property
    def updated(self) -> float:
        """``lastUpdated`` (else ``startTime``, else the file's time) in seconds since the epoch."""
        for stamp in (self.last_updated, self.start_time):
            seconds = parse_time(stamp)
            if seconds is not None:
                return seconds
        return self.candidate.mtime_ns / 1e9

    @property
    def short_id(self) -> str:
        """The first 8 characters of the session id (the part Gemini CLI puts in the file name),
        else the file name without its suffix."""
        if self.session_id:
            return self.session_id[:8]
        return self.path.stem


@dataclass(frozen=True)
class CatalogRow:
    """One row of the browser: a session, or a subagent session under the row above it."""

    entry: SessionEntry
    depth: int = 0  # 1: a subagent listed under its parent
    subagents: int = 0  # how many subagent rows follow this one


@dataclass(frozen=True)
class Catalog:
    """The sessions to list, in order, and what was left out."""

    rows: tuple[CatalogRow, ...]
    hidden: int = 0  # side files, files without a conversation, older copies of a session
    skipped: tuple[tuple[str, int], ...] = ()  # the hidden ones by why: ("no conversation", 3), ...

    def skipped_words(self) -> str:
        """What was left out and why, in one phrase ("2 side files, 1 older copy"), or ""."""
        return ", ".join(f"{count:,} {reason if count != 1 else _ONE.get(reason, reason)}"
                         for reason, count in self.skipped if count)

    @property
    def entries(self) -> tuple[SessionEntry, ...]:
        return tuple(row.entry for row in self.rows)


SIDE_FILES, NO_CONVERSATION, OLDER_COPIES = "side files", "with no conversation", "older copies"
_ONE = {SIDE_FILES: "side file", OLDER_COPIES: "older copy"}


def relative_time(seconds: float, now: float) -> str:
    """How long ago, as ``/resume`` says it: "just now", "5 min ago", "3 h ago", "yesterday",
    "4 days ago", then the date."""
    ago = now - seconds
    if ago < 0:
        return time.strftime("%Y-%m-%d", time.localtime(seconds))  # (a clock behind the file's: its date)
    if ago < 60:
        return "just now"
    if ago < 3600:
        return f"{int(ago // 60)} min ago"
    if ago < 86_400:
        return f"{int(ago // 3600)} h ago"
    if ago < 2 * 86_400:
        return "yesterday"
    if ago < 30 * 86_400:
        return f"{int(ago // 86_400)} days ago"
    return time.strftime("%Y-%m-%d", time.localtime(seconds))


def parse_time(stamp: str) -> float | None:
    """An ISO 8601 time as Gemini CLI writes it (``2026-11-22T05:23:02.944Z``), in seconds."""
    if not stamp:
        return None
    try:
        return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()
    except (ValueError, OverflowError, OSError):
        return None


# -- finding files ---------------------------------------------------------------------


def _regular(path: Path) -> os.stat_result | None:
    try:
        info = path.stat()
    except OSError:
        return None
    return info if stat.S_ISREG(info.st_mode) else None


def is_folder(path: Path | os.DirEntry[str]) -> bool:
    """Whether ``path`` is a folder; False where it cannot be looked at (reading it then says why)."""
    try:
        return path.is_dir()
    except OSError:  # Path.is_dir raises PermissionError where a folder above may not be searched
        return False


def unreachable(path: Path) -> str | None:
    """Why ``path`` cannot be looked at ("no such file or folder", "permission denied", ...), or None.
    A folder must also be listable (else it would seem to hold no session)."""
    try:
        mode = path.stat().st_mode
        if stat.S_ISDIR(mode):
            with os.scandir(path):
                pass
    except (FileNotFoundError, NotADirectoryError):
        return "no such file or folder"
    except OSError as exc:
        return describe_os_error(exc)
    kind = not_a_file(mode) if not stat.S_ISDIR(mode) else None
    return f"is {kind}, not a session file or folder" if kind is not None else None  # (a FIFO would be waited on)


def _listing(folder: Path) -> list[os.DirEntry[str]]:
    try:
        with os.scandir(folder) as entries:
            return sorted(entries, key=lambda e: e.name)
    except OSError:
        return []


def _chats_files(chats: Path, project: str, *, any_name: bool) -> Iterator[Candidate]:
    """The session files of one chats folder, and its subagents' (``<parent>/<id>.jsonl``)."""
    for entry in _listing(chats):
        path = Path(entry.path)
        if entry.name.startswith("."):
            continue  # the store's .session-inspector, temp files
        if is_folder(entry):
            for inner in _listing(path):
                if inner.name.endswith(".jsonl") and not inner.name.startswith("."):
                    info = _regular(Path(inner.path))
                    if info is not None:
                        yield Candidate(Path(inner.path), project, info.st_size, info.st_mtime_ns, entry.name)
            continue
        if not entry.name.endswith(SESSION_SUFFIXES):
            continue
        if not any_name and not entry.name.startswith(SESSION_PREFIX):
            continue
        info = _regular(path)
        if info is not None:
            yield Candidate(path, project, info.st_size, info.st_mtime_ns)


def find_files(folder: Path | None = None) -> list[Candidate]:
    """The files that may be sessions: every project's ``chats`` folder under ``~/.gemini/tmp``
    (names as ``/resume`` takes them), or every ``*.json``/``*.jsonl`` in ``folder``."""
    if folder is not None:
        project = folder.resolve().parent.name if folder.name == "chats" else folder.name
        return list(_chats_files(folder, project, any_name=True))
    found: list[Candidate] = []
    for place in _listing(gemini_tmp()):
        if is_folder(place):
            found.extend(_chats_files(Path(place.path) / "chats", place.name, any_name=False))
    from inspector.antigravity.catalog import transcript_candidates

    found.extend(transcript_candidates())  # Antigravity's conversations, read only, beside them
    return found


# -- reading one -----------------------------------------------------------------------


def is_resumable(message: dict[str, Any]) -> bool:
    """Whether a message record is conversation ``/resume`` would bring back: a prompt Gemini CLI
    resends, or a reply with text, tool calls or thoughts (``isResumableMessageRecord``)."""
    kind = message.get("type")
    if kind == "user":
        return not is_ignored_user_content(message.get("content"))
    if kind != "gemini":
        return False
    calls, thoughts = message.get("toolCalls"), message.get("thoughts")
    if (isinstance(calls, list) and calls) or (isinstance(thoughts, list) and thoughts):
        return True
    return bool(_text_of(message.get("content")).strip())


def _text_of(content: Any) -> str:
    """The text parts of a message's content, joined (what Gemini CLI shows as its first prompt)."""
    if isinstance(content, str):
        return content
    if isinstance(content, dict):
        content = [content]
    if not isinstance(content, list):
        return ""
    return "".join(js_to_string(p["text"]) for p in content
                   if isinstance(p, dict) and isinstance(p.get("text"), str))


def first_prompt(session: Session) -> str:
    """The first prompt: the first user turn of the history with text, a compressed session's
    ``<state_snapshot>`` and a checkpoint's context turn skipped; whitespace collapsed."""
    for turn in history(session):
        if turn.role != "user" or turn.is_tool_result:
            continue
        if session.contents is not None and is_ignored_user_content(turn.parts):
            continue  # a /chat save checkpoint keeps its <session_context> turn
        text = _text_of(turn.parts)
        if text.lstrip().startswith("<state_snapshot>"):
            continue
        if text.strip():
            return " ".join(text.split())
    return ""


def _string(metadata: dict[str, Any], key: str) -> str:
    value = metadata.get(key)
    return value if isinstance(value, str) else ""


def describe(candidate: Candidate, reader: Callable[[Path], Session] = load) -> SessionEntry:
    """Read one file and say what the browser shows of it (never raises for a bad file)."""
    try:
        session = reader(candidate.path)
    except SessionError as exc:
        return SessionEntry(candidate, error=exc.message)
    except (OSError, ValueError, RecursionError, MemoryError) as exc:  # never break the list
        return SessionEntry(candidate, error=str(exc) or type(exc).__name__)
    return describe_session(candidate, session)


def describe_session(candidate: Candidate, session: Session) -> SessionEntry:
    """What the browser shows of a session already read."""
    metadata = session.metadata
    turns = history(session)
    if session.contents is not None:  # a /chat save checkpoint: a conversation if it holds a prompt or reply
        conversation = any(not (t.role == "user" and is_ignored_user_content(t.parts)) for t in turns)
    else:
        conversation = any(is_resumable(m) for m in session.messages)
    return SessionEntry(
        candidate,
        session_id=session.session_id,
        kind=_string(metadata, "kind"),
        format=session.format,
        summary=" ".join(_string(metadata, "summary").split()),
        first_prompt=first_prompt(session),
        start_time=_string(metadata, "startTime"),
        last_updated=_string(metadata, "lastUpdated"),
        turns=len(turns),
        conversation=conversation,
        directories=tuple(d for d in metadata.get("directories") or () if isinstance(d, str))
        if isinstance(metadata.get("directories"), list) else (),
    )


# -- arranging ---------------------------------------------------------------------------


def _left_out(entry: SessionEntry) -> str | None:
    """Why a read file is no row (None: it is one): a row is a conversation, or a session-named
    file that cannot be read."""
    if entry.error is not None:
        return None if entry.candidate.parent_folder is None and entry.candidate.named_like_session else SIDE_FILES
    if entry.candidate.parent_folder is not None and not entry.is_subagent:
        return SIDE_FILES  # a file in a subfolder that is not a subagent session
    return None if entry.conversation else NO_CONVERSATION


def _newer(a: SessionEntry, b: SessionEntry) -> bool:
    """``a`` replaces ``b`` as the row of their session: a later time (a tie keeps ``b``)."""
    return a.updated > b.updated


def arrange(entries: Iterable[SessionEntry]) -> Catalog:
    """The rows the browser shows: sessions newest first (by ``lastUpdated``), one per session id
    and project, each followed by its subagent sessions (newest first); unreadable files last."""
    entries = sorted(entries, key=lambda e: str(e.path))  # the reference walks names in order
    skipped = dict.fromkeys((NO_CONVERSATION, OLDER_COPIES, SIDE_FILES), 0)
    latest: dict[tuple[str, str], SessionEntry] = {}
    tops: list[SessionEntry] = []
    children: dict[tuple[str, str], list[SessionEntry]] = {}
    for entry in entries:
        reason = _left_out(entry)
        if reason is not None:
            skipped[reason] += 1
            continue
        if entry.error is not None:
            tops.append(entry)
        elif entry.candidate.parent_folder is not None:
            children.setdefault((entry.candidate.project, entry.candidate.parent_folder), []).append(entry)
        elif entry.session_id is None:
            tops.append(entry)  # a checkpoint: nothing to share an id with
        else:
            key = (entry.candidate.project, entry.session_id)
            kept = latest.get(key)
            if kept is None or _newer(entry, kept):
                latest[key] = entry
            skipped[OLDER_COPIES] += kept is not None
    tops.extend(latest.values())
    tops.sort(key=lambda e: (e.error is not None, -e.updated, e.path.name))
    rows: list[CatalogRow] = []
    placed: set[tuple[str, str]] = set()
    for entry in tops:
        kids: list[SessionEntry] = []
        if entry.session_id is not None and entry.error is None:
            key = (entry.candidate.project, folder_name_for(entry.session_id))
            if key not in placed:
                placed.add(key)
                kids = sorted(children.get(key, ()), key=lambda e: (-e.updated, e.path.name))
        rows.append(CatalogRow(entry, 0, len(kids)))
        rows.extend(CatalogRow(kid, 1) for kid in kids)
    # subagents whose parent is not listed stay visible, on their own
    orphans = [kid for key, kids in children.items() if key not in placed for kid in kids]
    rows.extend(CatalogRow(kid) for kid in sorted(orphans, key=lambda e: (-e.updated, e.path.name)))
    return Catalog(tuple(rows), sum(skipped.values()), tuple(skipped.items()))


def catalog(folder: Path | None = None, reader: Callable[[Path], Session] = load) -> Catalog:
    """Find, read and arrange every session (the list the browser shows)."""
    return arrange(describe(candidate, reader) for candidate in find_files(folder))


def subagent_files(session_path: Path, session_id: str | None) -> list[Path]:
    """The subagent session files of a session: ``<its folder>/<its id, sanitised>/*.jsonl``."""
    if not session_id:
        return []
    folder = session_path.parent / folder_name_for(session_id)
    found = []
    for entry in _listing(folder):
        path = Path(entry.path)
        if entry.name.endswith(".jsonl") and not entry.name.startswith(".") and _regular(path) is not None:
            found.append(path)
    return found


def short_project(name: str, width: int = 12) -> str:
    """A project folder name that fits ``width``: a 64-character hash becomes its first characters."""
    if len(name) <= width:
        return name
    return name[: max(width - 1, 1)] + "…"


def human_size(size: int) -> str:
    """A byte count as people read it: 812 B, 14.2 kB, 3.1 MB."""
    value = float(size)
    for unit in ("B", "kB", "MB", "GB"):
        if value < 1000 or unit == "GB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1000
    return f"{size} B"
