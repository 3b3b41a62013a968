"""session-inspector: see, steer and undo Gemini CLI's chat compaction."""

from __future__ import annotations

from pathlib import Path

__version__ = "0.1.0"

# The modules setup.py may compile with mypyc (kept in step with its COMPILED list).
COMPILED_MODULES = (
    "jsjson", "tokens", "session/figures", "session/history", "session/validate", "session/jsonl",
    "compaction/agentic", "compaction/budget", "compaction/split", "analysis", "commands/common",
)


def build_info() -> str:
    """"compiled" when the core runs as mypyc extensions, else "pure Python"."""
    from inspector import jsjson

    return "compiled" if not jsjson.__file__ or not jsjson.__file__.endswith(".py") else "pure Python"


def stale_extensions() -> list[str]:
    """Compiled modules whose ``.py`` changed after they were built (an editable
    install then runs old code until ``pip install -e .`` is run again)."""
    root = Path(__file__).resolve().parent
    stale = []
    for name in COMPILED_MODULES:
        source = root / f"{name}.py"
        for built in source.parent.glob(f"{source.stem}.*.so"):
            if built.stat().st_mtime < source.stat().st_mtime:
                stale.append(f"inspector/{name}.py")
    return stale
