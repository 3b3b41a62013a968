"""The snapshot screen as a person uses it: a line shows its turns, Enter goes there; search; a lost fact's turn."""

from __future__ import annotations

from pathlib import Path

from rich.text import Text
from textual.widgets import DataTable, Input, OptionList, Static

from inspector.tui.app import InspectorApp
from inspector.tui.screens.snapshot import SnapshotScreen
from inspector.tui.session.screen import SessionScreen
from inspector.tui.widgets.snapshot_lines import SnapshotLines
from tests.test_tui_compaction import plain, settle

SIZE = (160, 45)


async def open_preview(pilot) -> SnapshotScreen:  # type: ignore[no-untyped-def]
    await settle(pilot)
    await pilot.press("c")
    await settle(pilot)
    screen = pilot.app.screen
    assert isinstance(screen, SnapshotScreen)
    return screen


async def test_a_line_shows_its_turns_and_enter_goes_there(session_file: Path) -> None:
    app = InspectorApp(session_file, threshold=0.5, live=False)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_preview(pilot)
        lines = screen.query_one(SnapshotLines)
        target = next(i for i, n in enumerate(lines.shown) if n >= 0 and lines.entries[n].text.startswith("`pytest"))
        entry = lines.entries[lines.shown[target]]
        lines.lines.focus()
        lines.lines.highlighted = target
        await pilot.pause()
        source = plain(screen.query_one("#line-source", Static).content)
        assert f"From turns {entry.turns[0]:,}" in source and f"turn {entry.turns[0]:,} · model" in source
        assert "calls run_shell_command" in source
        await pilot.press("enter")
        await settle(pilot)
        view = app.screen
        assert isinstance(view, SessionScreen)
        assert view.table.cursor == entry.turns[0]
        assert f"turn {entry.turns[0]}" in plain(view.detail.body.content).lower()


async def test_search_keeps_the_matching_lines(session_file: Path) -> None:
    app = InspectorApp(session_file, threshold=0.5, live=False)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_preview(pilot)
        lines = screen.query_one(SnapshotLines)
        everything = lines.matches()
        lines.lines.focus()
        await pilot.press("slash", *"orders.py")
        assert screen.query_one("#snapshot-search", Input).has_focus
        kept = [lines.entries[n].text for n in lines.shown if n >= 0]
        assert kept and all("orders.py" in text.lower() for text in kept) and len(kept) < everything
        assert f"of {len(lines.entries):,} match" in plain(screen.query_one("#line-source", Static).content)
        await pilot.press("escape")  # clears the search, stays on the screen
        assert app.screen is screen and lines.matches() == everything
        await pilot.press("escape")  # now back to the session
        assert isinstance(app.screen, SessionScreen)


async def test_a_fact_goes_to_its_turn(session_file: Path) -> None:
    app = InspectorApp(session_file, threshold=0.5, live=False)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_preview(pilot)
        await pilot.press("5")
        table = screen.query_one("#facts-rows", DataTable)
        table.focus()
        facts = screen.query_one("#facts-pane")
        turn = facts.row_turns[2]  # type: ignore[attr-defined]
        assert "false claims: 0" in plain(screen.query_one("#facts-summary", Static).content)
        table.move_cursor(row=2)
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, SessionScreen) and app.screen.table.cursor == turn


async def test_a_focus_the_offline_summariser_cannot_honour_says_so(session_file: Path) -> None:
    app = InspectorApp(session_file, threshold=0.5, live=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("f", *"write it as a poem", "enter")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, SnapshotScreen)
        summary = plain(screen.query_one("#preview-summary", Static).content)
        assert "cannot honour this focus" in summary
        assert "offline digest (no model was called)" in summary
        assert screen.query_one("#snapshot-lines", OptionList).option_count > 0


async def test_at_80_columns_a_fact_is_wrapped_whole_not_cut_at_the_side(session_file: Path) -> None:
    app = InspectorApp(session_file, threshold=0.5, live=False)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_preview(pilot)
        await pilot.press("5")
        await settle(pilot)
        table = screen.query_one("#facts-rows", DataTable)

        def heights() -> tuple[int, list[int], list[int]]:
            fact = table.ordered_columns[-1]
            width = fact.get_render_width(table) - 2 * table.cell_padding
            wanted = [len(Text(str(table.get_row_at(k)[-1])).wrap(app.console, width)) for k in range(table.row_count)]
            return width, wanted, [row.height for row in table.ordered_rows]

        assert table.max_scroll_x == 0  # nothing off to the side
        width, wanted, shown = heights()
        assert table.row_count > 0 and max(wanted) > 1  # some fact is longer than the column at this width
        assert shown == wanted  # every row as tall as its fact wrapped
        await pilot.resize_terminal(160, 45)
        await settle(pilot)
        wider, wanted, shown = heights()
        assert wider > width and shown == wanted
        assert table.max_scroll_x == 0


async def test_at_80x24_the_preview_opens_on_its_lines_and_keeps_room_for_them(session_file: Path) -> None:
    """The keys go to the open tab's list, not to the tab strip or the hidden search box; the summary
    and a line's turns never squeeze the list below a few rows; a tab this preview lacks is said."""
    app = InspectorApp(session_file, threshold=0.5, live=False)
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        screen = await open_preview(pilot)
        await settle(pilot)
        lines = screen.query_one("#snapshot-lines", OptionList)
        assert lines.has_focus  # ↓ and / work at once
        await pilot.press("down", "down", "down", "down", "down", "down")
        await settle(pilot)
        summary = screen.query_one("#preview-summary", Static)
        assert summary.outer_size.height <= 24 * 40 // 100
        assert lines.size.height >= 4
        await pilot.press("slash", *"path")
        await settle(pilot)
        assert lines.size.height >= 4
        await pilot.press("escape")
        await settle(pilot)
        await pilot.press("5")
        await settle(pilot)
        assert screen.query_one("#facts-rows", DataTable).has_focus  # the new tab's rows take the keys
        await pilot.press("0")  # a reference preview has no stages tab
        await settle(pilot)
        assert any("no stages tab" in n.message for n in app._notifications)
