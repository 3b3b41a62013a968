"""Toasts at 80x24 do not pile up over the screen: the same words replace their earlier toast, and
no more are shown than fit in half the screen, the least severe going first; one thing done is told once."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

import pytest
from textual.notifications import Notify
from textual.pilot import Pilot
from textual.widgets._toast import Toast

from inspector.store import files
from inspector.store.files import note_own_write
from inspector.tui.app import InspectorApp
from inspector.tui.messages import FileChanged, SessionLoaded
from inspector.tui.session.screen import SessionScreen
from tests.snapshot_app import copy_sample, settle
from tests.test_tui_live_trust import idle

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


async def test_an_apply_and_an_undo_are_told_once_though_the_watcher_sees_them_before_the_store_notes_them(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, machine_load: str) -> None:
    """Issue 40: one undo gave two notifications, its own and "rewritten on disk; read again": the
    store notes a state as its own only once done, and on a busy machine the watcher reports the
    file's change first.  Here the store waits, before it notes, until the view has followed the
    change it saw (held it, or read it again): the view tells each apply and undo once."""
    path = copy_sample(tmp_path, "coding-task.jsonl")
    notices: list[str] = []
    changed, live_read = threading.Event(), threading.Event()
    views: list[SessionScreen] = []
    app = InspectorApp(path, threshold=0.5, live=True)

    def hook(message: object) -> None:
        if isinstance(message, Notify):
            notices.append(message.notification.title)
        elif isinstance(message, FileChanged) and not message.own and message.kind != "appended":
            changed.set()
        elif isinstance(message, SessionLoaded) and message.reason == "live":
            live_read.set()

    def noted_late(where: Path, digest: str, size: int) -> None:
        assert changed.wait(30), "the watcher never saw the store's write"
        view = views[0]
        for _ in range(3_000):  # until the view followed the change: held it, or read the file again
            if view.follower.held_changes or live_read.wait(0.01):
                break
        changed.clear()
        note_own_write(where, digest, size)

    monkeypatch.setattr(files, "note_own_write", noted_late)
    async with app.run_test(size=(160, 45), message_hook=hook) as pilot:
        await settle(pilot)
        view = app.screen
        assert isinstance(view, SessionScreen)
        views.append(view)
        await asyncio.wait_for(view.follower.watch_ready.wait(), 10)
        await pilot.press("c")
        await settle(pilot)
        notices.clear()
        await pilot.press("a", "y")
        await idle(pilot)
        await pilot.press("u", "y")
        await idle(pilot)
        assert notices == ["Compaction applied", "Reverted"], notices
        assert view.status.get("live") == "live"
