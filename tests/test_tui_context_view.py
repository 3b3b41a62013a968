"""The context view (``v``): the breakdown as bars at 80x24 and 200x50; Enter lists a group's turns,
and Enter on a turn puts the table's cursor on it."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import DataTable

from inspector.analysis import analyze
from inspector.breakdown import session_breakdown
from inspector.session import load
from inspector.tui.screens.context_view import ContextViewScreen
from inspector.tui.session.screen import SessionScreen
from tests.snapshot_app import build_app, copy_sample, screen_after, session_read, settle


def cells(table: DataTable[object], row: int) -> list[str]:
    return [str(getattr(cell, "plain", cell)) for cell in table.get_row_at(row)]


@pytest.mark.parametrize("size", [(80, 24), (200, 50)])
async def test_bars_groupings_and_going_to_a_turn(tmp_path: Path, size: tuple[int, int]) -> None:
    path = copy_sample(tmp_path, "long-migration.jsonl")
    session = load(path)
    expected = session_breakdown(session, analyze(session, threshold=0.5))
    app = build_app(path)
    async with app.run_test(size=size) as pilot:
        session_screen = await session_read(pilot)
        view = await screen_after(pilot, "v", ContextViewScreen)
        table = view.query_one("#context-groups", DataTable)
        first = cells(table, 0)
        assert first[0] == "tool results" and first[1] == f"{expected.by_kind[0].tokens:,}"
        assert "█" in first[-1]
        assert table.row_count == len(expected.by_kind)
        # every column of the table fits the screen (the bars are not cut)
        assert sum(c.get_render_width(table) for c in table.columns.values()) <= size[0] - 6
        await pilot.press("right")
        await settle(pilot)
        assert view.dimension.value == "tool"
        assert cells(table, 0)[0] == expected.by_tool[0].name
        await pilot.press("f")
        await settle(pilot)
        assert cells(table, 0)[0] == expected.by_file[0].name
        group = expected.by_file[0]
        await pilot.press("enter")
        await settle(pilot)
        assert table.row_count == len(group.turns)
        await pilot.press("down", "enter")
        await settle(pilot)
        assert isinstance(app.screen, SessionScreen)
        assert session_screen.table.cursor == group.turns[1]


async def test_escape_goes_back_to_the_groups_then_to_the_session(tmp_path: Path) -> None:
    path = copy_sample(tmp_path, "coding-task.jsonl")
    app = build_app(path)
    async with app.run_test(size=(80, 24)) as pilot:
        await session_read(pilot)
        view = await screen_after(pilot, "v", ContextViewScreen)
        await pilot.press("enter")
        await settle(pilot)
        assert view.opened is not None
        await pilot.press("escape")
        await settle(pilot)
        assert view.opened is None and isinstance(app.screen, ContextViewScreen)
        await pilot.press("escape")
        await settle(pilot)
        assert isinstance(app.screen, SessionScreen)
