"""The app's apply question says what the snapshot forgets, and asks twice under the recall threshold."""

from __future__ import annotations

import shutil
from pathlib import Path

from inspector.tui.app import InspectorApp
from inspector.tui.screens.dialogs import ConfirmScreen, ForgettingScreen
from tests.snapshot_app import SAMPLES
from tests.test_tui_compaction import SIZE, plain, settle


async def test_under_the_recall_threshold_the_apply_is_asked_twice_and_enter_does_not_answer_the_second(
        tmp_path: Path) -> None:
    path = tmp_path / "gemini-cli-0.61-tool-calls.jsonl"
    shutil.copyfile(SAMPLES / "gemini-cli-0.61-tool-calls.jsonl", path)
    original = path.read_bytes()
    app = InspectorApp(path, threshold=0.5, live=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("c")
        await settle(pilot)
        facts = app.screen.preview.result.facts
        assert facts is not None and facts.recall < 0.8  # the independent check's figure for this preview
        await pilot.press("a")
        assert isinstance(app.screen, ConfirmScreen) and not isinstance(app.screen, ForgettingScreen)
        body = " ".join(plain(app.screen.body).split())
        assert f"Keeps {facts.recall:.0%} of the facts" in body and "; forgets: " in body, body
        await pilot.press("y")
        await settle(pilot)
        assert isinstance(app.screen, ForgettingScreen)  # asked a second time
        assert "under the 80% threshold" in " ".join(plain(app.screen.body).split())
        await pilot.press("enter")  # a confirmation typed ahead does not apply it
        await settle(pilot)
        assert not isinstance(app.screen, ConfirmScreen) and path.read_bytes() == original
        await pilot.press("a", "y")
        await settle(pilot)
        await pilot.press("y")
        await settle(pilot)
        assert not isinstance(app.screen, ConfirmScreen) and path.read_bytes() != original
