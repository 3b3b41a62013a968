"""A user with no home folder (HOME unset and no entry in the password file: a container's ``-u 1234``):
every command says what is missing in one line, or does without it; never a traceback."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from inspector import cli
from inspector.catalog.listing import searched_where
from tests.as_user import as_user, needs_root
from tests.snapshot_app import SAMPLES

NAMELESS = 12345  # a user the password file does not know


@pytest.fixture
def shared_copy() -> Iterator[Path]:
    """A sample session in a folder any user may read."""
    needs_root()
    folder = Path(tempfile.mkdtemp(prefix="si-no-home-"))
    folder.chmod(0o755)
    path = folder / "coding-task.jsonl"
    shutil.copyfile(SAMPLES / "coding-task.jsonl", path)
    path.chmod(0o644)
    yield path
    shutil.rmtree(folder)


def homeless(*argv: str) -> tuple[int, str]:
    for name in ("HOME", "XDG_CACHE_HOME", "GEMINI_CLI_HOME"):
        os.environ.pop(name, None)
    return cli.main(list(argv)), searched_where(None)


def test_analyze_prices_without_a_cache_and_search_says_what_to_set(shared_copy: Path) -> None:
    cli.main(["analyze", "--cost", str(shared_copy)])  # everything the child runs, imported here first
    analyzed = as_user(lambda: homeless("analyze", "--cost", str(shared_copy)), uid=NAMELESS, gid=NAMELESS)
    assert analyzed.error is None, analyzed.error
    code, where = analyzed.value
    assert code == 0 and "cost: $" in analyzed.stdout  # priced from the table, nothing kept
    assert where.startswith("~/.gemini/tmp/*/chats (no home folder is known") and "set HOME" in where
    searched = as_user(lambda: homeless("search", "orders"), uid=NAMELESS, gid=NAMELESS)
    assert searched.error is None, searched.error
    assert searched.value[0] == 2 and "Traceback" not in searched.stderr
    assert len(searched.stderr.strip().splitlines()) == 1 and "no home folder is known" in searched.stderr
