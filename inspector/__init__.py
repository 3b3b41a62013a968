"""session-inspector: see, steer and undo Gemini CLI's chat compaction."""

from __future__ import annotations

from pathlib import Path

__version__ = "0.1.0"


def build_info() -> str:
    """"compiled" when the core runs as mypyc extensions with the C string kernel
    (``setup.py``), "pure Python" when it runs without either."""
    import importlib.util

    from inspector import jsjson

    mypyc = not jsjson.__file__ or not jsjson.__file__.endswith(".py")
    kernel = importlib.util.find_spec("inspector._kernel") is not None
    if mypyc and kernel:
        return "compiled"
    return "pure Python" if not mypyc and not kernel else "partly compiled"


def stale_extensions() -> list[str]:
    """Compiled modules whose ``.py`` or ``.c`` changed after they were built (an
    editable install then runs old code until ``pip install -e .`` is run again)."""
    root = Path(__file__).resolve().parent
    stale = []
    for built in sorted(root.rglob("*.so")):
        stem = built.name.split(".", 1)[0]
        for source in (built.with_name(stem + ".py"), built.with_name(stem + ".c")):
            if source.is_file() and built.stat().st_mtime < source.stat().st_mtime:
                stale.append(str(source.relative_to(root.parent)))
    return stale
