"""A transcript as the project's ``Session``: its steps as Gemini CLI's message records, the transcript beside."""

from __future__ import annotations

import re
from pathlib import Path

from inspector.antigravity.history import session_messages
from inspector.antigravity.transcript import USER_INPUT, parse_transcript
from inspector.session.errors import SessionError
from inspector.session.loader import Session

_CONVERSATION = re.compile(r"/brain/([^/]+)/\.system_generated/logs/[^/]+$")


def conversation_id(path: Path) -> str:
    """The conversation's id: the ``brain/<id>`` folder the transcript sits under, else the file's name."""
    found = _CONVERSATION.search(path.as_posix())
    return found.group(1) if found else path.stem


def read_session(path: Path, data: bytes) -> Session:
    """``data`` (a transcript's bytes) as a read-only Session of format "antigravity"."""
    transcript = parse_transcript(path, data)
    if not transcript.steps:
        raise SessionError(path, "an Antigravity transcript with no step that can be read")
    messages, _lines = session_messages(transcript.steps)
    times = [s.created_at for s in transcript.steps if s.created_at]  # ISO times in UTC: in order as text
    first = next((s for s in transcript.steps if s.kind == USER_INPUT and s.request), None)
    metadata = {"sessionId": conversation_id(path), "kind": "antigravity",
                "summary": " ".join(first.request.split())[:500] if first is not None else "",  # the browser's title
                "startTime": min(times, default=""), "lastUpdated": max(times, default="")}
    return Session(path=path, format="antigravity", metadata=metadata,
                   messages=messages, warnings=list(transcript.warnings), line_count=transcript.line_count,
                   transcript=transcript)
