"""Install the reference package (Gemini CLI's core) into ``<repo>/.cache/reference``.

    python -m tests.reference.install      # prints the dist/src folder, or why not

``reference_src()`` returns the ``dist/src`` folder, installing the package
first when node and npm are present; when they are not, it returns a
``Missing`` carrying the reason a test should give for skipping.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

PACKAGE = "@google/gemini-cli-core"
VERSION = "0.61.0"
REPO = Path(__file__).resolve().parents[2]
CACHE = REPO / ".cache" / "reference"
DIST_SRC = CACHE / "node_modules" / "@google" / "gemini-cli-core" / "dist" / "src"


@dataclass(frozen=True)
class Missing:
    """Why the reference cannot run here (a skip reason)."""

    reason: str


def node_path() -> str | None:
    return shutil.which("node")


def installed_version() -> str | None:
    manifest = DIST_SRC.parent.parent / "package.json"
    if not manifest.is_file():
        return None
    import json

    try:
        return str(json.loads(manifest.read_text(encoding="utf-8")).get("version"))
    except (OSError, ValueError):
        return None


def reference_src(install: bool = True) -> Path | Missing:
    """The reference's ``dist/src`` folder, installing it if needed."""
    if node_path() is None:
        return Missing("node is not installed: the differential tests need Node 20+ to run Gemini CLI's code")
    if installed_version() == VERSION and (DIST_SRC / "utils" / "tokenCalculation.js").is_file():
        return DIST_SRC
    if not install:
        return Missing(f"{PACKAGE}@{VERSION} is not installed in {CACHE}")
    npm = shutil.which("npm")
    if npm is None:
        return Missing("npm is not installed: cannot install the reference package")
    CACHE.mkdir(parents=True, exist_ok=True)
    if not (CACHE / "package.json").exists():
        (CACHE / "package.json").write_text('{"name": "reference", "private": true}\n', encoding="utf-8")
    done = subprocess.run(
        [npm, "install", "--no-audit", "--no-fund", f"{PACKAGE}@{VERSION}"],
        cwd=CACHE,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0 or installed_version() != VERSION:
        tail = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["no output"]
        raise RuntimeError(f"npm install {PACKAGE}@{VERSION} failed: {tail[0]}")
    return DIST_SRC


def main() -> int:
    found = reference_src()
    if isinstance(found, Missing):
        print(f"not installed: {found.reason}", file=sys.stderr)
        return 1
    print(found)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
