"""Why the store refused or failed, in one line a person can act on."""

from __future__ import annotations

from pathlib import Path

from inspector.session.errors import SessionError


class StoreError(SessionError):
    """An apply or revert that did not happen (or could not finish).

    ``reason`` is a short machine-readable tag: ``stale`` (the file only grew
    since the preview), ``changed`` (it changed otherwise), ``conflict``,
    ``nothing`` (nothing to undo), ``backup``, ``io``, ``invalid``, ``snapshot`` (the summary is no
    single, closed ``<state_snapshot>``).
    A subclass of SessionError so the CLI reports it the same way (exit 2).
    """

    def __init__(self, path: Path | str, message: str, reason: str = "io") -> None:
        super().__init__(path, message)
        self.reason = reason
