"""The first screen's header (issue 40): the model name stays at 80 columns whatever the file's name,
and one line says why the split's estimate and the recorded prompt the gauge shows differ."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from inspector import cli
from inspector.analysis import analyze
from inspector.deciding import estimate_gap
from inspector.session import load
from inspector.tui.widgets.context_header import ContextHeader
from tests.snapshot_app import SAMPLES, build_app, session_read


def header(app: object) -> list[str]:
    return str(app.screen.query_one(ContextHeader).render()).splitlines()  # type: ignore[attr-defined]


async def test_the_model_stays_at_80_columns_beside_a_long_file_name(tmp_path: Path) -> None:
    # long enough that the name and the turns fill the line, short enough to fit it alone
    path = tmp_path / "chats" / "session-2026-11-20T09-14-3fa2c1d0-refactor-the-cart.jsonl"
    path.parent.mkdir()
    shutil.copyfile(SAMPLES / "coding-task.jsonl", path)
    app = build_app(path)
    async with app.run_test(size=(80, 24)) as pilot:
        await session_read(pilot)
        first = header(app)[0]
        assert "gemini-2.5-pro" in first and len(first) <= 78


@pytest.mark.parametrize("size", [(80, 24), (200, 50)])
async def test_one_line_says_why_the_estimate_and_the_recorded_prompt_differ(size: tuple[int, int]) -> None:
    app = build_app(SAMPLES / "long-migration.jsonl")
    async with app.run_test(size=size) as pilot:
        await session_read(pilot)
        lines = header(app)
        assert len(lines) == 4
        assert "525,821" in lines[1]
        gap = lines[3]
        assert "recorded" in gap and "held twice" in gap and len(gap) <= size[0] - 2
        assert ("1,096,074" if size[0] >= 120 else "1.1M") in gap


def test_the_gap_is_measured() -> None:
    session = load(SAMPLES / "long-migration.jsonl")
    result = analyze(session)
    gap = estimate_gap(result, session.turn_index)
    assert gap is not None
    assert (gap.history, gap.recorded) == (1_096_074, 525_821)
    # every tool result of this recording is held twice: half the tool-result tokens
    assert gap.twice == estimate_gap(result, None).twice  # the same from the index as from the turns
    assert 540_000 < gap.twice < 550_000
    assert gap.unsent_turns == 0
    assert "chars, not tokens" in gap.words(2)
    # a session with nothing recorded: the estimate decides, no gap to explain
    checkpoint = load(SAMPLES / "checkpoint-bare-array.json")
    assert estimate_gap(analyze(checkpoint)) is None


def test_analyze_says_what_decides_and_why_the_figures_differ(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["analyze", str(SAMPLES / "long-migration.jsonl")]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "recorded prompt 525,821 >= threshold 524,288" in out
    assert "the split's 1,096,074 (Gemini CLI's estimate of the history) differs from the recorded 525,821" in out
