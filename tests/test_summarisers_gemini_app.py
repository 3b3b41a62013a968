"""The Gemini summariser in the app, as a user with a key meets it: P picks it, c runs it against the
loopback server through the real google-genai client, Esc stops it."""

from __future__ import annotations

import asyncio
import shutil
import threading
from pathlib import Path

import pytest
from textual.widgets import Static

from inspector.compaction.summarisers.gemini import GeminiSummariser
from inspector.tui.app import InspectorApp
from inspector.tui.screens.dialogs import RunningScreen
from tests.gemini_server import GeminiServer, error, hang, reply
from tests.snapshot_app import idle

KEY = "AIzaMoreApp-0123456789abcdefXYZ"
SAMPLE = Path(__file__).resolve().parents[1] / "sample_sessions" / "coding-task.jsonl"
SNAP = "<state_snapshot><overall_goal>fix parse</overall_goal></state_snapshot>"


@pytest.fixture
def session(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for name in ("GOOGLE_API_KEY", "GOOGLE_GENAI_USE_VERTEXAI", "GOOGLE_GENAI_USE_ENTERPRISE", "GOOGLE_CLOUD_PROJECT"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("GEMINI_API_KEY", KEY)
    chats = tmp_path / "chats"
    chats.mkdir()
    return Path(shutil.copyfile(SAMPLE, chats / SAMPLE.name))


def screen_text(app: InspectorApp) -> str:
    return str(app.screen._compositor.render_full_update().render_segments(app.console))


def untouched(session: Path, before: bytes) -> None:
    assert session.read_bytes() == before
    assert [p.name for p in session.parent.parent.rglob("*") if p.is_file()] == [session.name]


async def test_a_refused_key_is_said_in_the_app_and_nothing_is_written(session: Path) -> None:
    before = session.read_bytes()
    with GeminiServer([error(403, "PERMISSION_DENIED", f"API key {KEY} is not allowed")]) as server:
        app = InspectorApp(session, threshold=0.5, live=False, provider="offline", base_url=server.url)
        async with app.run_test(size=(120, 40)) as pilot:
            await idle(pilot)
            await pilot.press("P")  # offline -> gemini
            await idle(pilot)
            await pilot.press("c")
            await idle(pilot)
            shown = [screen_text(app), *(f"{n.title}: {n.message}" for n in app._notifications)]
    assert len(server.bodies()) == 1
    failed = [text for text in shown if text.startswith("Compaction failed")]
    assert len(failed) == 1, shown
    assert "HTTP 403" in failed[0] and "check the key in GEMINI_API_KEY" in failed[0]
    assert all(KEY not in text for text in shown)
    untouched(session, before)


async def test_a_retry_shows_in_the_running_dialog(session: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    release = threading.Event()
    waits: list[float] = []

    async def held(seconds: float) -> None:  # the retry's wait lasts until the test has looked
        waits.append(seconds)
        while not release.is_set():
            await asyncio.sleep(0.01)

    monkeypatch.setitem(GeminiSummariser.__init__.__kwdefaults__, "sleep", held)
    before = session.read_bytes()
    script = [error(429, "RESOURCE_EXHAUSTED", "quota"), reply(SNAP), reply(SNAP)]
    with GeminiServer(script) as server:
        app = InspectorApp(session, threshold=0.5, live=False, provider="gemini", base_url=server.url)
        async with app.run_test(size=(120, 40)) as pilot:
            await idle(pilot)
            await pilot.press("c")
            while not waits:
                await pilot.pause()
            await pilot.pause()
            assert isinstance(app.screen, RunningScreen)
            text = str(app.screen.query_one("#running-step", Static).render())
            release.set()
            await idle(pilot)
    assert "Gemini answered HTTP 429 RESOURCE_EXHAUSTED; trying again in 1 s (attempt 2 of 4)" in text
    assert len(server.bodies()) == 3
    assert session.read_bytes() == before  # c previews; only a writes


async def test_esc_while_gemini_thinks_stops_it(session: Path) -> None:
    before = session.read_bytes()
    with GeminiServer([hang()]) as server:
        app = InspectorApp(session, threshold=0.5, live=False, provider="gemini", base_url=server.url)
        async with app.run_test(size=(120, 40)) as pilot:
            await idle(pilot)
            await pilot.press("c")
            while not server.requests:  # the request reached the server
                await pilot.pause()
            assert isinstance(app.screen, RunningScreen)
            await pilot.press("escape")
            await idle(pilot)
            assert not isinstance(app.screen, RunningScreen)
            shown = [screen_text(app), *(n.message for n in app._notifications)]
            assert "Compaction cancelled." in shown
            assert app.screen.preview is None  # type: ignore[attr-defined]
    assert len(server.requests) == 1
    assert all(KEY not in text and "Traceback" not in text for text in shown)
    untouched(session, before)
