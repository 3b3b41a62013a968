"""Why a compaction's "before" is not the history's total is said on every face that shows it: the
app's preview, apply confirmation and comparison, and ``compact`` (reference, staged, ``--compare``),
in the same words (``ContextFigures.before_note``); the staged stages' sum line too."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from inspector import cli
from inspector.analysis import analyze
from inspector.compaction.stage_words import stages_sum
from inspector.session import load
from inspector.tui.app import InspectorApp
from inspector.tui.screens.snapshot import SnapshotScreen
from tests.snapshot_app import copy_sample, settle
from tests.test_tui_compaction import plain


def one_line(text: str) -> str:
    return " ".join(text.split())


async def app_preview(path: Path, keys: tuple[str, ...]) -> tuple[str, str, str]:
    """(the preview's summary, its stages pane, the note the preview itself gives)."""
    app = InspectorApp(path, threshold=0.5, live=False, provider="offline")
    async with app.run_test(size=(200, 50)) as pilot:
        await settle(pilot)
        for key in keys:
            await pilot.press(key)
            await settle(pilot)
        screen = app.screen
        assert isinstance(screen, SnapshotScreen)
        stages = screen.query("#stages-pane")
        pane = one_line(plain(stages.first().body.content)) if stages else ""  # type: ignore[attr-defined]
        return one_line(plain(screen.query_one("#preview-summary").content)), pane, screen.preview.before_note()


@pytest.mark.parametrize("strategy", ["reference", "staged"])
def test_before_is_explained_alike(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                   capsys: pytest.CaptureFixture[str], strategy: str) -> None:
    monkeypatch.setenv("COLUMNS", "250")
    path = copy_sample(tmp_path, "coding-task.jsonl")
    context = analyze(load(path), threshold=0.5).context
    note = context.before_note(context.estimated_tokens)
    assert note.startswith(f"before = the table's {context.history_tokens:,} + the environment turn ")
    summary, stages, shown = asyncio.run(app_preview(path, ("c",) if strategy == "reference" else ("S", "c")))
    assert shown == note and note in summary

    assert cli.main(["compact", "--force", "--provider", "offline", "--strategy", strategy, str(path)]) == 0
    report = one_line(capsys.readouterr().out)
    assert note in report
    if strategy == "staged":
        assert stages
        from inspector.compaction.request import CompactionRequest, compaction_context  # the same run's stages
        from inspector.compaction.strategies import run_request
        from inspector.compaction.summarisers import pick_summariser

        session = load(path)
        analysis = analyze(session, threshold=0.5)
        request = CompactionRequest(strategy="staged", force=True, provider="offline")
        result = asyncio.run(run_request(request, compaction_context(session, analysis), analysis.turns,
                                         pick_summariser("offline")))
        line = stages_sum(result.stages or [])
        head = line.split(" (")[0]
        assert line in report and head in stages


def test_the_comparison_explains_before_alike(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("COLUMNS", "250")
    path = copy_sample(tmp_path, "coding-task.jsonl")
    context = analyze(load(path), threshold=0.5).context
    assert cli.main(["compact", "--compare", "--force", "--provider", "offline", str(path)]) == 0
    assert context.before_note(context.estimated_tokens) in one_line(capsys.readouterr().out)
