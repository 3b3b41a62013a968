"""Where session-inspector keeps what it can rebuild (the search index, the prices looked up)."""

from __future__ import annotations

import errno
import os
from pathlib import Path


class HomeUnknown(OSError):
    """No home folder can be told (HOME unset and this user has no entry in the password file)."""

    def __str__(self) -> str:
        return self.strerror or super().__str__()  # its words alone, without "[Errno 2]"


def home() -> Path:
    """The user's home folder; HomeUnknown (an OSError, said in one line) when none can be told, as
    for a container's user with no name."""
    try:
        return Path.home()
    except (RuntimeError, KeyError, OSError):
        raise HomeUnknown(errno.ENOENT, f"no home folder is known for user {os.getuid()} (HOME is not set)") from None


def cache_dir() -> Path:
    """``$XDG_CACHE_HOME/session-inspector`` (else ``~/.cache/session-inspector``); HomeUnknown when
    neither can be told."""
    base = os.environ.get("XDG_CACHE_HOME")
    if base:
        return Path(base) / "session-inspector"
    try:
        return home() / ".cache" / "session-inspector"
    except HomeUnknown as exc:
        raise HomeUnknown(errno.ENOENT, f"{exc.strerror}; set XDG_CACHE_HOME or HOME") from None


def made_cache_dir(folder: Path) -> Path:
    """``folder`` (``cache_dir()`` or one inside it) made if missing, the owner's only: the search
    index holds the text of every session.  One this user made wider before is narrowed."""
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    info = os.stat(folder)
    if info.st_uid == os.geteuid() and info.st_mode & 0o077:
        os.chmod(folder, 0o700)
    return folder
