"""Builds the app for snapshot tests and screenshots: fixed threshold, no live watching,
file times pinned so a fresh clone renders the same pixels."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any, TypeVar

from textual.screen import Screen

from inspector.catalog.candidate import Candidate
from inspector.tui.app import InspectorApp
from inspector.tui.screens.session_list import SessionListScreen
from inspector.tui.session.screen import SessionScreen

REPO = Path(__file__).resolve().parents[1]
SAMPLES = REPO / "sample_sessions"
PINNED_MTIME = 1_795_000_000.0  # a fixed moment, shown in the list's "modified" column


class PinnedListScreen(SessionListScreen):
    """The session list with every file's time pinned (checkouts set the real ones)."""

    def find_sessions(self) -> list[Candidate]:
        rows = sorted(super().find_sessions(), key=lambda r: r.path.name)
        # a file without a recorded time (a checkpoint) is listed by its file time: pin it
        return [replace(row, mtime_ns=int((PINNED_MTIME - 3600 * offset) * 1e9)) for offset, row in enumerate(rows)]

    def now(self) -> float:
        return PINNED_MTIME + 5 * 86_400  # "updated" reads the same on every run


class SnapshotApp(InspectorApp):
    """The real app with its environment pinned."""

    def list_screen(self, folder: Path | None) -> SessionListScreen:
        return PinnedListScreen(folder)


def build_app(path: Path | str | None = None) -> SnapshotApp:
    """``path`` relative to the repository (so titles read the same everywhere)."""
    return SnapshotApp(Path(path) if path is not None else None, threshold=0.5, live=False)


def sample(name: str) -> Path:
    """A sample session, as a path relative to the repository when the tests run from it."""
    path = SAMPLES / name
    try:
        return path.relative_to(Path.cwd())
    except ValueError:
        return path


async def settle(pilot) -> None:  # type: ignore[no-untyped-def]
    """Wait until the app is idle (every worker but the file watcher done), notifications cleared."""
    await pilot.pause()
    while busy := [w for w in pilot.app.workers if w.group != "watch" and not w.is_finished]:
        await pilot.app.workers.wait_for_complete(busy)
        await pilot.pause()
    pilot.app.clear_notifications()
    # The footer redraws its keys after the next screen refresh and then
    # recomposes: drain those rounds of the event loop (no time passes).
    for _ in range(3):
        await pilot.pause()


def copy_sample(tmp_path: Path, name: str) -> Path:
    """A sample session copied into ``tmp_path/chats`` (the app may write there); skips when it is missing."""
    import shutil

    import pytest

    source = SAMPLES / name
    if not source.is_file():
        pytest.skip(f"{source} is missing")
    target = tmp_path / "chats" / name
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(source, target)
    return target


S = TypeVar("S", bound=Screen[Any])


async def session_read(pilot) -> SessionScreen:  # type: ignore[no-untyped-def]
    """The session view once its file is read (the read runs in a worker)."""
    for _ in range(1000):
        await settle(pilot)
        screen = pilot.app.screen
        if isinstance(screen, SessionScreen) and screen.loaded is not None:
            return screen
    raise AssertionError("the session was never read")


async def screen_after(pilot, key: str, kind: type[S]) -> S:  # type: ignore[no-untyped-def]
    """Press ``key``, let the app settle, and return the screen it led to (which must be a ``kind``)."""
    await pilot.press(key)
    await settle(pilot)
    screen = pilot.app.screen
    assert isinstance(screen, kind), f"{key} led to {type(screen).__name__}, not {kind.__name__}"
    return screen


async def idle(pilot) -> None:  # type: ignore[no-untyped-def]
    """Wait for every worker and the messages they posted; notifications are kept (unlike ``settle``)."""
    await pilot.pause()
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()
