"""Enter on a snapshot line or a fact goes to its turn in the session view, from wherever the preview was
opened; Esc then goes back to the preview, on the tab it was left on."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from textual.widgets import TabbedContent

from inspector.tui.screens.compare import CompareScreen
from inspector.tui.screens.session_list import SessionListScreen
from inspector.tui.screens.snapshot import SnapshotScreen
from inspector.tui.session.screen import SessionScreen
from inspector.tui.widgets.facts_table import FactsTable
from inspector.tui.widgets.snapshot_lines import SnapshotLines
from tests.snapshot_app import SAMPLES, build_app, copy_sample, session_read, settle

SIZE = (80, 24)


@pytest.fixture
def session(tmp_path: Path) -> Path:
    return copy_sample(tmp_path, "coding-task.jsonl")


async def test_a_line_of_a_preview_opened_from_the_comparison_goes_to_its_turn(session: Path) -> None:
    app = build_app(session)
    async with app.run_test(size=SIZE) as pilot:
        view = await session_read(pilot)
        await pilot.press("C")
        await settle(pilot)
        assert isinstance(app.screen, CompareScreen)
        await pilot.press("enter")  # the selected strategy's preview
        await settle(pilot)
        preview = app.screen
        assert isinstance(preview, SnapshotScreen)
        entry = preview.query_one(SnapshotLines).selected()
        assert entry is not None and entry.turns
        await pilot.press("enter")  # "Enter: go to the first in the session"
        await settle(pilot)
        assert app.screen is view, f"Enter led to {type(app.screen).__name__}, not the session view"
        assert view.table.cursor == entry.turns[0]


async def test_esc_goes_back_to_the_preview_a_fact_led_from(session: Path) -> None:
    app = build_app(session)
    async with app.run_test(size=SIZE) as pilot:
        view = await session_read(pilot)
        await pilot.press("c")
        await settle(pilot)
        await pilot.press("5")  # Lost facts
        await settle(pilot)
        preview = app.screen
        assert isinstance(preview, SnapshotScreen)
        facts = preview.query_one(FactsTable)
        await pilot.press("down")
        await settle(pilot)
        table = facts.query_one("#facts-rows")
        turn = facts.row_turns[table.cursor_row]  # type: ignore[attr-defined]
        assert turn is not None
        await pilot.press("enter")
        await settle(pilot)
        assert app.screen is view and view.table.cursor == turn
        await pilot.press("escape")  # back where the fact was
        await settle(pilot)
        again = app.screen
        assert isinstance(again, SnapshotScreen) and again.preview is view.preview
        assert again.query_one("#preview-tabs", TabbedContent).active == "facts"
        await pilot.press("escape")
        await settle(pilot)
        assert app.screen is view
        await pilot.press("escape")  # nothing led here now: on to the session list
        await settle(pilot)
        assert isinstance(app.screen, SessionListScreen)


async def test_the_turn_shown_in_place_of_the_table_offers_esc_back_to_it(session: Path) -> None:
    from textual.widgets._footer import FooterKey

    def offered(screen: SessionScreen) -> dict[str, str]:
        return {key.description: key.key_display for key in screen.query(FooterKey) if key.display}

    app = build_app(session)
    async with app.run_test(size=SIZE) as pilot:
        view = await session_read(pilot)
        assert "Table" not in offered(view)  # Esc leaves the session here: not offered as "Table"
        await pilot.press("d")
        await settle(pilot)
        assert view.detail.display and not view.query_one("#turns").display  # the turn in the table's place
        assert offered(view).get("Table") == "esc"
        await pilot.press("escape")
        await settle(pilot)
        assert view.query_one("#turns").display and app.focused is view.table
        assert "Table" not in offered(view)


async def test_a_preview_summary_too_long_for_80x24_is_read_with_the_keyboard(tmp_path: Path) -> None:
    """A focus, its note and 111 cut outputs make the preview's figures longer than their 40% of 24 rows: the
    note was cut mid-sentence and scrolled with the mouse only; Shift+Tab reaches it, End shows the rest."""
    from textual.widget import Widget

    target = tmp_path / "chats" / "long-migration.jsonl"
    target.parent.mkdir()
    shutil.copyfile(SAMPLES / "long-migration.jsonl", target)
    app = build_app(target)
    async with app.run_test(size=SIZE) as pilot:
        await session_read(pilot)
        await pilot.press("f", *"payments", "enter")
        await settle(pilot)
        preview = app.screen
        assert isinstance(preview, SnapshotScreen)
        box = preview.query_one("#preview-summary").parent
        assert isinstance(box, Widget) and box.max_scroll_y > 0  # it does not fit: the case at hand
        for _ in range(4):
            if app.focused is box:
                break
            await pilot.press("shift+tab")
            await settle(pilot)
        assert app.focused is box, "Shift+Tab never reaches the preview's figures"
        await pilot.press("end")
        await settle(pilot)
        assert box.scroll_y == box.max_scroll_y
