"""Shared fixtures.

``reference``: one Node process running Gemini CLI's own code for the whole
test session (tests/reference/README.md).  Tests that use it skip, with the
reason, only when node is not installed.
"""

from __future__ import annotations

import json
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.cpu_load import machine_load  # noqa: F401  (a fixture, offered to every test)
from tests.reference.client import RefServer
from tests.reference.install import Missing, ensure, reference_src

# Each worker imports every test module, rewritten by pytest for its asserts, and the project: where
# PYTHONDONTWRITEBYTECODE is set that is done again in every worker of every run (4-5 s of CPU a worker
# here).  The suite keeps them in __pycache__ (ignored by git) whatever the variable says.
sys.dont_write_bytecode = False

REPO = Path(__file__).resolve().parents[1]
SAMPLES = REPO / "sample_sessions"
# the shared recordings sit beside the checkout (/work/shared for /work/main) or, from a worktree, one level up
SHARED = next((p / "shared" for p in (REPO.parent, REPO.parent.parent) if (p / "shared").is_dir()),
              REPO.parent / "shared")
SESSION_SUFFIXES = (".jsonl", ".json")


@pytest.fixture
def session_file(tmp_path: Path) -> Path:
    """A copy of sample_sessions/coding-task.jsonl where Gemini CLI keeps sessions (``<project>/chats/``)."""
    source = SAMPLES / "coding-task.jsonl"
    if not source.is_file():
        pytest.skip(f"{source} is missing")
    target = tmp_path / "proj" / "chats" / source.name
    target.parent.mkdir(parents=True)
    shutil.copyfile(source, target)
    return target


def write_agent_run(path: Path, calls: int = 3, input_tokens: int = 600_000) -> Path:
    """A recording of one prompt and an agent still at work on it, the way Gemini CLI writes one
    (``gemini -p``): each model message calls a tool and holds its result, none answers in plain
    words yet, and the last one reported a prompt of ``input_tokens``.  Gemini CLI can split it
    nowhere but before the prompt: nothing would come before the split."""
    records: list[dict[str, Any]] = [
        {"sessionId": "agent-run", "projectHash": "p" * 64, "startTime": "2026-11-24T09:00:00.000Z",
         "lastUpdated": "2026-11-24T09:00:00.000Z", "kind": "main"},
        {"id": "prompt", "timestamp": "2026-11-24T09:00:00.000Z", "type": "user",
         "content": [{"text": "Rename the settings module and fix every import."}]},
    ]
    for n in range(calls):
        call_id = f"read_file_{n}"
        result = {"functionResponse": {"id": call_id, "name": "read_file",
                                       "response": {"output": f"contents of module {n}\n" * 40}}}
        records.append({
            "id": f"step-{n}", "timestamp": f"2026-11-24T09:00:{n + 1:02d}.000Z", "type": "gemini",
            "content": "", "model": "gemini-2.5-pro",
            "tokens": {"input": input_tokens - (calls - 1 - n) * 1_000, "output": 20, "cached": 0, "thoughts": 0,
                       "tool": 0, "total": input_tokens - (calls - 1 - n) * 1_000 + 20},
            "toolCalls": [{"id": call_id, "name": "read_file", "args": {"file_path": f"src/mod{n}.py"},
                           "result": [result], "status": "success",
                           "timestamp": f"2026-11-24T09:00:{n + 1:02d}.500Z"}],
        })
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def session_files() -> list[Path]:
    """Every session file the tests run on: sample_sessions/ and the shared real ones."""
    from inspector.antigravity import is_transcript_file
    from inspector.compaction.budget import TOOL_OUTPUTS_DIR
    from inspector.store.files import STORE_DIR

    found: list[Path] = []
    for folder in (SAMPLES, SHARED / "gemini-cli-sessions", SHARED / "real-sessions"):
        if folder.is_dir():
            found.extend(
                p for p in sorted(folder.rglob("*")) if p.is_file() and p.suffix in SESSION_SUFFIXES
                # an apply made on a sample (the README's quick start) leaves its journal and outputs beside it
                and not {STORE_DIR, TOOL_OUTPUTS_DIR} & set(p.relative_to(folder).parts[:-1])
                and not is_transcript_file(p)  # Antigravity's (tests/test_antigravity_*.py): no Gemini CLI session
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


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """``-n auto`` (the README's command): two workers per core.  The live tests wait on the watcher and
    on the app's timers part of their time, the differential tests on Node and the CLI tests on their
    processes: a second worker keeps the core busy meanwhile (2 cores, quiet: 4 min 25 s with three
    workers, 4 min 00 s with four)."""
    from tests.cpu_load import cores

    return 2 * cores()


def pytest_sessionstart(session: pytest.Session) -> None:
    """Once per run, before any test (in the main process, not in each pytest-xdist worker): the
    reference package the differential tests need is installed if missing, and one line says so and where."""
    if hasattr(session.config, "workerinput"):
        return
    try:
        found = ensure(announce=True)
    except RuntimeError as exc:  # no network: the differential tests fail alone, saying why
        line = f"reference: {exc}"
    else:
        if isinstance(found, Missing):
            line = f"reference: the differential tests will skip: {found.reason}"
        else:
            line = found.line()
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    if reporter is not None:
        reporter.write_line(line)


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


@pytest.fixture(autouse=True)
def no_user_settings(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """No test reads the machine's ~/.gemini/settings.json or cost switch (masking
    settings and cost depend on them); a test that wants some writes its own."""
    monkeypatch.setenv("GEMINI_CLI_HOME", str(tmp_path_factory.getbasetemp() / "no-user-home"))
    monkeypatch.delenv("SESSION_INSPECTOR_COST", raising=False)
    monkeypatch.delenv("GEMINI_MODEL", raising=False)  # the configured model decides the split
    # nor writes the user's cache (the search index, the prices looked up)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.getbasetemp() / "user-cache"))


@pytest.fixture
def stream_everything(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every file read block by block from its file, in small blocks (a 100 MB recording's reading, made small)."""
    from inspector.session import loader, reader

    monkeypatch.setattr(loader, "STREAM_MIN_BYTES", 0)
    monkeypatch.setattr(reader, "BLOCK_BYTES", 256)
