"""Antigravity conversations on disk, for the browser beside Gemini CLI's sessions.

Antigravity keeps each conversation's transcript at
``<root>/brain/<conversation id>/.system_generated/logs/transcript_full.jsonl``
(a shorter ``transcript.jsonl`` beside it), ``<root>`` being
``~/.gemini/antigravity-cli`` for the CLI (``agy``) and ``~/.gemini/antigravity``
for the desktop app, under the same home folder the catalog reads
(``GEMINI_CLI_HOME``, else the user's home).  One file per conversation is
listed: the full transcript, else the short one.  Its row's project is the
root's name, which marks it as Antigravity's in the list.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

from inspector.catalog.candidate import Candidate
from inspector.settings import gemini_home

ROOTS = ("antigravity-cli", "antigravity")  # folders under ~/.gemini: the CLI's and the desktop app's
TRANSCRIPTS = ("transcript_full.jsonl", "transcript.jsonl")  # the first found of a conversation is listed
LOGS = Path(".system_generated") / "logs"


def _regular(path: Path) -> os.stat_result | None:
    try:
        info = os.stat(path)
    except OSError:
        return None
    return info if os.path.isfile(path) else None


def _folders(path: Path) -> list[str]:
    try:
        with os.scandir(path) as entries:
            return sorted(e.name for e in entries if not e.name.startswith(".") and e.is_dir(follow_symlinks=False))
    except OSError:
        return []


def transcript_candidates(home: Path | None = None) -> Iterator[Candidate]:
    """One candidate per conversation under both roots, in name order (the catalog reads and arranges them)."""
    try:
        gemini = (home if home is not None else gemini_home()) / ".gemini"
    except OSError:  # no home folder: nothing to list (the catalog says why for its own folders)
        return
    for root in ROOTS:
        brain = gemini / root / "brain"
        for conversation in _folders(brain):
            logs = brain / conversation / LOGS
            for name in TRANSCRIPTS:
                path = logs / name
                info = _regular(path)
                if info is not None:
                    yield Candidate(path, root, info.st_size, info.st_mtime_ns)
                    break
