"""Search across sessions in the app: type words in the browser's search, a hit opens its session at its turn."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import Static

from inspector.search.index import session_turns
from inspector.session import load
from inspector.tui.app import InspectorApp
from inspector.tui.screens.search import SearchScreen
from inspector.tui.session.screen import SessionScreen
from tests.snapshot_app import idle, screen_after
from tests.test_tui_list import SIZE, listed, write_session


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    chats = home / ".gemini" / "tmp"
    write_session(chats / "alpha" / "chats" / "session-a.jsonl",
                  ["first prompt", "second prompt", "where is the zanzibar config?", "thanks"], 1_700_000_000)
    write_session(chats / "beta" / "chats" / "session-b.jsonl", ["nothing to see"], 1_700_000_000)
    monkeypatch.setenv("GEMINI_CLI_HOME", str(home))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    return home


async def test_a_hit_opens_its_session_at_its_turn(home: Path) -> None:
    target = home / ".gemini" / "tmp" / "alpha" / "chats" / "session-a.jsonl"
    expected = [turn for turn, _, text in session_turns(load(target)) if "zanzibar" in text.lower()]
    assert len(expected) == 1 and expected[0] > 0  # an independent reading of the file: the turn to land on
    app = InspectorApp(None, threshold=0.5, live=False)
    async with app.run_test(size=SIZE) as pilot:
        await listed(pilot)
        screen = await screen_after(pilot, "s", SearchScreen)
        assert screen.report is not None and screen.report.files == 2
        await pilot.press(*"ZANZIBAR", "enter")  # any case
        await idle(pilot)
        assert [(hit.path, hit.turn) for hit in screen.hits] == [(target, expected[0])]
        assert "zanzibar" in str(screen.table.get_row_at(0)[3])
        named = str(screen.query_one("#hit-row", Static).content)  # the session in full, under the hits
        assert named.startswith("session-a.jsonl  session-a  first prompt")
        await pilot.press("enter")
        await idle(pilot)
        session = app.screen
        assert isinstance(session, SessionScreen) and session.path == target
        assert session.loaded is not None
        assert session.table.cursor == expected[0]  # the cursor on the hit's turn, not on the split
        assert session.table.cursor != session.split
        await pilot.press("escape")
        assert app.screen is screen  # back to the hits


async def test_no_hit_and_a_too_short_query_say_so(home: Path) -> None:
    app = InspectorApp(None, threshold=0.5, live=False)
    async with app.run_test(size=SIZE) as pilot:
        await listed(pilot)
        screen = await screen_after(pilot, "s", SearchScreen)
        await pilot.press(*"qwertyuiop", "enter")
        await idle(pilot)
        assert screen.hits == [] and "No turn holds" in str(screen.status.render())
        await pilot.press(*("backspace",) * 10, "a", "b", "enter")
        await idle(pilot)
        assert "3 or more characters" in str(screen.status.render())
