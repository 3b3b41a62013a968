"""The session view at any terminal size from 80x24 up: nothing cut off, nothing overlapping,
every part reachable; and the split follows Gemini CLI's own until the user moves it."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from textual.geometry import Region
from textual.widget import Widget

from inspector.analysis import analyze
from inspector.deciding import estimate_gap
from inspector.format import plural
from inspector.session import load
from inspector.tui.app import InspectorApp
from inspector.tui.messages import SessionLoaded
from inspector.tui.session.screen import SessionScreen
from inspector.tui.widgets.turn_detail import TurnDetail
from inspector.tui.widgets.turn_table import TurnTable, layout
from tests.snapshot_app import SAMPLES, screen_after, settle

SAMPLE = SAMPLES / "coding-task.jsonl"
SIZES = [(80, 24), (100, 30), (120, 40), (200, 50)]


def visible_parts(screen: SessionScreen) -> list[Widget]:
    names = ["#context", "#turns", "#detail", "#status", "Footer"]
    return [w for w in (screen.query_one(n) for n in names) if w.display and w.region.area]


def table_text(table: TurnTable) -> list[str]:
    return [table.render_line(y).text for y in range(table.size.height)]


@pytest.mark.parametrize("size", SIZES, ids=[f"{w}x{h}" for w, h in SIZES])
async def test_every_size_fits_without_cutting_or_overlapping(size: tuple[int, int]) -> None:
    app = InspectorApp(SAMPLE, threshold=0.5, live=False)
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, SessionScreen)
        whole = Region(0, 0, *size)
        parts = visible_parts(screen)
        for part in parts:
            assert whole.contains_region(part.region), f"{part} at {part.region} leaves the {size} screen"
        for i, one in enumerate(parts):
            for other in parts[i + 1:]:
                assert not one.region.overlaps(other.region), f"{one} overlaps {other}"
        table = screen.query_one(TurnTable)
        # Every column shown fits: no horizontal scrolling, no row wider than the table.
        assert table.virtual_size.width <= table.scrollable_content_region.width
        assert table.max_scroll_x == 0
        header = str(screen.query_one("#turns-header").render())
        assert len(header.rstrip()) <= table.scrollable_content_region.width
        for line in table_text(table):
            assert len(line.rstrip()) <= table.scrollable_content_region.width
        # Every turn row shows its number and its estimate in full (never cut).
        analysis = screen.loaded.analysis
        for line in table_text(table):
            if line.startswith("──") or not line.strip():
                continue
            index = int(line[1:].split()[0].replace(",", ""))
            assert f"{analysis.turn_tokens(index):,}" in line.split()
        # The cursor (at the split on open) is on screen, and so is its row.
        row = table.row_of(table.cursor) - int(table.scroll_y)
        assert 0 <= row < table.scrollable_content_region.height
        # Help and quit are always offered in the footer.
        footer = " ".join(str(key.render()) for key in screen.query("FooterKey"))
        assert "Help" in footer and "Quit" in footer


async def test_small_terminal_swaps_table_and_detail() -> None:
    app = InspectorApp(SAMPLE, threshold=0.5, live=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, SessionScreen)
        table, detail = screen.query_one(TurnTable), screen.query_one(TurnDetail)
        assert table.region.area and not detail.region.area  # too small for both
        await pilot.press("home", "down", "down")
        await pilot.press("d")
        await pilot.pause()
        assert detail.region.area and not table.region.area
        assert detail.region.width == 80  # the whole width: the turn is never cut at the side
        shown = [strip.text for strip in detail.body.render_lines(detail.body.region.reset_offset)]
        assert shown[0].startswith("turn 2 ")
        await pilot.press("escape")  # back to the table, not out of the session
        await pilot.pause()
        assert app.screen is screen and table.region.area and not detail.region.area
        assert table.has_focus and table.cursor == 2


async def test_wide_terminal_shows_table_and_detail_side_by_side() -> None:
    app = InspectorApp(SAMPLE, threshold=0.5, live=False)
    async with app.run_test(size=(200, 50)) as pilot:
        await settle(pilot)
        table = app.screen.query_one("#turns")
        detail = app.screen.query_one(TurnDetail)
        assert table.region.y == detail.region.y and detail.region.x >= table.region.right
        assert detail.region.width >= 80


def test_columns_drop_least_needed_first() -> None:
    wide = [c.key for c, _ in layout(200, 100)]
    narrow = [c.key for c, _ in layout(60, 100)]
    assert wide == ["mark", "index", "role", "kind", "mask", "tokens", "usage", "cost", "share", "bar"]
    assert "bar" not in narrow and "usage" not in narrow and "cost" not in narrow
    assert "cost" not in [c.key for c, _ in layout(200, 100, frozenset({"cost"}))]  # cost off: no column
    assert {"index", "kind", "tokens"} <= set(narrow)
    for width in range(40, 201):
        columns = layout(width, 170_000)
        assert sum(w for _, w in columns) + len(columns) - 1 <= max(width, 40), width
        assert dict((c.key, w) for c, w in columns)["index"] >= len("169,999")


# -- the split follows Gemini CLI's own unless the user moved it -----------------------------

def records(prompts: list[str]) -> str:
    lines = [{"sessionId": "c0ffee00-0000-4000-8000-000000000001", "projectHash": "ab" * 32,
              "startTime": "2026-11-20T09:00:00.000Z", "lastUpdated": "2026-11-20T09:00:00.000Z", "kind": "main"}]
    for i, text in enumerate(prompts):
        lines.append({"id": f"u-{text[:8]}-{i}", "timestamp": "2026-11-20T09:00:01.000Z", "type": "user",
                      "content": [{"text": text}]})
        lines.append({"id": f"g-{text[:8]}-{i}", "timestamp": "2026-11-20T09:00:02.000Z", "type": "gemini",
                      "content": "answer " + "y" * 400, "model": "gemini-2.5-pro",
                      "tokens": {"input": 1000 + i, "output": 100, "cached": 0, "total": 1100 + i}})
    return "".join(json.dumps(r) + "\n" for r in lines)


def reference_split(path: Path) -> int:
    return analyze(load(path), threshold=0.5).split_point


async def test_live_append_keeps_following_gemini_clis_split(tmp_path: Path) -> None:
    path = tmp_path / "chats" / "session-follow.jsonl"
    path.parent.mkdir()
    path.write_text(records([f"prompt {i} " + "x" * 600 for i in range(8)]), encoding="utf-8")
    first = reference_split(path)
    reloaded = asyncio.Event()

    def hook(message: object) -> None:
        if isinstance(message, SessionLoaded) and message.reason == "live":
            reloaded.set()

    app = InspectorApp(path, threshold=0.5, live=True)
    async with app.run_test(size=(120, 40), message_hook=hook) as pilot:
        await settle(pilot)
        view = app.screen
        assert isinstance(view, SessionScreen) and view.split == first
        await asyncio.wait_for(view.watch_ready.wait(), 10)
        with path.open("a", encoding="utf-8") as handle:
            handle.write(records([f"later {i} " + "z" * 3000 for i in range(6)]).split("\n", 1)[1])
        await asyncio.wait_for(reloaded.wait(), 15)
        await settle(pilot)
        moved = reference_split(path)
        assert moved != first  # the append moved Gemini CLI's split point...
        assert view.split == moved  # ...and the view followed it
        assert "(chosen" not in view.query_one(TurnTable).render_line(
            view.query_one(TurnTable).row_of(moved) - 1 - int(view.query_one(TurnTable).scroll_y)).text


async def test_a_split_the_user_moved_stays_after_a_reload(tmp_path: Path) -> None:
    path = tmp_path / "chats" / "session-moved.jsonl"
    path.parent.mkdir()
    path.write_text(records([f"prompt {i} " + "x" * 600 for i in range(8)]), encoding="utf-8")
    app = InspectorApp(path, threshold=0.5, live=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        view = app.screen
        assert isinstance(view, SessionScreen)
        await pilot.press("left_square_bracket")
        chosen = view.split
        assert chosen != view.loaded.analysis.split_point and view.split_chosen
        with path.open("a", encoding="utf-8") as handle:
            handle.write(records([f"later {i} " + "z" * 3000 for i in range(6)]).split("\n", 1)[1])
        await pilot.press("r")
        await settle(pilot)
        assert view.split == chosen != view.loaded.analysis.split_point
        await pilot.press("equals_sign")  # back to Gemini CLI's own: it follows again
        assert not view.split_chosen and view.split == view.loaded.analysis.split_point


async def test_on_open_the_table_shows_the_turn_the_cursor_and_detail_are_on(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GEMINI_MODEL", "auto-gemini-2.5")  # splits the turns as recorded: mid-history
    source = SAMPLES / "long-migration.jsonl"
    if not source.is_file():
        pytest.skip(f"{source} is missing")
    app = InspectorApp(source, threshold=0.5, live=False)
    async with app.run_test(size=(160, 45)) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, SessionScreen)
        table = screen.query_one(TurnTable)
        split = screen.loaded.analysis.compress_split_point
        assert split > table.scrollable_content_region.height  # far below the first screenful
        assert table.cursor == split
        row = table.row_of(split) - int(table.scroll_y)
        height = table.scrollable_content_region.height
        assert height // 4 <= row <= height * 3 // 4  # in the middle, with turns before and after it in sight
        shown = [strip.text for strip in screen.detail.body.render_lines(screen.detail.body.region.reset_offset)]
        assert shown[0].startswith(f"turn {split:,} ")


async def test_compare_fits_80_columns() -> None:
    from textual.widgets import DataTable

    from inspector.tui.screens.compare import CompareScreen

    app = InspectorApp(SAMPLE, threshold=0.5, live=False, provider="offline")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        screen = await screen_after(pilot, "C", CompareScreen)
        table = screen.query_one(DataTable)
        assert table.row_count == 2
        assert table.virtual_size.width <= table.scrollable_content_region.width  # no column out of sight
        lines = [strip.text for strip in table.render_lines(table.region.reset_offset)]
        assert "COMPRESSED" in "\n".join(lines)


async def test_compare_keeps_each_token_figure_on_one_line_at_80_columns(tmp_path: Path) -> None:
    """Narrow columns wrap the long cells; a figure split over two lines ("1,096," then "349") would
    read as two numbers."""
    from textual.widgets import DataTable

    from inspector.tui.screens.compare import CompareScreen

    app = InspectorApp(SAMPLES / "long-migration.jsonl", threshold=0.5, live=False, provider="offline")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        screen = await screen_after(pilot, "C", CompareScreen)
        table = screen.query_one(DataTable)
        assert table.row_count == 2 and "saved" not in table.columns  # the narrow layout
        for name in ("reference", "staged"):
            for key in ("before", "after"):
                figure = table.get_cell(name, key).plain.strip()
                room = table.columns[key].get_render_width(table) - 2 * table.cell_padding
                assert figure[0].isdigit() and room >= len(figure), (name, key, figure, room)


async def test_why_a_preview_cannot_be_applied_is_shown_whole_at_80_columns() -> None:
    """``a`` is disabled on a failed or empty compaction; the line above the keys says why, whole."""
    from inspector.tui.screens.snapshot import SnapshotScreen

    app = InspectorApp(SAMPLE, threshold=0.5, live=False, provider="offline")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press(*["left_square_bracket"] * 40)  # to the start: nothing to summarise (36 turns)
        await settle(pilot)
        preview = await screen_after(pilot, "c", SnapshotScreen)
        reason = preview.preview.refusal()
        assert reason is not None
        footer = preview.query_one("#preview-footer")
        text = preview.footer_text()
        lines = text.wrap(app.console, footer.content_size.width)
        assert len(lines) > 1 and footer.content_size.height >= len(lines)  # every line of it on screen
        shown = " ".join(strip.text.strip() for strip in footer.render_lines(footer.region.reset_offset))
        assert "nothing to apply" in shown or "stale" in shown, shown



async def test_apply_and_undo_keep_following_gemini_clis_split(tmp_path: Path) -> None:
    from tests.snapshot_app import copy_sample

    path = copy_sample(tmp_path, SAMPLE.name)
    first = reference_split(path)
    app = InspectorApp(path, threshold=0.5, live=False, provider="offline")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        view = app.screen
        assert isinstance(view, SessionScreen) and view.split == first
        await pilot.press("c")
        await settle(pilot)
        await pilot.press("a", "y")
        await settle(pilot)
        applied = reference_split(path)
        assert applied != first  # the compaction moved Gemini CLI's split point...
        assert view.split == applied and not view.split_chosen  # ...and the view followed it
        await pilot.press("u", "y")
        await settle(pilot)
        assert reference_split(path) == first
        assert view.split == first and not view.split_chosen
        table = view.query_one(TurnTable)
        divider = table.divider_row
        assert divider is not None
        assert "(reference)" in table.render_line(divider - int(table.scroll_y)).text


@pytest.mark.parametrize("size", SIZES, ids=[f"{w}x{h}" for w, h in SIZES])
@pytest.mark.parametrize("name", ["coding-task.jsonl", "long-migration.jsonl", "legacy-pomodoro.json"])
async def test_the_header_is_three_lines_that_agree_with_analyze(size: tuple[int, int], name: str) -> None:
    from inspector.tui.widgets.context_header import ContextHeader

    path = SAMPLES / name
    analysis = analyze(load(path), threshold=0.5)
    expected = analysis.context
    app = InspectorApp(path, threshold=0.5, live=False)
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        header = app.screen.query_one(ContextHeader)
        lines = str(header.render()).splitlines()
        # three lines, and a fourth saying why the estimate and the recorded prompt differ, when they do
        count = 3 + (estimate_gap(analysis) is not None)
        assert len(lines) == count, lines
        assert header.region.height == count, "no line wraps"
        text = "\n".join(lines)
        # the gauge's figure is the one that decides, and the line says which one it is
        assert f"{expected.deciding_tokens:,} / {expected.token_limit:,} ({expected.share * 100:.1f}%)" in text
        assert ("recorded" if expected.recorded_prompt_tokens is not None else "estimated") in text
        assert ("would compress" in text) == analysis.would_compress


async def test_at_80x24_kinds_are_whole_and_the_header_stays_three_lines_at_every_split() -> None:
    """The kind column keeps "thought+text+tool call" whole (the bar goes first), and the split line
    shortens itself for every split a person can step to, agentic ones included: never wrapped,
    turns and tokens always named, so no count reads as a fraction."""
    from inspector.tui.widgets.context_header import ContextHeader

    for name in ("coding-task.jsonl", "long-migration.jsonl"):
        app = InspectorApp(SAMPLES / name, threshold=0.5, live=False)
        async with app.run_test(size=(80, 24)) as pilot:
            await settle(pilot)
            view = app.screen
            assert isinstance(view, SessionScreen) and view.loaded is not None
            table = view.query_one(TurnTable)
            kinds = set(view.loaded.analysis.kinds)
            width = table.scrollable_content_region.width
            for index, kind in enumerate(view.loaded.analysis.kinds):
                assert f" {kind} " in table._row(index, width).text  # the row as drawn, never cut
            assert "bar" not in [c.key for c, _ in table.columns] or max(map(len, kinds)) <= 14
            header = view.query_one(ContextHeader)
            for split in sorted(set(view.loaded.analysis.candidates) | view.loaded.agentic_set):
                view.set_split(split)
                await pilot.pause()
                lines = str(header.render()).splitlines()
                count = 3 + (estimate_gap(view.loaded.analysis) is not None)  # (why the figures differ)
                assert len(lines) == count and header.region.height == count, lines
                third = lines[2]
                assert all(len(line) <= 78 for line in lines), lines
                figures = view.loaded.analysis.split_figures(split)
                assert f"keep {plural(int(figures['kept_turns']), 'turn')}, " in third, third  # "keep 1 turn"
                assert " / " not in third


async def test_the_header_and_the_preview_name_a_split_alike() -> None:
    """An agentic split is "agentic" in the header and in the preview of its compaction alike."""
    from inspector.tui.screens.snapshot import SnapshotScreen
    from inspector.tui.widgets.context_header import ContextHeader

    app = InspectorApp(SAMPLE, threshold=0.5, live=False, provider="offline")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        view = app.screen
        assert isinstance(view, SessionScreen) and view.loaded is not None
        await pilot.press(*["right_curly_bracket"] * 40)  # the last agentic split
        await settle(pilot)
        split = view.split
        assert split in view.loaded.agentic_set and view.loaded.split_kind(split) == "agentic"
        assert f"split {split:,} (agentic" in str(view.query_one(ContextHeader).render())
        preview = await screen_after(pilot, "c", SnapshotScreen)
        assert f"split {split:,} (agentic)" in str(preview.query_one("#preview-summary").render())
