"""Shared fixtures.

``reference``: one Node process running Gemini CLI's own code for the whole
test session (tests/reference/README.md).  Tests that use it skip, with the
reason, only when node is not installed.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.reference.client import RefServer
from tests.reference.install import Missing, reference_src

REPO = Path(__file__).resolve().parents[1]
SAMPLES = REPO / "sample_sessions"
# the shared recordings sit beside the checkout (/work/shared for /work/main) or, from a worktree, one level up
SHARED = next((p / "shared" for p in (REPO.parent, REPO.parent.parent) if (p / "shared").is_dir()),
              REPO.parent / "shared")
SESSION_SUFFIXES = (".jsonl", ".json")


def session_files() -> list[Path]:
    """Every session file the tests run on: sample_sessions/ and the shared real ones."""
    found: list[Path] = []
    for folder in (SAMPLES, SHARED / "gemini-cli-sessions", SHARED / "real-sessions"):
        if folder.is_dir():
            found.extend(
                p for p in sorted(folder.rglob("*")) if p.is_file() and p.suffix in SESSION_SUFFIXES
            )
    return found


def pytest_configure(config: pytest.Config) -> None:
    import inspector

    stale = inspector.stale_extensions()
    if stale:
        raise pytest.UsageError(
            f"the compiled core is older than {', '.join(stale)}; "
            "run `.venv/bin/pip install -e '.[dev]'` again (or install with SESSION_INSPECTOR_PURE=1)"
        )


@pytest.fixture(scope="session")
def reference() -> Iterator[RefServer]:
    """A running reference server (skips only when node is absent)."""
    found = reference_src()
    if isinstance(found, Missing):
        pytest.skip(found.reason)
    server = RefServer.start(found)
    try:
        yield server
    finally:
        server.close()
