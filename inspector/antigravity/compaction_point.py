"""The context size at which Antigravity compacts on its own: what its gauge is drawn against.

Kept apart from ``checkpoints`` (which grades each compaction's summary, and
imports the fact check to do so) so that a command can name the setting in its
help, and read it, without importing that.
"""

from __future__ import annotations

import os

DEFAULT_COMPACTION_POINT = 150_000  # tokens: where Antigravity is reported to compact on its own (~140-150k)
COMPACTION_POINT_VARIABLE = "SESSION_INSPECTOR_COMPACTION_POINT"


def resolve_compaction_point(explicit: int | None = None) -> int:
    """The compaction point the gauge is drawn against: ``explicit`` (``--compaction-point``), else the
    environment's ``SESSION_INSPECTOR_COMPACTION_POINT`` when it is a whole number above 0, else the default."""
    if explicit is not None:
        return explicit
    configured = os.environ.get(COMPACTION_POINT_VARIABLE, "").strip().replace(",", "").replace("_", "")
    return int(configured) if configured.isdigit() and int(configured) > 0 else DEFAULT_COMPACTION_POINT
