"""Apply a compaction to a session file and undo it, never losing a byte.

    entry = apply_history(session, turns, new_history, sources, journal=JournalInfo(...))
    entry = apply_compaction(session, turns, compress_result)   # = apply_plan(session, turns, plan_of(...))
    results = revert(path, steps=1, force=False)
    journal = read_history(path); undoable(path)

Backups and the journal live in ``<folder>/.session-inspector/<file name>/``
(see ``store.files`` for why Gemini CLI never lists them as sessions).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from inspector.store.apply import apply_history, js_json, js_timestamp, preview_state
    from inspector.store.errors import StoreError
    from inspector.store.files import STORE_DIR, WriteHook, backups_dir, is_store_path, own_writes, store_dir
    from inspector.store.journal import Journal, JournalEntry, JournalInfo, Region
    from inspector.store.plan import ApplyPlan, apply_compaction, apply_plan, plan_of
    from inspector.store.records import build_records, check_records, same
    from inspector.store.reverting import RevertResult, read_history, revert, undoable

# Where each name lives: loaded when first asked for (``from inspector.store import revert``), so that
# a light module (``store.files``, which the watcher reads) does not bring the rest, pydantic included,
# to every start of the app.
_WHERE = {
    "apply_history": "inspector.store.apply",
    "js_json": "inspector.store.apply",
    "js_timestamp": "inspector.store.apply",
    "preview_state": "inspector.store.apply",
    "StoreError": "inspector.store.errors",
    "STORE_DIR": "inspector.store.files",
    "WriteHook": "inspector.store.files",
    "backups_dir": "inspector.store.files",
    "is_store_path": "inspector.store.files",
    "own_writes": "inspector.store.files",
    "store_dir": "inspector.store.files",
    "Journal": "inspector.store.journal",
    "JournalEntry": "inspector.store.journal",
    "JournalInfo": "inspector.store.journal",
    "Region": "inspector.store.journal",
    "ApplyPlan": "inspector.store.plan",
    "apply_compaction": "inspector.store.plan",
    "apply_plan": "inspector.store.plan",
    "plan_of": "inspector.store.plan",
    "build_records": "inspector.store.records",
    "check_records": "inspector.store.records",
    "same": "inspector.store.records",
    "RevertResult": "inspector.store.reverting",
    "read_history": "inspector.store.reverting",
    "revert": "inspector.store.reverting",
    "undoable": "inspector.store.reverting",
}


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


__all__ = [
    "STORE_DIR",
    "ApplyPlan",
    "Journal",
    "JournalEntry",
    "JournalInfo",
    "Region",
    "RevertResult",
    "StoreError",
    "WriteHook",
    "apply_compaction",
    "apply_history",
    "apply_plan",
    "backups_dir",
    "build_records",
    "check_records",
    "is_store_path",
    "js_json",
    "js_timestamp",
    "own_writes",
    "plan_of",
    "preview_state",
    "read_history",
    "revert",
    "same",
    "store_dir",
    "undoable",
]
