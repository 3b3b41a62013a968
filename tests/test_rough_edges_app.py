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


