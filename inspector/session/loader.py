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

import hashlib
import json
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import orjson

from inspector.jsjson import JS_WHITESPACE
from inspector.session.errors import LoadWarning, SessionError
from inspector.session.validate import check_content, check_message

Format = Literal["jsonl", "json", "checkpoint"]

# Bytes JavaScript's trim() treats as blank on a line of its own (ASCII subset).
_BLANK_BYTES = b" \t\n\r\v\f"


@dataclass
class Session:
    """One session file as read: everything needed to show it and write it back."""

    path: Path
    format: Format
    metadata: dict[str, Any]
    messages: list[dict[str, Any]] = field(default_factory=list)
    contents: list[dict[str, Any]] | None = None  # checkpoint files only
    warnings: list[LoadWarning] = field(default_factory=list)
    message_lines: dict[str, int] = field(default_factory=dict)  # id -> line (jsonl)
    line_count: int = 0
    size: int = 0
    sha256: str = ""
    mtime_ns: int = 0
    ends_with_newline: bool = True
    bare_checkpoint: bool = False

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


def read_bytes(path: Path) -> bytes:
    """The file's bytes, or a SessionError saying plainly why not."""
    try:
        info = path.stat()
    except FileNotFoundError:
        raise SessionError(path, "no such file") from None
    except PermissionError:
        raise SessionError(path, "permission denied") from None
    except OSError as exc:
        raise SessionError(path, f"cannot read: {exc.strerror or exc}") from None
    if stat.S_ISDIR(info.st_mode):
        raise SessionError(path, "is a folder, not a session file")
    try:
        with path.open("rb") as handle:
            return handle.read()
    except PermissionError:
        raise SessionError(path, "permission denied") from None
    except OSError as exc:
        raise SessionError(path, f"cannot read: {exc.strerror or exc}") from None


def load(path: str | os.PathLike[str]) -> Session:
    """Read a session file of any format.  Raises SessionError for bad input."""
    path = Path(path)
    data = read_bytes(path)
    session = parse(path, data)
    try:
        session.mtime_ns = path.stat().st_mtime_ns
    except OSError:
        pass
    return session


def parse(path: Path, data: bytes) -> Session:
    if not data.strip(_BLANK_BYTES):
        raise SessionError(path, "the file is empty")
    nul = data.find(b"\x00")
    if nul != -1:
        raise SessionError(path, f"binary data (a NUL byte at offset {nul}), not a session file")
    whole = _parse_whole(data)
    if whole is not _FAILED:
        session = _from_document(path, data, whole)
    else:
        session = _read_jsonl(path, data)
    session.size = len(data)
    session.sha256 = hashlib.sha256(data).hexdigest()
    session.ends_with_newline = data.endswith(b"\n")
    return session


_FAILED = object()


def _parse_whole(data: bytes) -> Any:
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
        return _checkpoint(path, {}, doc, bare=True)
    if not isinstance(doc, dict):
        raise SessionError(path, "not a Gemini CLI session: the file holds a single JSON value, not an object")
    if "sessionId" in doc:
        core = data.strip(_BLANK_BYTES)
        if b"\n" not in core and b"\r" not in core:
            # One line: Gemini CLI reads it as a JSONL recording first (a
            # metadata line, maybe with messages; repeated ids collapse) and
            # falls back to the legacy reading only if that finds no metadata.
            return _read_jsonl(path, data, legacy=doc)
        return _legacy(path, doc)
    history = doc.get("history")
    if isinstance(history, list):
        return _checkpoint(path, {k: v for k, v in doc.items() if k != "history"}, history, bare=False)
    raise SessionError(path, "not a Gemini CLI session (no sessionId, projectHash or history)")


def _legacy(path: Path, doc: dict[str, Any]) -> Session:
    messages = doc.get("messages")
    if messages is None:
        messages = []
    if not isinstance(messages, list):
        raise SessionError(path, "'messages' must be a list")
    for i, record in enumerate(messages):
        if not isinstance(record, dict):
            raise SessionError(path, f"messages[{i}] must be an object")
        problem = check_message(record)
        if problem:
            ident = record.get("id")
            raise SessionError(path, f"messages[{i}] (id {ident!r}): {problem}")
    metadata = {k: v for k, v in doc.items() if k != "messages"}
    return Session(path=path, format="json", metadata=metadata, messages=messages)


def _checkpoint(path: Path, wrapper: dict[str, Any], history: list[Any], bare: bool) -> Session:
    for i, content in enumerate(history):
        problem = check_content(content)
        if problem:
            raise SessionError(path, f"history[{i}]: {problem}")
    return Session(path=path, format="checkpoint", metadata=wrapper, contents=history, bare_checkpoint=bare)


def _split_lines(data: bytes) -> list[bytes]:
    """Lines as Node's readline sees them: split on LF, CRLF and a lone CR."""
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    if b"\r" not in data:
        return lines
    out: list[bytes] = []
    for line in lines:
        if line.endswith(b"\r"):
            line = line[:-1]
        out.extend(line.split(b"\r") if b"\r" in line else (line,))
    return out


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def js_json_loads(text: str) -> Any:
    """``JSON.parse``: the standard parser without its NaN/Infinity extension."""
    return json.loads(text, parse_constant=_no_constant)


def _loads_line(raw: bytes) -> Any:
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError:
        # orjson refuses a few things JavaScript accepts (lone surrogate
        # escapes, integers beyond 64 bits, invalid UTF-8 that Node replaces
        # with U+FFFD): ask the standard parser.
        return js_json_loads(raw.decode("utf-8", "replace"))


def _is_blank(raw: bytes) -> bool:
    if not raw.strip(_BLANK_BYTES):
        return True
    if raw.isascii():
        return False
    return not raw.decode("utf-8", "replace").strip(JS_WHITESPACE)


def _read_jsonl(path: Path, data: bytes, legacy: dict[str, Any] | None = None) -> Session:
    metadata: dict[str, Any] = {}
    messages: dict[str, dict[str, Any]] = {}
    lines_of: dict[str, int] = {}
    warnings: list[LoadWarning] = []
    first_error: int | None = None
    lines = _split_lines(data)
    for number, raw in enumerate(lines, start=1):
        try:
            record = _loads_line(raw)
        except (json.JSONDecodeError, RecursionError, ValueError) as exc:
            if _is_blank(raw):
                continue
            reason = f"{exc.msg} at column {exc.colno}" if isinstance(exc, json.JSONDecodeError) else str(exc)
            last = number == len(lines) and not data.endswith(b"\n")
            what = "incomplete last line (still being written?)" if last else "not valid JSON"
            warnings.append(LoadWarning(number, f"{what}: {reason}; skipped"))
            if first_error is None:
                first_error = number
            continue
        if not isinstance(record, dict):
            continue
        rewind = record.get("$rewindTo")
        if isinstance(rewind, str):
            if rewind in messages:
                keep: dict[str, dict[str, Any]] = {}
                for ident, message in messages.items():
                    if ident == rewind:
                        break
                    keep[ident] = message
                messages = keep
            else:
                messages = {}
            continue
        ident = record.get("id")
        if isinstance(ident, str):
            problem = check_message(record)
            if problem:
                raise SessionError(path, f"message {ident!r}: {problem}", number)
            messages[ident] = record
            lines_of[ident] = number
            continue
        update = record.get("$set")
        if isinstance(update, dict):
            checkpoint = update.get("messages")
            if isinstance(checkpoint, list):
                messages = {}
                for i, message in enumerate(checkpoint):
                    if isinstance(message, dict) and isinstance(message.get("id"), str):
                        problem = check_message(message)
                        if problem:
                            raise SessionError(path, f"$set.messages[{i}]: {problem}", number)
                        messages[message["id"]] = message
                        lines_of[message["id"]] = number
                update = {k: v for k, v in update.items() if k != "messages"}
            metadata.update(update)
            continue
        if isinstance(record.get("sessionId"), str) and isinstance(record.get("projectHash"), str):
            metadata.update({k: v for k, v in record.items() if k != "messages"})
            listed = record.get("messages")
            if isinstance(listed, list):
                for i, message in enumerate(listed):
                    if isinstance(message, dict) and isinstance(message.get("id"), str):
                        problem = check_message(message)
                        if problem:
                            raise SessionError(path, f"messages[{i}]: {problem}", number)
                        messages[message["id"]] = message
                        lines_of[message["id"]] = number
    if not metadata.get("sessionId") or not metadata.get("projectHash"):
        if legacy is not None:
            return _legacy(path, legacy)
        if first_error is not None:
            raise _json_error(path, data)
        raise SessionError(path, "not a Gemini CLI session: no line holds sessionId and projectHash")
    return Session(
        path=path,
        format="jsonl",
        metadata=metadata,
        messages=list(messages.values()),
        warnings=warnings,
        message_lines=lines_of,
        line_count=len(lines),
    )
