"""Where session-inspector keeps what it can rebuild (the search index, the prices looked up)."""

from __future__ import annotations

import os
from pathlib import Path


def cache_dir() -> Path:
    """``$XDG_CACHE_HOME/session-inspector`` (else ``~/.cache/session-inspector``)."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "session-inspector"
