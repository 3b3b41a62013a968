"""Rough edges of the app a newcomer hit (issue 40), each reproduced at 80x24 and fixed."""

from __future__ import annotations

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
