"""Every dialog fits an 80x24 (and 100x30) terminal whole (its question, fields, notes, an error and the keys it takes)
and leaves the session's header in view: which file, the context, the split being compacted."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.containers import Vertical
from textual.widget import Widget

from inspector.tui.screens.ask import AskScreen
from inspector.tui.screens.dialogs import ConfirmScreen, FocusScreen
from inspector.tui.screens.export import ExportScreen
from tests.snapshot_app import build_app, copy_sample, session_read, settle

SIZE = (80, 24)
SIZES = [(80, 24), (100, 30)]
HEADER_ROWS = 3  # the session view's header: the file, the context gauge, the split


@pytest.fixture
def session(tmp_path: Path) -> Path:
    return copy_sample(tmp_path, "coding-task.jsonl")


def assert_whole(pilot) -> None:  # type: ignore[no-untyped-def]
    """The dialog box lies inside the screen below the session's header, and every line of it is drawn inside
    the box, unscrolled."""
    screen = pilot.app.screen
    box = screen.query_one(".dialog", Vertical)
    assert screen.region.contains_region(box.region), f"{type(screen).__name__}: {box.region} is off the screen"
    assert box.region.y >= HEADER_ROWS, f"{type(screen).__name__} covers the session's header: {box.region}"
    assert box.max_scroll_y == 0, f"{type(screen).__name__}: {box.max_scroll_y} rows of the box are scrolled away"
    inner = box.content_region
    for child in box.query(Widget):
        if child.display and child.region.height:
            assert inner.contains_region(child.region), f"{child!r} is cut: {child.region} outside {inner}"


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
async def test_the_focus_dialog_fits_with_its_note_and_an_error(session: Path, size: tuple[int, int]) -> None:
    app = build_app(session)
    async with app.run_test(size=size) as pilot:
        await session_read(pilot)
        await pilot.press("f")
        await settle(pilot)
        assert isinstance(app.screen, FocusScreen)
        assert app.screen.query("#focus-offline")  # the offline summariser's note is there
        assert_whole(pilot)
        await pilot.press("tab", "tab", *"abc", "enter")  # a target that is not a number: an error line
        await settle(pilot)
        assert isinstance(app.screen, FocusScreen)
        assert "not a number" in str(app.screen.query_one("#run-error").render())
        assert_whole(pilot)


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
async def test_the_export_dialog_the_apply_question_and_go_to_turn_fit(session: Path, size: tuple[int, int]) -> None:
    app = build_app(session)
    async with app.run_test(size=size) as pilot:
        await session_read(pilot)
        await pilot.press("c")
        await settle(pilot)
        await pilot.press("escape")
        await settle(pilot)
        await pilot.press("x")
        await settle(pilot)
        assert isinstance(app.screen, ExportScreen)
        assert app.screen.query("#export-preview")  # the tick box for the previewed compaction
        assert_whole(pilot)
        await pilot.press("ctrl+u", "enter")  # no file name: an error line
        await settle(pilot)
        assert isinstance(app.screen, ExportScreen)
        assert_whole(pilot)
        await pilot.press("escape")
        await settle(pilot)
        await pilot.press("a")  # the previewed compaction: apply?
        await settle(pilot)
        assert isinstance(app.screen, ConfirmScreen)
        assert_whole(pilot)
        await pilot.press("n")
        await settle(pilot)
        await pilot.press("colon")
        await settle(pilot)
        assert isinstance(app.screen, AskScreen)
        await pilot.press("x", "enter")  # not a turn: an error line
        await settle(pilot)
        assert isinstance(app.screen, AskScreen)
        assert_whole(pilot)


async def test_every_window_over_the_session_shows_its_own_keys(session: Path) -> None:
    """A dialog or window over the session view has a footer of its own on the last row: the session's keys
    ("c Compact", "q Quit") showed there, though they do nothing (or type) while it is open."""
    from textual.widgets import Footer
    from textual.widgets._footer import FooterKey

    from inspector.tui.screens.help import HelpScreen
    from inspector.tui.screens.timeline import TimelineScreen
    from inspector.tui.screens.warnings import WarningsScreen

    with session.open("a", encoding="utf-8") as out:
        out.write("{not json\n")  # one line the reader skips: w lists it
    app = build_app(session)
    async with app.run_test(size=SIZE) as pilot:
        view = await session_read(pilot)
        assert view.loaded is not None and view.loaded.session.warnings
        for key, kind, closes in (("t", TimelineScreen, "escape"), ("w", WarningsScreen, "escape"),
                                  ("f", FocusScreen, "escape"), ("x", ExportScreen, "escape"),
                                  ("colon", AskScreen, "escape"), ("question_mark", HelpScreen, "escape")):
            await pilot.press(key)
            await settle(pilot)
            top = app.screen
            assert isinstance(top, kind)
            footers = [f for f in top.query(Footer) if f.display]
            assert footers, f"{kind.__name__} shows the session's keys under it"
            assert footers[0].region.bottom == SIZE[1]
            shown = {k.description for k in footers[0].query(FooterKey)}
            assert shown and not shown & {"Compact", "Split", "Detail"}, shown
            assert {b.binding.description for b in top.active_bindings.values() if b.binding.show} >= shown - {""}
            await pilot.press(closes)
            await settle(pilot)
            assert app.screen is view


async def test_the_keys_line_says_what_enter_does_on_the_strategy_list(session: Path) -> None:
    """On the strategy list Enter opens the list; the dialog said "Enter: run" there all the same."""
    from textual.widgets import Select, Static

    app = build_app(session)
    async with app.run_test(size=SIZE) as pilot:
        await session_read(pilot)
        await pilot.press("f")
        await settle(pilot)
        dialog = app.screen
        assert isinstance(dialog, FocusScreen)

        def keys_line() -> str:
            return str(dialog.query_one("#dialog-keys", Static).render())

        assert keys_line().startswith("Enter: run")
        await pilot.press("tab")
        await settle(pilot)
        assert isinstance(app.focused, Select)
        assert keys_line().startswith("Enter: open the list")
        await pilot.press("enter")  # it does open the list
        await settle(pilot)
        assert dialog.query_one(Select).expanded
        await pilot.press("escape", "tab")
        await settle(pilot)
        assert app.focused is dialog.query_one("#target-input")
        assert keys_line().startswith("Enter: run")
