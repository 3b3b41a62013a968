"""Install the reference package (Gemini CLI's core) into ``<repo>/.cache/reference``.

    python -m tests.reference.install      # installs it if missing; prints where it is, or why not

``reference_src()`` returns the ``dist/src`` folder, installing the package
first when node and npm are present; when they are not, it returns a
``Missing`` carrying the reason a test should give for skipping.  An install
holds a file lock (``.cache/reference.lock``), so two processes (pytest-xdist
workers, two test runs) never install it at once: the second waits and finds
it installed.  ``ensure()`` does the same and also says what it did, in one
line (the test run prints it at its start).
"""

from __future__ import annotations

import fcntl
import json
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

PACKAGE = "@google/gemini-cli-core"
VERSION = "0.61.0"
SIZE = "377 MB"  # what npm installs for it, dependencies included
REPO = Path(__file__).resolve().parents[2]
CACHE = REPO / ".cache" / "reference"
DIST_SRC = CACHE / "node_modules" / "@google" / "gemini-cli-core" / "dist" / "src"


@dataclass(frozen=True)
class Missing:
    """Why the reference cannot run here (a skip reason)."""

    reason: str


@dataclass(frozen=True)
class Found:
    """The reference installed in ``cache``, and how long this process spent installing it (None: it was there)."""

    cache: Path
    installed_seconds: float | None = None

    @property
    def dist_src(self) -> Path:
        return dist_src(self.cache)

    def line(self) -> str:
        """What a test run says of it, once."""
        where = f"{PACKAGE}@{VERSION} (Gemini CLI's code, for the differential tests) in {self.cache}"
        if self.installed_seconds is not None:
            return f"reference: installed {where} from npm ({SIZE}) in {self.installed_seconds:.0f} s"
        return f"reference: {where}"


def dist_src(cache: Path = CACHE) -> Path:
    return cache / "node_modules" / "@google" / "gemini-cli-core" / "dist" / "src"


def node_path() -> str | None:
    return shutil.which("node")


def installed_version(cache: Path = CACHE) -> str | None:
    manifest = dist_src(cache).parent.parent / "package.json"
    if not manifest.is_file():
        return None
    try:
        return str(json.loads(manifest.read_text(encoding="utf-8")).get("version"))
    except (OSError, ValueError):
        return None


def _installed(cache: Path) -> bool:
    return installed_version(cache) == VERSION and (dist_src(cache) / "utils" / "tokenCalculation.js").is_file()


def ensure(install: bool = True, announce: bool = False, cache: Path = CACHE) -> Found | Missing:
    """The reference in ``cache``, installed first if needed, under a lock beside it (``reference.lock``)
    so that concurrent processes install it once; ``announce`` says so on stderr before npm starts."""
    if node_path() is None:
        return Missing("node is not installed: the differential tests need Node 20+ to run Gemini CLI's code")
    if _installed(cache):  # no lock needed to read a finished install (a shared one may be read-only)
        return Found(cache)
    if not install:
        return Missing(f"{PACKAGE}@{VERSION} is not installed in {cache}")
    if shutil.which("npm") is None:
        return Missing("npm is not installed: cannot install the reference package")
    seconds = npm_install(PACKAGE, VERSION, cache, lambda: _installed(cache),
                          f"{SIZE}, once" if announce else None)
    return Found(cache, seconds)


def npm_install(package: str, version: str, cache: Path, installed: Callable[[], bool],
                announce: str | None = None) -> float | None:
    """``npm install package@version`` into ``cache`` unless ``installed()`` already, under a lock beside
    it (``<cache>.lock``) so that concurrent processes install it once.  Returns the seconds this process
    spent installing (None: it was there).  ``announce``: said on stderr before npm starts (its size)."""
    npm = shutil.which("npm")
    assert npm is not None, "checked by the caller, which says why it skips"
    cache.mkdir(parents=True, exist_ok=True)
    with cache.with_name(cache.name + ".lock").open("a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes (or the process dies)
        if installed():  # another process installed it while this one waited
            return None
        if announce is not None:
            print(f"reference: installing {package}@{version} from npm ({announce}) into {cache} ...",
                  file=sys.stderr, flush=True)
        started = time.monotonic()
        if not (cache / "package.json").exists():
            (cache / "package.json").write_text(json.dumps({"name": cache.name, "private": True}) + "\n",
                                                encoding="utf-8")
        done = subprocess.run([npm, "install", "--no-audit", "--no-fund", f"{package}@{version}"], cwd=cache,
                              capture_output=True, text=True, check=False)
        if done.returncode != 0 or not installed():
            tail = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["no output"]
            raise RuntimeError(f"npm install {package}@{version} failed: {tail[0]}")
        return time.monotonic() - started


def reference_src(install: bool = True) -> Path | Missing:
    """The reference's ``dist/src`` folder, installing it if needed."""
    found = ensure(install)
    return found if isinstance(found, Missing) else found.dist_src


def main() -> int:
    found = ensure(announce=True)
    if isinstance(found, Missing):
        print(f"not installed: {found.reason}", file=sys.stderr)
        return 1
    print(found.line(), file=sys.stderr)
    print(found.dist_src)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
