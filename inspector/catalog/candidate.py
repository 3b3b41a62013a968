"""A file the browser may list, found by its name and stat and not read yet: what every source of the
list (Gemini CLI's chats folders, Antigravity's transcripts) hands ``listing``."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

SESSION_PREFIX = "session-"


@dataclass(frozen=True)
class Candidate:
    """A file that may be a session: found by name and stat, not read yet."""

    path: Path
    project: str  # the project's temp folder name (a short name, or a 64-character hash)
    size: int
    mtime_ns: int
    parent_folder: str | None = None  # chats/<parent_folder>/<id>.jsonl: a subagent's place

    @property
    def named_like_session(self) -> bool:
        return self.path.name.startswith((SESSION_PREFIX, "checkpoint-"))
