"""The bytes an apply writes, built from the new history and proven to read back as it.

JSONL: the two lines Gemini CLI's /compress appends (``$set`` of the session id, then of every
message), written after the file.  Legacy JSON and checkpoints: the whole new document, in the
file's own indent.  ``plan_bytes`` reads what it built back through the project's own loader and
refuses (StoreError ``invalid``) unless it is exactly the new history.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from inspector.jsjson import js_stringify
from inspector.session.errors import SessionError
from inspector.session.history import Turn, messages_to_turns
from inspector.session.loader import Session, parse
from inspector.session.records import loads_line
from inspector.store.errors import StoreError
from inspector.store.records import build_records, context_records, first_difference

Content = dict[str, Any]
_ODD = re.compile(r"(?:^|[:\[,])(?:-?\d(?:\d*[.eE]|\d{15})|-?Infinity|NaN)|[{,]\"\d+\":|[\ud800-\udfff]")


def js_timestamp(moment: datetime | None = None) -> str:
    """``new Date().toISOString()``."""
    moment = (moment or datetime.now(UTC)).astimezone(UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def js_json(value: Any, indent: int | None = None) -> str:
    """``JSON.stringify(value, null, indent)``: the C encoder, checked for the rare odd cases."""
    try:
        if indent:
            text = json.dumps(value, ensure_ascii=False, indent=indent)
        else:
            text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    except (TypeError, ValueError):
        return js_stringify(value, indent)
    if _ODD.search(text):
        return js_stringify(value, indent)
    return text


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@dataclass
class Plan:
    """What one apply will write."""

    data: bytes  # jsonl: the bytes to append; else: the whole new file
    append: bool
    turns_after: int
    reused: int
    adapted: int
    created: int


def _parse_whole(path: Path, data: bytes) -> Any:
    """The document as Gemini CLI reads it (invalid UTF-8 as U+FFFD, as the loader reads it too)."""
    try:
        return loads_line(data)
    except (ValueError, RecursionError):
        raise StoreError(path, "the file is no longer readable JSON; nothing was written", "changed") from None


def _indent_of(data: bytes) -> int | None:
    """The indent the file was written with (None: one line)."""
    match = re.search(rb"\n( +)\S", data[:4096])
    return len(match.group(1)) if match else None


def _read_back(path: Path, data: bytes) -> list[Content]:
    try:
        session = parse(path, data)
    except SessionError as exc:
        raise StoreError(path, f"the records built would not load ({exc.message}); nothing was written", "invalid") \
            from None
    if session.contents is not None:
        return list(session.contents)
    return [turn.content for turn in messages_to_turns(session.messages)]


def plan_bytes(
    session: Session,
    current: bytes,
    turns: Sequence[Turn],
    new_history: Sequence[Content],
    sources: Sequence[Turn | None],
    extra: list[dict[str, Any]],
    timestamp: str,
) -> Plan:
    path = session.path
    if session.format == "checkpoint":
        doc = _parse_whole(path, current)
        history = list(new_history)
        body: Any = history if isinstance(doc, list) else {**doc, "history": history}
        text = js_json(body, _indent_of(current))
        data = text.encode("utf-8") + (b"\n" if current.endswith(b"\n") else b"")
        want = history
        plan = Plan(data, False, len(history), 0, 0, 0)
    else:
        built = build_records(session.messages, turns, new_history, sources, now=lambda: timestamp)
        messages = context_records(session.messages) + built.records + extra
        want = list(new_history) + [t.content for t in messages_to_turns(extra)]
        if session.format == "jsonl":
            # Gemini CLI's two lines; the id's only where it is text (a $set may have made it anything,
            # and one written back as null would leave a file no longer read as a session).
            lines: list[dict[str, Any]] = [{"$set": {"sessionId": session.session_id}}] \
                if session.session_id is not None else []
            lines.append({"$set": {"messages": messages, "lastUpdated": timestamp}})
            text = "".join(js_json(line) + "\n" for line in lines)
            lead = b"\n" if current and not current.endswith(b"\n") else b""
            data = lead + text.encode("utf-8")
        else:
            doc = _parse_whole(path, current)
            if not isinstance(doc, dict):
                raise StoreError(path, "the file is no longer a legacy session; nothing was written", "changed")
            doc = dict(doc)
            doc["messages"] = messages
            if "lastUpdated" in doc:
                doc["lastUpdated"] = timestamp
            text = js_json(doc, _indent_of(current))
            data = text.encode("utf-8") + (b"\n" if current.endswith(b"\n") else b"")
        plan = Plan(data, session.format == "jsonl", len(want), built.reused, built.adapted, built.created)
    # The proof: what will be on disk reads back as exactly the new history.
    if plan.append:
        # A $set.messages line replaces every message before it, so the
        # messages after the apply depend only on the lines appended; a
        # metadata line stands in for the rest of the file (its values are never read back: the
        # file's own, once a $set has merged into them, need not be text).
        header = js_json({"sessionId": "read-back", "projectHash": "read-back"}).encode()
        got = _read_back(path, header + b"\n" + plan.data.lstrip(b"\n"))
    else:
        got = _read_back(path, plan.data)
    problem = first_difference(got, want)
    if problem:
        raise StoreError(path, f"refusing to write: {problem}; nothing was written", "invalid")
    return plan


def grown_records(session: Session, current: bytes) -> list[dict[str, Any]]:
    """Messages the lines appended since the preview add (new ids only)."""
    now = parse(session.path, current)
    before = {r.get("id"): r for r in session.messages}
    seen = [r for r in now.messages if r.get("id") in before]
    if [r.get("id") for r in seen] != [r.get("id") for r in session.messages] or any(
        r is not before[r.get("id")] and r != before[r.get("id")] for r in seen
    ):
        raise StoreError(
            session.path,
            "the session changed since the preview (lines appended after it rewrite earlier messages); "
            "preview again. Nothing was written",
            "stale",
        )
    return [r for r in now.messages if r.get("id") not in before]

