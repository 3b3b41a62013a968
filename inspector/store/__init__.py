"""Apply a compaction to a session file and undo it, never losing a byte.

    entry = apply_history(session, turns, new_history, sources, journal=JournalInfo(...))
    entry = apply_compaction(session, turns, compress_result)   # = apply_plan(session, turns, plan_of(...))
    results = revert(path, steps=1, force=False)
    journal = read_history(path); undoable(path)

Backups and the journal live in ``<folder>/.session-inspector/<file name>/``
(see ``store.files`` for why Gemini CLI never lists them as sessions).
"""

from inspector.store.apply import apply_history, js_json, js_timestamp, preview_state
from inspector.store.errors import StoreError
from inspector.store.files import STORE_DIR, WriteHook, backups_dir, is_store_path, own_writes, store_dir
from inspector.store.journal import Journal, JournalEntry, JournalInfo, Region
from inspector.store.plan import ApplyPlan, apply_compaction, apply_plan, plan_of
from inspector.store.records import build_records, check_records, same
from inspector.store.revert import RevertResult, read_history, revert, undoable

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
