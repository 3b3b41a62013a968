"""A big session: loading reports progress, only the rows on screen are rendered, Esc cancels."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from inspector.session.loader import STREAM_MIN_BYTES
from inspector.tui.app import InspectorApp
from inspector.tui.loading import Cancelled, read_session
from inspector.tui.messages import LoadProgress, SessionLoaded
from inspector.tui.screens.session_list import SessionListScreen
from inspector.tui.session.screen import SessionScreen
from inspector.tui.widgets.turn_table import TurnTable

SIZE = (160, 45)


@pytest.fixture(scope="module")
def big_session(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A session a little over the size read block by block (and in two processes), with progress."""
    path = tmp_path_factory.mktemp("big") / "chats" / "session-big.jsonl"
    path.parent.mkdir(parents=True)
    filler = "lorem ipsum dolor sit amet " * 40
    with path.open("w", encoding="utf-8") as out:
        meta = {"sessionId": "big", "projectHash": "h" * 64, "startTime": "t", "lastUpdated": "t"}
        out.write(json.dumps(meta) + "\n")
        n = 0
        while out.tell() < STREAM_MIN_BYTES + 200_000:
            n += 1
            out.write(json.dumps({"id": f"u{n}", "timestamp": "t", "type": "user",
                                  "content": [{"text": f"prompt {n} {filler}"}]}) + "\n")
            out.write(json.dumps({"id": f"g{n}", "timestamp": "t", "type": "gemini", "content": f"answer {n}",
                                  "model": "gemini-2.5-pro",
                                  "tokens": {"input": 100 + n, "output": 3, "cached": 0, "total": 103 + n}}) + "\n")
    return path


async def test_loads_with_progress_and_renders_only_visible_rows(big_session: Path) -> None:
    progress: list[LoadProgress] = []
    loaded: list[SessionLoaded] = []

    def hook(message: object) -> None:
        if isinstance(message, LoadProgress):
            progress.append(message)
        elif isinstance(message, SessionLoaded):
            loaded.append(message)

    app = InspectorApp(big_session, threshold=0.5, live=False)
    async with app.run_test(size=SIZE, message_hook=hook) as pilot:
        await pilot.pause()
        await app.workers.wait_for_complete()
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, SessionScreen) and screen.loaded is not None
        reading = [p for p in progress if p.phase == "reading" and p.total]
        # progress messages replace one another in the queue, so not every step arrives
        assert reading and reading[0].total == big_session.stat().st_size
        assert all(0 < p.done <= p.total for p in reading)
        assert {"parsing", "analysing"} <= {p.phase for p in progress}
        assert len({id(m) for m in loaded}) == 1  # the hook sees it at each node it bubbles through
        turns = len(screen.loaded.analysis.turns)
        assert turns > 2000
        table = screen.query_one(TurnTable)
        assert table.virtual_size.height == turns + 1
        await pilot.press("end")
        assert table.cursor == turns - 1
        await pilot.press("right_square_bracket", "equals_sign")
        # only rows that were on screen were ever turned into lines
        assert len(table._lines) <= 4 * table.size.height
        assert table.split == screen.loaded.analysis.split_point


def test_read_session_stops_when_cancelled(big_session: Path) -> None:
    with pytest.raises(Cancelled):
        read_session(big_session, threshold=0.5, cancelled=lambda: True)


async def test_escape_while_loading_goes_to_the_list(big_session: Path) -> None:
    app = InspectorApp(big_session, threshold=0.5, live=False)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("escape")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert isinstance(app.screen, SessionListScreen)
        assert not [n for n in app._notifications if n.severity == "error"]
