"""An open session costs nothing while nothing happens (issue 14.9): no widget redraws itself
on a timer once the view is shown (a hidden indeterminate progress bar did, 15 times a second)."""

from __future__ import annotations

from pathlib import Path

from textual.screen import Screen
from textual.widget import Widget

from inspector.tui.app import InspectorApp
from inspector.tui.screens.compare import CompareScreen
from inspector.tui.session.screen import SessionScreen
from tests.snapshot_app import SAMPLES, screen_after, settle


def redrawing(screen: Screen[object]) -> list[Widget]:
    """The widgets of ``screen`` that refresh themselves on a timer."""
    return [widget for widget in screen.walk_children(Widget) if widget.auto_refresh]


async def test_nothing_redraws_itself_once_shown(tmp_path: Path) -> None:
    app = InspectorApp(SAMPLES / "coding-task.jsonl", threshold=0.5, live=False, provider="offline")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        view = app.screen
        assert isinstance(view, SessionScreen) and view.loaded is not None
        assert redrawing(view) == []
        compare = await screen_after(pilot, "C", CompareScreen)
        assert compare.comparison is not None and redrawing(compare) == []
        await pilot.press("escape")
        await settle(pilot)
        assert redrawing(view) == []
