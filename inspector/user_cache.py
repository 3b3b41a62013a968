"""Where session-inspector keeps what it can rebuild (the search index, the prices looked up)."""

from __future__ import annotations

import os
from pathlib import Path


def cache_dir() -> Path:
    """``$XDG_CACHE_HOME/session-inspector`` (else ``~/.cache/session-inspector``)."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "session-inspector"


def made_cache_dir(folder: Path) -> Path:
    """``folder`` (``cache_dir()`` or one inside it) made if missing, the owner's only: the search
    index holds the text of every session.  One this user made wider before is narrowed."""
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    info = os.stat(folder)
    if info.st_uid == os.geteuid() and info.st_mode & 0o077:
        os.chmod(folder, 0o700)
    return folder
