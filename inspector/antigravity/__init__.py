"""Antigravity transcripts, read only: their steps, their compactions (CHECKPOINT steps) and what each forgot.

``transcript`` reads the file (one step a line), ``history`` presents the steps
as Gemini CLI's records (to show them) and as the fact check's input,
``checkpoints`` finds and grades each compaction, ``report`` is what
``analyze`` prints, ``catalog`` finds the conversations on disk.  Nothing
here writes: Antigravity never reads this file back, so every command and the
app refuse to write one (``read_only_refusal``, ``refuse_path``).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from inspector.session.loader import Session

READ_ONLY = ("an Antigravity transcript is read only: Antigravity keeps the conversation in its own store and "
             "never reads this file back, so a change to it would change nothing")
HEAD_BYTES = 1 << 20


def read_only_refusal(session: Session) -> str | None:
    """Why ``session`` may not be written (an Antigravity transcript), else None."""
    return READ_ONLY if session.format == "antigravity" else None


def is_transcript_file(path: Path) -> bool:
    """Whether the file at ``path`` begins as an Antigravity transcript (False when it cannot be read:
    the command's own reading then says why)."""
    from inspector.antigravity.transcript import looks_like_transcript

    try:
        if not os.path.isfile(path):  # (never open a FIFO: it would wait for a writer)
            return False
        with open(path, "rb", buffering=0) as handle:
            head = handle.read(HEAD_BYTES)
    except OSError:
        return False
    return looks_like_transcript(head)


def refuse_path(path: Path) -> str | None:
    """The one line a write to the file at ``path`` is refused with, or None."""
    return f"{path}: nothing was written: {READ_ONLY}" if is_transcript_file(path) else None
