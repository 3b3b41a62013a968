"""A compaction reuses what ``analyze`` measured and reads each turn once, and gets the same result.

``run_request`` takes the budget plan, the split and the token figures from
the analysis (``reading.Planned``) and reads the turns through
``reading.HistoryReader`` (in two processes on the command line); the fact
check's extraction may run in a forked child (``quality.background``).
Here each of those is checked against the plain way: ``compress`` on the
contents with nothing given, ``extract`` in this process.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from inspector.analysis import analyze
from inspector.compaction import reading
from inspector.compaction.compress import CompressOptions, compress, contents_of
from inspector.compaction.request import CompactionRequest, compaction_context
from inspector.compaction.strategies import run_request
from inspector.compaction.summarisers.offline import OfflineSummariser
from inspector.progress import SILENT
from inspector.quality import background
from inspector.quality.ground import extract
from inspector.session import SessionError, load
from tests.conftest import session_files

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def long_session(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("long") / "session.jsonl"
    subprocess.run([sys.executable, str(REPO / "bench" / "make_big_session.py"), "--turns", "12000", "--out",
                    str(out)], check=True, capture_output=True)
    return out


def _plain(result: Any) -> dict[str, Any]:
    out: dict[str, Any] = result.to_json()
    out.pop("duration_seconds")
    return out


async def _both(path: Path, **options: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    session = load(path)
    analysis = analyze(session)
    context = compaction_context(session, analysis)
    reused = await run_request(CompactionRequest(force=True, **options), context, analysis.turns,
                               OfflineSummariser())
    plain = await compress(contents_of(analysis.turns), OfflineSummariser(), CompressOptions(
        model=context.model, force=True, threshold=context.threshold,
        recorded_prompt_tokens=context.recorded_prompt_tokens, environment=context.environment,
        temp_dir=context.temp_dir, source_sha256=context.source_sha256, statuses=context.statuses,
        agentic=bool(options.get("agentic")), split=options.get("split")
    ))
    return _plain(reused), _plain(plain)


@pytest.mark.parametrize("path", session_files(), ids=lambda p: p.name)
async def test_the_reused_figures_give_what_compress_computes_itself(path: Path) -> None:
    try:
        reused, plain = await _both(path)
    except SessionError as exc:
        pytest.skip(str(exc))
    assert reused == plain


@pytest.mark.parametrize("options", [{}, {"agentic": True}], ids=["reference", "agentic"])
async def test_on_a_long_recording_with_budget_cuts(long_session: Path, options: dict[str, Any]) -> None:
    reused, plain = await _both(long_session, **options)
    assert reused["truncations"], "the budget should cut something on this session"
    assert reused == plain


def test_reading_in_two_processes_reads_what_one_does(long_session: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    session = load(long_session)
    analysis = analyze(session)
    serial = reading.HistoryReader(session, analysis.turns).read()  # no weights: one process
    monkeypatch.setattr(reading, "fork_allowed", lambda work, minimum: True)
    reader = reading.HistoryReader(session, analysis.turns, analysis.json_chars)
    assert reader._middle() is not None  # it does share the work out
    shared = reader.read()
    assert shared.contents == serial.contents and shared.contents == [t.content for t in analysis.turns]
    assert dict(shared.statuses.by_part) == dict(serial.statuses.by_part) and len(serial.statuses) > 0


def test_the_extraction_in_a_child_finds_what_it_finds_here(long_session: Path) -> None:
    session = load(long_session)
    analysis = analyze(session)
    read = compaction_context(session, analysis).reader.read()
    here = extract(read.contents, read.statuses)
    with background.Extraction(read.contents, read.statuses, parallel=True) as extraction:
        assert extraction.child_pid  # a child was forked
        there = extraction.result(SILENT)
    assert there == here and len(here.facts) > 100


def test_an_extraction_no_longer_wanted_leaves_no_process(long_session: Path) -> None:
    session = load(long_session)
    analysis = analyze(session)
    read = compaction_context(session, analysis).reader.read()
    extraction = background.Extraction(read.contents, read.statuses, parallel=True)
    pid = extraction.child_pid
    assert pid
    extraction.close()
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)  # killed and reaped


def test_a_compaction_cancelled_midway_stops_its_child(long_session: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from inspector.progress import Cancelled, Progress, Reporter

    started: list[int] = []

    class Forked(background.ForkedCall):
        def __init__(self, work: Callable[[], Any]) -> None:
            super().__init__(work)
            started.append(self.pid)

    monkeypatch.setattr(background, "ForkedCall", Forked)
    monkeypatch.setattr(background, "fork_allowed", lambda work, minimum: True)
    heard: list[Progress] = []
    session = load(long_session)
    analysis = analyze(session)
    context = compaction_context(session, analysis)
    reporter = Reporter(on_progress=heard.append,
                        is_cancelled=lambda: any(p.stage == "offline digest" and p.done > 0 for p in heard))
    with pytest.raises(Cancelled):
        asyncio.run(run_request(CompactionRequest(force=True), context, analysis.turns, OfflineSummariser(),
                                reporter))
    assert started
    with pytest.raises(ProcessLookupError):
        os.kill(started[0], 0)
