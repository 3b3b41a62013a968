"""Build hook: compile the core's hottest modules with mypyc, or install them as plain Python.

Everything else about the package is in ``pyproject.toml``.  A module is in
``COMPILED`` only where ``bench/`` shows it matters to a user (``bench/bench_mypyc.py``
builds the package several ways; ``bench/README.md`` has the figures): they read
each message of a recording (parse checks, conversion to turns, JavaScript
string and JSON lengths), so ``analyze`` on a 107 MB recording, and the app's
table on it, which waits for the same read, take about 3.2 s of CPU with
them against 5.1 s without (load average 9-11).  Left out one at a time
(``--leave-one-out``), each cost more CPU on that file: ``session/figures.py``
+0.47 s, ``session/validate.py`` +0.19 s, ``jsjson.py`` +0.14 s,
``session/jsonl.py`` +0.11 s; ``session/history.py`` is compiled with them
(without it the others do not build).  ``tokens.py``, ``compaction/agentic.py``,
``compaction/budget.py`` and ``analysis.py`` were compiled too until 2026-11-28:
all four together saved 0-0.2 s of ``analyze``'s 3 s of CPU and nothing of a
live append (27-28 ms of CPU with or without them), and the compile took about
twice as long.  Since the agentic split pairs calls with ``compaction/pairs.py``'s
one complete rule and ``analyze --json`` has the context's breakdown, these four
pay again: ``compaction/pairs.py``, ``compaction/agentic.py``,
``session/spread.py`` (each turn's kinds, measured as it is read) and
``breakdown.py``, compiled together, take ``analyze --json`` on that file from
4.73-4.88 s to 4.25-4.29 s wall (4.39-4.45 s to 3.90-3.91 s of user CPU; output
byte-identical), for about the same install time (36-39 s here).  The app's
first screen draws before any of this runs.

Back since 2026-11-28 (issue 38: ``analyze --json`` had become slower than at f077596),
each measured on the bench file, compiled, CPU seconds (in one process, best of 3, the
machine shared): ``compaction/view.py`` (the split's walk over every turn) and
``analysis.py``, ``compaction/budget.py``, ``tokens.py`` together take the analysis
from 0.37 to 0.26 s (view.py most of it: 0.34-0.36 s without it), and ``analysis.py``
writes the rows (the tool-output budget's 0.03-0.06 -> 0.02 s); an earlier leave-one-out
gave ``budget.py`` +0.08 s and ``tokens.py`` +0.07 s of the read (the reader measures with
them); ``pricing/cost.py`` takes the cost from 0.13 to 0.10 s.  ``session/usage_store.py``
(the reader packs and stores every turn's usage through it: 85,000 packed rows and 170,000
appends on the bench file) takes the read from 1.89-1.93 to 1.86 s of CPU (one process, best
of 3, 2026-11-29).  Measured and not kept: ``session/turns.py`` (under 0.01 s);
``compaction/masking.py`` compiled changes the output (mypyc makes an int a float where
its dataclass says ``float``: ``50000`` written as ``50000.0``), so it stays Python.

One small hand-written C module, ``inspector/_kernel.c``, measures a string as
JavaScript does (UTF-16 length, ASCII units, ``JSON.stringify`` length) in one
pass, counts newlines, and packs a column's small values in marshal's format and
makes them again, a piece or a chunk of them in one call (``pack_sized``,
``unpack_sized``, ``sum_sized``: 3.35G -> 3.14G instructions of ``analyze --json``
on a 17,000-turn recording); ``jsjson.py`` and ``session/packed.py`` hold its
Python definitions.  The
same ``.py`` files stay the source of truth, and the package works without
the extensions:

* ``SESSION_INSPECTOR_PURE=1`` at install time skips compiling;
* if mypyc or a C compiler is missing, or compiling fails, the install goes on
  with pure Python and says so (``session-inspector --version`` tells which one
  runs, and from where).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

COMPILED = [
    "inspector/jsjson.py",
    "inspector/session/figures.py",
    "inspector/session/rows.py",  # figures.py's rows made into columns (split from it at 500 lines)
    "inspector/session/history.py",
    "inspector/session/validate.py",
    "inspector/session/jsonl.py",
    "inspector/compaction/pairs.py",
    "inspector/compaction/agentic.py",
    "inspector/session/spread.py",
    "inspector/breakdown.py",
    "inspector/analysis.py",
    "inspector/compaction/budget.py",
    "inspector/tokens.py",
    "inspector/compaction/view.py",
    "inspector/pricing/cost.py",
    "inspector/session/usage_store.py",
]


def _say(message: str) -> None:
    print(f"session-inspector: {message}", file=sys.stderr)


class OptionalBuildExt(build_ext):
    """Build the extensions if possible; on any failure remove what was built and go on."""

    def run(self) -> None:
        try:
            super().run()
        except Exception as exc:  # a missing compiler, a compile error, ...
            self._remove_partial()
            _say(f"compiling failed ({exc}); installing the pure-Python version")

    def _remove_partial(self) -> None:
        # Half a build is worse than none: a module's shim without the shared
        # library would fail to import.  Keep the .py files only.
        for output in self.get_outputs():
            Path(output).unlink(missing_ok=True)
        if self.inplace:
            for ext in self.extensions:
                Path(self.get_ext_fullpath(ext.name)).unlink(missing_ok=True)


KERNEL = Extension("inspector._kernel", ["inspector/_kernel.c"])


def _stale_extensions(here: Path) -> list[Path]:
    """Extensions an earlier build left beside the sources (an editable install builds in place)."""
    found: list[Path] = []
    for source in [*COMPILED, "inspector/_kernel.c"]:
        module = here / source
        found.extend(module.parent.glob(module.stem + ".*.so"))
        found.extend(module.parent.glob(module.stem + ".*.pyd"))
    found.extend(here.glob("inspector_core__mypyc.*"))
    return found


def _pure(here: Path, why: str) -> list:
    """No extensions this time, and none left from an earlier build: a stale one would shadow its
    edited ``.py`` (the tests refuse to run against one)."""
    for stale in _stale_extensions(here):
        stale.unlink(missing_ok=True)
    _say(f"{why}; installing the pure-Python version")
    return []


def _extensions() -> list:
    here = Path(__file__).resolve().parent
    if os.environ.get("SESSION_INSPECTOR_PURE"):
        return _pure(here, "SESSION_INSPECTOR_PURE is set")
    try:
        from mypyc.build import mypycify
    except ImportError:
        return _pure(here, "mypyc is not available")
    old = Path.cwd()
    os.chdir(here)  # mypyc wants paths relative to the project
    try:
        # -O1: measured on the 107 MB bench session, as fast as -O3 (analyze --json 3.9-4.6 s
        # against 4.0-4.9 s) and about 10 s quicker to build, the wait a first install sees.
        return [*mypycify(COMPILED, opt_level="1", group_name="inspector_core"), KERNEL]
    except BaseException as exc:  # mypyc reports type errors with SystemExit
        return _pure(here, f"mypyc could not compile the core ({exc})")
    finally:
        os.chdir(old)


setup(ext_modules=_extensions(), cmdclass={"build_ext": OptionalBuildExt})
