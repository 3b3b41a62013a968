"""The app's requests: one default ``CompactionRequest`` built from its command line, and every run's
derived from it (``dataclasses.replace``), so a run asks exactly what ``compact`` would be asked."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from inspector.compaction.request import CompactionRequest
from inspector.tui.app import InspectorApp
from inspector.tui.screens.compare import CompareScreen
from inspector.tui.screens.dialogs import FocusScreen
from inspector.tui.session.screen import SessionScreen
from tests.snapshot_app import copy_sample, screen_after, session_read, settle

SIZE = (160, 45)
NOWHERE = "http://127.0.0.1:9"  # the offline summariser sends nothing: the URL is only carried


async def test_every_run_is_the_default_request_with_what_the_view_chose(tmp_path: Path) -> None:
    path = copy_sample(tmp_path, "coding-task.jsonl")
    app = InspectorApp(path, threshold=0.5, live=False, provider="offline", base_url=NOWHERE)
    assert app.request == CompactionRequest(provider="offline", base_url=NOWHERE, force=True)
    async with app.run_test(size=SIZE) as pilot:
        view = await session_read(pilot)
        assert isinstance(view, SessionScreen) and view.loaded is not None
        model = view.loaded.analysis.model
        assert view.compaction.request(view.split) == replace(app.request, model=model)
        await pilot.press("S")  # staged
        screen = await screen_after(pilot, "C", CompareScreen)
        assert screen.request == replace(app.request, strategy="staged", compare=True, model=model)
        assert "--provider offline" in screen.cli_command() and "--target" not in screen.cli_command()
        await pilot.press("escape")
        await settle(pilot)
        await pilot.press("P")  # the summariser, for the whole app: the default request changes
        assert app.request == CompactionRequest(provider="gemini", base_url=NOWHERE, force=True)
        assert view.compaction.request(view.split, "the parser") == replace(
            app.request, strategy="staged", model=model, instruction="the parser")


async def test_the_focus_dialog_refuses_a_target_for_the_reference_strategy(tmp_path: Path) -> None:
    """A request checks itself: the reference strategy has no target (``compact --target`` without
    ``--strategy staged`` is refused the same way); the dialog says so and stays."""
    path = copy_sample(tmp_path, "coding-task.jsonl")
    app = InspectorApp(path, threshold=0.5, live=False, provider="offline")
    async with app.run_test(size=SIZE) as pilot:
        await session_read(pilot)
        dialog = await screen_after(pilot, "f", FocusScreen)
        assert dialog.request.strategy == "reference"
        await pilot.press(*"the parser", "tab", "tab", *"0.2", "enter")
        await settle(pilot)
        assert app.screen is dialog
        error = str(dialog.query_one("#run-error").render())
        assert "the reference strategy has none" in error
