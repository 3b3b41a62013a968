"""Errors and warnings about a session file, phrased for a person."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


class SessionError(Exception):
    """A file that cannot be read as a session: one line, naming file and line."""

    def __init__(self, path: Path | str, message: str, line: int | None = None) -> None:
        self.path = Path(path)
        self.line = line
        self.message = message
        where = f"{self.path}:{line}" if line is not None else str(self.path)
        super().__init__(f"{where}: {message}")


@dataclass(frozen=True)
class LoadWarning:
    """Something skipped while reading, as Gemini CLI skips it too (``gemini_reads``: a line Gemini CLI
    does read but this reader cannot follow, such as one nested thousands of levels deep; an apply
    would drop its message from what Gemini CLI resumes, so the store refuses one)."""

    line: int | None
    message: str
    gemini_reads: bool = False

    def __str__(self) -> str:
        return f"line {self.line}: {self.message}" if self.line is not None else self.message

    def to_json(self) -> dict[str, object]:
        return {"line": self.line, "message": self.message}


class ReadCancelled(Exception):
    """A read stopped because its caller asked it to (``reader.ReadWatch``)."""
