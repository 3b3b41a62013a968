"""A transcript as the pieces of the project's ``Session`` (the loader builds it): its steps as Gemini CLI's
message records, the transcript beside.  Nothing here imports the loader, so the loader can import this."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from inspector.antigravity.records import session_messages
from inspector.antigravity.transcript import USER_INPUT, Transcript, parse_transcript
from inspector.session.errors import LoadWarning, SessionError

_CONVERSATION = re.compile(r"/brain/([^/]+)/\.system_generated/logs/[^/]+$")


def conversation_id(path: Path) -> str:
    """The conversation's id: the ``brain/<id>`` folder the transcript sits under, else the file's name."""
    found = _CONVERSATION.search(path.as_posix())
    return found.group(1) if found else path.stem


@dataclass(frozen=True)
class TranscriptRead:
    """What a transcript gives a read-only Session of format "antigravity"."""

    metadata: dict[str, Any]
    messages: list[dict[str, Any]]
    warnings: list[LoadWarning]
    line_count: int
    transcript: Transcript


def read_session(path: Path, data: bytes) -> TranscriptRead:
    """``data`` (a transcript's bytes), read."""
    transcript = parse_transcript(path, data)
    if not transcript.steps:
        raise SessionError(path, "an Antigravity transcript with no step that can be read")
    messages, _lines = session_messages(transcript.steps)
    times = [s.created_at for s in transcript.steps if s.created_at]  # ISO times in UTC: in order as text
    first = next((s for s in transcript.steps if s.kind == USER_INPUT and s.request), None)
    metadata = {"sessionId": conversation_id(path), "kind": "antigravity",
                "summary": " ".join(first.request.split())[:500] if first is not None else "",  # the browser's title
                "startTime": min(times, default=""), "lastUpdated": max(times, default="")}
    return TranscriptRead(metadata, messages, list(transcript.warnings), transcript.line_count, transcript)
