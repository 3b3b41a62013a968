"""session-inspector: see, steer and undo Gemini CLI's chat compaction."""

from __future__ import annotations

from pathlib import Path

__version__ = "0.1.0"


def build_info() -> str:
    """"compiled" when the core runs as mypyc extensions, else "pure Python"."""
    from inspector import jsjson

    return "compiled" if not jsjson.__file__ or not jsjson.__file__.endswith(".py") else "pure Python"


def stale_extensions() -> list[str]:
    """Compiled modules whose ``.py`` changed after they were built (an editable
    install then runs old code until ``pip install -e .`` is run again)."""
    root = Path(__file__).resolve().parent
    stale = []
    for built in sorted(root.rglob("*.so")):
        source = built.with_name(built.name.split(".", 1)[0] + ".py")
        if source.is_file() and built.stat().st_mtime < source.stat().st_mtime:
            stale.append(str(source.relative_to(root.parent)))
    return stale
