"""The keys the footer offers work while a text field has the keys: none of them is typed into the field.

Walked at 80x24 with the keyboard only, on the session list's filter, the search across sessions and
the preview's snapshot search.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from textual.keys import _character_to_key
from textual.widgets import Input
from textual.widgets._footer import FooterKey

from inspector.tui.screens.help import HelpScreen
from inspector.tui.screens.search import SearchScreen
from inspector.tui.screens.snapshot import SnapshotScreen
from tests.snapshot_app import SAMPLES, build_app, settle

SIZE = (80, 24)


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    chats = tmp_path / "chats"
    chats.mkdir()
    for name in ("coding-task.jsonl", "gemini-cli-0.61-three-prompts.jsonl"):
        shutil.copyfile(SAMPLES / name, chats / name)
    return chats


def offered(screen) -> list[FooterKey]:  # type: ignore[no-untyped-def]
    return [key for key in screen.query(FooterKey) if key.display]


async def check_offered_keys(pilot, field: Input) -> None:  # type: ignore[no-untyped-def]
    """Every one-character key the footer shows is pressed: it must act, not be typed; the help key opens help."""
    screen = pilot.app.screen
    assert pilot.app.focused is field
    shown = offered(screen)
    assert shown, "the footer shows no key"
    for key in [k for k in shown if len(k.key_display) == 1 and k.key_display.isprintable()]:
        before = field.value
        await pilot.press(_character_to_key(key.key_display))
        await settle(pilot)
        assert field.value == before, f"the footer offers {key.key_display!r} ({key.description}), which types it"
        if pilot.app.screen is not screen:
            pilot.app.pop_screen()
            await settle(pilot)
        field.focus()
        await settle(pilot)
    helps = [k for k in offered(screen) if k.description == "Help"]
    assert len(helps) == 1
    await pilot.press(_character_to_key(helps[0].key_display) if len(helps[0].key_display) == 1
                      else helps[0].key_display.lower())
    await settle(pilot)
    assert isinstance(pilot.app.screen, HelpScreen), f"{helps[0].key_display} (Help) did not open help"
    await pilot.press("escape")
    await settle(pilot)
    assert pilot.app.screen is screen and pilot.app.focused is field


async def test_the_list_filter_is_offered_only_keys_that_work(folder: Path) -> None:
    app = build_app(folder)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("slash")
        await settle(pilot)
        await pilot.press(*"cod")
        await check_offered_keys(pilot, app.screen.query_one("#filter", Input))


async def test_the_search_across_sessions_is_offered_only_keys_that_work(folder: Path) -> None:
    app = build_app(folder)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("s")
        await settle(pilot)
        assert isinstance(app.screen, SearchScreen)
        await pilot.press(*"auth")
        await check_offered_keys(pilot, app.screen.query_one("#query", Input))


async def test_the_snapshot_search_is_offered_only_keys_that_work(folder: Path) -> None:
    app = build_app(folder / "coding-task.jsonl")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("c")
        await settle(pilot)
        assert isinstance(app.screen, SnapshotScreen)
        await pilot.press("slash")
        await settle(pilot)
        await pilot.press(*"src")
        await check_offered_keys(pilot, app.screen.query_one("#snapshot-search", Input))


async def test_a_snapshot_lines_turns_are_read_whole_with_the_keyboard(folder: Path) -> None:
    """The turns a snapshot line comes from sit in a pane of a few rows at 80x24: Tab reaches it, the keys
    scroll it, Enter goes to the first turn in the session view (it scrolled with the mouse only)."""
    from textual.widgets import OptionList

    from inspector.tui.session.screen import SessionScreen
    from inspector.tui.widgets.snapshot_lines import SnapshotLines

    app = build_app(folder / "coding-task.jsonl")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("c")
        await settle(pilot)
        lines = app.screen.query_one(SnapshotLines)
        pane = lines.query_one("#line-source-pane")
        for _ in range(lines.lines.option_count):  # to the first line whose turns do not fit the pane
            if pane.max_scroll_y > 0:
                break
            await pilot.press("down")
            await settle(pilot)
        entry = lines.selected()
        assert entry is not None and entry.turns and pane.max_scroll_y > 0, "no line's turns overflow the pane"
        assert isinstance(app.focused, OptionList)
        await pilot.press("tab")
        await settle(pilot)
        assert app.focused is pane
        await pilot.press("pagedown")
        await settle(pilot)
        assert pane.scroll_y > 0
        await pilot.press("end")
        await settle(pilot)
        assert pane.scroll_y == pane.max_scroll_y
        await pilot.press("enter")
        await settle(pilot)
        session = app.screen
        assert isinstance(session, SessionScreen)
        assert session.table.cursor == entry.turns[0]


async def test_the_list_offers_esc_to_clear_its_filter_while_there_is_one(folder: Path) -> None:
    from inspector.tui.screens.session_list import SessionListScreen

    app = build_app(folder)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, SessionListScreen)
        rows = screen.table.row_count
        assert "Clear filter" not in [k.description for k in offered(screen)]
        await pilot.press("slash", *"coding", "enter")
        await settle(pilot)
        assert screen.table.row_count < rows
        shown = {k.description: k.key_display for k in offered(screen)}
        assert shown.get("Clear filter") == "esc", shown
        await pilot.press("escape")
        await settle(pilot)
        assert screen.table.row_count == rows
        assert "Clear filter" not in [k.description for k in offered(screen)]



async def test_help_lists_no_text_fields_editing_keys(folder: Path) -> None:
    """The snapshot's search field (the app's own text field) put its 29 editing keys into the preview's help."""
    app = build_app(folder / "coding-task.jsonl")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("c")
        await settle(pilot)
        rows = app.help_rows(app.screen)
        assert any(ident == "preview.search" for *_, ident in rows)
        fields = [description for where, _, description, _, _ in rows if where == "text field"]
        assert not fields, fields


async def test_the_palette_names_each_key_as_it_is_typed(folder: Path) -> None:
    """The palette's help ends "(key ?)", as the footer shows it, not a key's name ("(key question_mark)")."""
    import re

    from inspector.tui.commands import palette_commands

    app = build_app(folder / "coding-task.jsonl")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        keys = {command.name: re.search(r"\(key ([^)]*)\)$", command.help) for command in palette_commands(app.screen)}
        assert keys["Help"] is not None and keys["Help"].group(1) == "?"
        named = {name: found.group(1) for name, found in keys.items() if found and "_" in found.group(1)}
        assert not named, named
