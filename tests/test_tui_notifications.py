"""Toasts at 80x24 do not pile up over the screen: the same words replace their earlier toast, and
no more are shown than fit in half the screen, the least severe going first."""

from __future__ import annotations

from pathlib import Path

from textual.pilot import Pilot
from textual.widgets._toast import Toast

from inspector.tui.app import InspectorApp
from inspector.tui.session.screen import SessionScreen
from tests.snapshot_app import copy_sample, settle

SIZE = (80, 24)


async def shown(pilot: Pilot[None]) -> list[str]:
    """The toasts on the screen, oldest first, once the app has caught up."""
    await pilot.pause()
    await pilot.app.animator.wait_until_complete()
    await pilot.pause()
    toasts = sorted(pilot.app.screen.query(Toast), key=lambda toast: toast.region.y)
    return [toast._notification.message for toast in toasts]


async def test_the_same_words_replace_their_toast_and_a_few_are_shown_at_most(tmp_path: Path) -> None:
    path = copy_sample(tmp_path, "coding-task.jsonl")
    app = InspectorApp(path, threshold=0.5, live=False)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, SessionScreen)
        room = app.toasts_shown
        assert 1 <= room < 3  # 24 rows: three toasts of six rows each would cover most of it

        await pilot.press("y", "y", "y", "y")  # the turn at the cursor copied four times: one toast
        first = await shown(pilot)
        assert len(first) == 1 and first[0].startswith("Turn ") and "copied" in first[0]

        app.notify("the summariser failed", title="Failed: compacting", severity="error")
        for _ in range(4):  # copies of four other turns, each saying so
            await pilot.press("down", "y")
        toasts = await shown(pilot)
        assert len(toasts) == room
        assert "the summariser failed" in toasts  # an error outlasts newer notices of less weight
        assert toasts[-1] != first[0] and toasts[-1].startswith("Turn ")  # the newest is shown
        rows = sum(toast.outer_size.height for toast in app.screen.query(Toast))
        assert rows <= SIZE[1] // 2 + 2, rows  # about half the screen at most
