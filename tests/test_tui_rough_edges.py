"""Rough edges of the app a newcomer hit (issue 40), each reproduced at 80x24 and fixed."""

from __future__ import annotations

from pathlib import Path

from tests.snapshot_app import SAMPLES, build_app, session_read


async def test_help_lists_the_apps_keys_once_each() -> None:
    """No framework keys the app has no use for, one row per key and place, ^q with q."""
    app = build_app(SAMPLES / "coding-task.jsonl")
    async with app.run_test(size=(80, 24)) as pilot:
        await session_read(pilot)
        rows = app.help_rows(app.screen)
        described = [description for _, _, description, _, _ in rows]
        for framework in ("Scroll Left", "Page Left", "Focus Next", "Focus Previous", "Copy selected text"):
            assert framework not in described, framework
        places = [(where, keys) for where, keys, *_ in rows]
        assert len(places) == len(set(places)), places
        assert sum(1 for where, keys in places if where == "screen" and keys == "esc") == 1
        assert [keys for where, keys, description, *_ in rows if description == "Quit"] == ["^q q"]
        assert ("turn detail", "pgup") in places and ("turn table", "pgup") in places  # one each place




async def test_preview_tabs_switch_with_left_and_right_and_say_so() -> None:
    from textual.widgets import Static, TabbedContent

    from inspector.tui.screens.snapshot import SnapshotScreen
    from tests.snapshot_app import screen_after

    app = build_app(SAMPLES / "coding-task.jsonl")
    async with app.run_test(size=(80, 24)) as pilot:
        await session_read(pilot)
        preview = await screen_after(pilot, "c", SnapshotScreen)
        tabs = preview.query_one("#preview-tabs", TabbedContent)
        assert tabs.active == "final"
        await pilot.press("right")
        await pilot.pause()
        assert tabs.active == "draft"
        await pilot.press("left", "left")
        await pilot.pause()
        assert tabs.active == "facts"  # round to the last
        assert "←/→ or 0-5: tabs" in str(preview.query_one("#preview-footer", Static).render())


def test_excerpts_show_line_breaks_as_spaces_not_backslash_n() -> None:
    from inspector.tui.widgets.snapshot_lines import describe_turn

    content = {"role": "model", "parts": [
        {"text": "line one\nline two"},
        {"functionCall": {"name": "write_file", "args": {"file_path": "a.py", "content": "x = 1\ny = 2"}}}]}
    shown = str(describe_turn(3, content))
    assert "\\n" not in shown
    assert "line one line two" in shown and "content: x = 1 y = 2" in shown
    escaped = str(describe_turn(4, {"role": "user", "parts": [
        {"functionResponse": {"name": "r", "response": {"output": "ok \x1b[31mred"}}}]}))
    assert "\x1b" not in escaped and "\\e[31m" in escaped  # other control characters still shown, never sent


async def test_at_80x24_the_timeline_covers_the_session_and_shows_the_tokens_whole(tmp_path: Path) -> None:
    """The timeline at 80x24 showed the session's table around it and cut the "after" figure."""
    from textual.widgets import DataTable, Static

    from inspector.format import before_after
    from inspector.tui.screens.timeline import TimelineScreen
    from tests.snapshot_app import copy_sample, settle

    app = build_app(copy_sample(tmp_path, "coding-task.jsonl"))
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("c")
        await settle(pilot)
        await pilot.press("a", "y")
        await settle(pilot)
        await pilot.press("t")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, TimelineScreen)
        assert screen.styles.background.a == 1  # opaque: nothing of the session shows through
        table = screen.query_one("#timeline", DataTable)
        assert table.region.width == 80
        tokens = before_after(screen.shown[0].info.tokens_before, screen.shown[0].info.tokens_after)
        widths = [column.get_render_width(table) for column in table.columns.values()]
        assert sum(widths[:2]) <= table.size.width  # the tokens column ends on screen
        assert tokens in str(screen.query_one("#timeline-row", Static).render())


async def test_export_defaults_to_the_home_folder_and_typing_after_tab_goes_to_the_path(
        tmp_path: Path, monkeypatch: object) -> None:
    import pytest
    from textual.widgets import Input

    from inspector.tui.screens.export import ExportScreen
    from tests.snapshot_app import copy_sample

    assert isinstance(monkeypatch, pytest.MonkeyPatch)
    home, repository = tmp_path / "home", tmp_path / "repository"
    home.mkdir()
    repository.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.chdir(repository)  # launched in a repository: the export does not go there
    app = build_app(copy_sample(tmp_path, "coding-task.jsonl"))
    async with app.run_test(size=(80, 24)) as pilot:
        await session_read(pilot)
        await pilot.press("x")
        await pilot.pause()
        dialog = app.screen
        assert isinstance(dialog, ExportScreen)
        field = dialog.query_one("#export-path", Input)
        assert Path(field.value).parent == home
        field.value = ""
        await pilot.press("tab")
        await pilot.pause()
        assert not field.has_focus
        await pilot.press(*"out.md")
        await pilot.pause()
        assert field.value == "out.md" and field.has_focus


async def test_at_80x24_a_notification_covers_whole_rows_to_the_right_edge() -> None:
    """A toast hid the table's figures beside rows it left showing, and the rack's scrollbar column
    left the last character of the line under it (a stray ")") at the right edge."""
    from textual.widgets._toast import Toast

    app = build_app(SAMPLES / "coding-task.jsonl")
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        await session_read(pilot)
        app.notify("Nothing to undo: no compaction was applied to this file.", title="Undo")
        for _ in range(3):
            await pilot.pause()
        toast = app.screen.query_one(Toast)
        assert toast.region.x == 0 and toast.region.right == 80  # whole rows, to the last column
        assert toast.region.height <= 3  # its title and the message, no blank rows inside
    wide = build_app(SAMPLES / "coding-task.jsonl")
    async with wide.run_test(size=(200, 50), notifications=True) as pilot:
        await session_read(pilot)
        wide.notify("Nothing to undo.", title="Undo")
        for _ in range(3):
            await pilot.pause()
        toast = wide.screen.query_one(Toast)
        assert toast.region.right == 200 and toast.region.width < 100  # aside on a wide screen


async def test_live_shares_the_status_row_at_80x24(tmp_path: Path) -> None:
    """A whole 80x24 row held only "live": the strategy and the summariser filled the first. On a narrow
    line the summariser's words take their short form, and the three fit one row."""
    import shutil

    from inspector.tui.app import InspectorApp
    from inspector.tui.session.screen import SessionScreen
    from tests.snapshot_app import settle

    path = tmp_path / "chats" / "coding-task.jsonl"
    path.parent.mkdir()
    shutil.copyfile(SAMPLES / "coding-task.jsonl", path)
    app = InspectorApp(path, threshold=0.5, live=True)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        view = app.screen
        assert isinstance(view, SessionScreen)
        assert view.status.get("live") == "live"
        shown = str(view.status.render())
        assert "\n" not in shown and shown.rstrip().endswith("live"), shown
        assert "summariser offline (P)" in shown and "strategy reference (S)" in shown
    app = InspectorApp(path, threshold=0.5, live=True)
    async with app.run_test(size=(200, 50)) as pilot:  # where there is room, the whole words
        await settle(pilot)
        view = app.screen
        assert isinstance(view, SessionScreen)
        assert "nothing leaves this machine" in str(view.status.render())


async def test_the_table_is_fitted_once_at_its_real_width_when_a_session_opens() -> None:
    """On load the table was given its turns while hidden, fitted for 80 columns, then fitted again
    when it got its size: the header changed under the person ("share" became "share vs largest") and
    the view jumped.  Now the body is laid out first: the columns are fitted once, at the real width."""
    from inspector.tui.app import InspectorApp
    from inspector.tui.messages import TableColumns
    from tests.snapshot_app import settle

    headers: list[str] = []

    def heard(message: object) -> None:
        if isinstance(message, TableColumns):
            headers.append(message.header)

    app = InspectorApp(SAMPLES / "long-migration.jsonl", threshold=0.5, live=False)
    async with app.run_test(size=(200, 50), message_hook=heard) as pilot:
        await settle(pilot)
    # Every fit is at the real width ("share vs largest", which 80 columns leave out).  (The newest turns,
    # shown from the file's tail while the rest is read, a file over 1 MiB, may give a narrower kind
    # column than the whole table, and the cost column joins once cost is worked out.)
    assert headers and all("vs largest" in h for h in headers), headers
