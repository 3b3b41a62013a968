"""session-inspector: see, steer and undo Gemini CLI's chat compaction."""

from __future__ import annotations

from dataclasses import dataclass
from importlib.machinery import EXTENSION_SUFFIXES
from pathlib import Path
from typing import Literal

__version__ = "0.1.0"

PACKAGE = Path(__file__).resolve().parent


@dataclass(frozen=True)
class BuildInfo:
    """Which build of the core runs, read from the package folder this process imported (``package``):
    run from a checkout, ``python -c "import inspector"`` imports the checkout's folder, not the one pip
    installed, and the path says so."""

    kind: Literal["compiled", "partly compiled", "pure Python"]
    package: Path
    compiled: tuple[str, ...]  # the modules built as extensions, e.g. ("analysis", "_kernel")

    def __str__(self) -> str:
        return f"{self.kind} core in {self.package}"


def _extension_modules(root: Path) -> tuple[str, ...]:
    """The modules under ``root`` built as extensions (``figures.cpython-311-x86_64-linux-gnu.so``
    is ``session.figures``): Python imports one of these before a ``.py`` of the same name."""
    found = {
        ".".join((*built.relative_to(root).parent.parts, built.name.split(".", 1)[0]))
        for built in root.rglob("*")
        if built.name.endswith(tuple(EXTENSION_SUFFIXES))
    }
    return tuple(sorted(found))


def build_info() -> BuildInfo:
    """"compiled" when the core runs as mypyc extensions with the C string kernel
    (``setup.py``), "pure Python" when it runs without either."""
    compiled = _extension_modules(PACKAGE)
    kernel = "_kernel" in compiled
    mypyc = any(name != "_kernel" for name in compiled)
    kind: Literal["compiled", "partly compiled", "pure Python"] = (
        "compiled" if mypyc and kernel else "pure Python" if not mypyc and not kernel else "partly compiled"
    )
    return BuildInfo(kind, PACKAGE, compiled)


def stale_extensions() -> list[str]:
    """Compiled modules whose ``.py`` or ``.c`` changed after they were built (an
    editable install then runs old code until ``pip install -e .`` is run again)."""
    stale = []
    for built in sorted(PACKAGE.rglob("*.so")):
        stem = built.name.split(".", 1)[0]
        for source in (built.with_name(stem + ".py"), built.with_name(stem + ".c")):
            if source.is_file() and built.stat().st_mtime < source.stat().st_mtime:
                stale.append(str(source.relative_to(PACKAGE.parent)))
    return stale
