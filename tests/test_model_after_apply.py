"""After an apply that summarises every turn, the file names no model: ``analyze`` and the app's
figures then use the default window.  The app still names the model the session had (before the
compaction); where that model's window is another (gemma-4: 256,000), it says the figures beside it
are not for that window, so a model is never shown over a window that is not its own."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from inspector import cli
from inspector.tokens import DEFAULT_TOKEN_LIMIT, GEMMA_4_TOKEN_LIMIT
from inspector.tui.app import InspectorApp
from inspector.tui.screens.dialogs import ConfirmScreen
from inspector.tui.widgets.context_header import ContextHeader
from tests.snapshot_app import SAMPLES, settle

MODEL = "gemma-4-31b-it"


async def header_after_apply(path: Path) -> list[str]:
    app = InspectorApp(path, threshold=0.5, live=False, provider="offline")
    async with app.run_test(size=(200, 50)) as pilot:
        await settle(pilot)
        before = str(app.screen.query_one(ContextHeader).render()).splitlines()
        assert f" / {GEMMA_4_TOKEN_LIMIT:,} " in before[1]
        await pilot.press("c")
        await settle(pilot)
        await pilot.press("a")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmScreen)
        await pilot.press("y")
        await settle(pilot)
        return str(app.screen.query_one(ContextHeader).render()).splitlines()


def test_the_earlier_model_is_not_shown_over_another_window(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    path = tmp_path / "chats" / "gemma-run.jsonl"
    path.parent.mkdir()
    path.write_text((SAMPLES / "long-migration.jsonl").read_text(encoding="utf-8").replace("gemini-2.5-pro", MODEL),
                    encoding="utf-8")
    header = asyncio.run(header_after_apply(path))
    assert cli.main(["analyze", "--threshold", "0.5", str(path)]) == 0
    report = capsys.readouterr().out
    assert "model: not recorded" in report and f" / {DEFAULT_TOKEN_LIMIT:,} (" in report  # the file names none
    assert f" / {DEFAULT_TOKEN_LIMIT:,} (" in header[1]
    assert f"{MODEL} (before the compaction" in header[0]
    assert f"{DEFAULT_TOKEN_LIMIT:,}-token window, not its {GEMMA_4_TOKEN_LIMIT:,}" in header[0], header[0]
