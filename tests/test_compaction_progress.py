"""A compaction reports its stages with the turns done, and stops when asked: the core half of a progress bar.

The app shows these reports (``tui.running.reporter_for``) and wires Esc to
``is_cancelled``; here the core is driven directly, on a long generated
history, with the offline summariser.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path

import pytest

from inspector.analysis import analyze
from inspector.compaction.request import CompactionRequest, compaction_context
from inspector.compaction.strategies import run_request
from inspector.compaction.summarisers.offline import OfflineSummariser
from inspector.progress import Cancelled, Progress, Reporter
from inspector.session import load
from inspector.tui.running import progress_text, reporter_for

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def long_session(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("long") / "session.jsonl"
    subprocess.run([sys.executable, str(REPO / "bench" / "make_big_session.py"), "--turns", "6000", "--out", str(out)],
                   check=True, capture_output=True)
    return out


def run(path: Path, reporter: Reporter, strategy: str = "reference") -> object:
    session = load(path)
    analysis = analyze(session)
    context = compaction_context(session, analysis)
    request = CompactionRequest(strategy=strategy, force=True)
    return asyncio.run(run_request(request, context, analysis.turns, OfflineSummariser(), reporter))


@pytest.mark.parametrize("strategy", ["reference", "staged"])
def test_every_stage_is_reported_with_the_turns_done(long_session: Path, strategy: str) -> None:
    heard: list[Progress] = []
    run(long_session, Reporter(on_progress=heard.append), strategy)
    stages = list(dict.fromkeys(p.stage for p in heard))
    assert {"summary draft", "verification", "offline digest", "fact check"} <= set(stages), stages
    assert stages.index("summary draft") < stages.index("verification")
    assert all(0 <= p.done <= p.total for p in heard if p.total)
    digest = [p.done for p in heard if p.stage == "offline digest"]
    assert digest == sorted(digest) and len(set(digest)) > 2  # it advances through the turns, not just start/end
    reading = [p.done for p in heard if p.stage == "reading turns"]
    assert reading[0] == 0 and reading[-1] == reading[0] + max(p.total for p in heard if p.stage == "reading turns")
    if strategy == "staged":  # the cheap stages before the summary say what they are doing too
        assert "staged: duplicates" in stages and stages.index("staged: duplicates") < stages.index("summary draft")


def test_a_cancelled_reporter_stops_the_compaction_midway(long_session: Path) -> None:
    heard: list[Progress] = []

    def stop_after_digest_began() -> bool:
        return any(p.stage == "offline digest" and p.done > 0 for p in heard)

    with pytest.raises(Cancelled):
        run(long_session, Reporter(on_progress=heard.append, is_cancelled=stop_after_digest_began))
    assert not any(p.stage in ("verification", "fact check") for p in heard)


def test_the_app_shows_each_stage_and_every_further_percent() -> None:
    shown: list[str] = []
    reports: list[Progress | None] = []

    def show(text: str, progress: Progress | None) -> None:
        shown.append(text)
        reports.append(progress)

    reporter = reporter_for(show, lambda: False)
    for done in range(0, 10_001, 10):
        reporter.report("offline digest", done, 10_000)
    reporter.report("fact check", 0, 0)
    assert 90 <= len(shown) <= 102  # about one per percent, not one per report
    assert shown[-2] == "offline digest: 10,000 of 10,000 turns (100%)" and shown[-1] == "fact check"
    last = reports[-2]  # the report itself goes along, so the app's bar can follow it
    assert last is not None and (last.stage, last.done, last.total) == ("offline digest", 10_000, 10_000)
    assert progress_text(Progress("fact check", 512, 2048)) == "fact check: 512 of 2,048 turns (25%)"
