"""Compaction from the app: preview tabs, apply (file changes), revert (byte-identical), live updates."""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path

import pytest
from rich.console import Console
from textual.widgets import DataTable, Static, TabbedContent

from inspector.compaction.request import CompactionRequest
from inspector.compaction.strategies import compact_session
from inspector.compaction.summarisers import pick_summariser
from inspector.session import load
from inspector.tui.app import InspectorApp
from inspector.tui.messages import SessionLoaded
from inspector.tui.screens.dialogs import ConfirmScreen
from inspector.tui.screens.snapshot import SnapshotScreen
from inspector.tui.screens.timeline import TimelineScreen
from inspector.tui.session.screen import SessionScreen
from inspector.tui.widgets.facts_table import FactsTable
from inspector.tui.widgets.snapshot_lines import SnapshotLines
from tests.snapshot_app import SAMPLES, screen_after

SIZE = (160, 45)
SAMPLE = SAMPLES / "coding-task.jsonl"


def plain(renderable: object) -> str:
    console = Console(width=200, record=True, color_system=None)
    console.print(renderable)
    return console.export_text()


async def settle(pilot) -> None:  # type: ignore[no-untyped-def]
    """Wait for every worker but the file watcher, and for the messages they posted."""
    await pilot.pause()
    while busy := [w for w in pilot.app.workers if w.group != "watch" and not w.is_finished]:
        await pilot.app.workers.wait_for_complete(busy)
        await pilot.pause()


def pane_text(screen: SnapshotScreen, pane: str) -> str:
    widget = screen.query_one(f"#{pane}")
    if isinstance(widget, SnapshotLines):
        return "\n".join(f"{entry.section} {entry.text}" for entry in widget.entries)
    if isinstance(widget, FactsTable):
        return plain(widget.query_one("#facts-summary", Static).content)
    return plain(widget.body.content)


async def test_compaction_preview_matches_the_core(session_file: Path) -> None:
    expected = await compact_session(load(session_file), CompactionRequest(force=True), pick_summariser("offline"),
                                     threshold=0.5)
    app = InspectorApp(session_file, threshold=0.5, live=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        view = app.screen
        assert isinstance(view, SessionScreen)
        screen = await screen_after(pilot, "c", SnapshotScreen)
        result = screen.preview.result
        assert result.status == expected.status
        assert (result.original_token_count, result.new_token_count) == (
            expected.original_token_count, expected.new_token_count)
        assert result.split_point == expected.split_point
        final = pane_text(screen, "final-pane")
        for name in ("overall_goal", "task_state"):
            assert name in final
        footer = plain(screen.query_one("#preview-footer").content)
        assert f"{expected.original_token_count:,} -> {expected.new_token_count:,}" in footer
        await pilot.press("3")
        assert screen.query_one(TabbedContent).active == "diff"
        assert "draft -> final" in pane_text(screen, "diff-pane")
        await pilot.press("5")
        assert screen.query_one(TabbedContent).active == "facts"
        assert f"fact recall: {expected.facts.recall:.1%}" in pane_text(screen, "facts-pane")
        await pilot.press("escape")
        assert app.screen is view
        assert "preview COMPRESSED" in view.status.get("preview")


async def test_moved_split_and_focus_reach_the_compaction(session_file: Path) -> None:
    app = InspectorApp(session_file, threshold=0.5, live=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        view = app.screen
        await pilot.press("left_square_bracket")
        moved = view.split
        assert moved != view.loaded.analysis.split_point
        await pilot.press("f", *"the tax module", "enter")
        await settle(pilot)
        assert isinstance(app.screen, SnapshotScreen)
        result = app.screen.preview.result
        assert result.split_point == moved
        assert result.instruction == "the tax module"
        assert "focus: the tax module" in plain(app.screen.query_one("#preview-summary").content)


async def test_apply_then_revert_is_byte_identical(session_file: Path) -> None:
    original = session_file.read_bytes()
    app = InspectorApp(session_file, threshold=0.5, live=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        view = app.screen
        turns_before = len(view.loaded.analysis.turns)
        await pilot.press("c")
        await settle(pilot)
        tokens = app.screen.preview.tokens_text()
        await pilot.press("a")
        assert isinstance(app.screen, ConfirmScreen)
        assert tokens in plain(app.screen.body)
        await pilot.press("y")
        await settle(pilot)
        assert app.screen is view
        assert session_file.read_bytes() != original
        assert len(view.loaded.analysis.turns) < turns_before
        applied = [n for n in app._notifications if n.title == "Compaction applied"]
        assert applied and "Backup: " in applied[0].message
        backup = Path(applied[0].message.split("Backup: ", 1)[1].split(". Press", 1)[0])
        assert backup.is_file() and backup.read_bytes() == original

        await pilot.press("t")
        assert isinstance(app.screen, TimelineScreen)
        assert app.screen.query_one("DataTable").row_count == 1
        await pilot.press("escape")

        await pilot.press("u")
        assert isinstance(app.screen, ConfirmScreen)
        await pilot.press("y")
        await settle(pilot)
        assert session_file.read_bytes() == original
        assert len(view.loaded.analysis.turns) == turns_before
        await pilot.press("u")  # nothing left to undo: a warning, the file untouched
        assert not isinstance(app.screen, ConfirmScreen)
        assert session_file.read_bytes() == original


def record_lines(n: int) -> str:
    out = []
    for i in range(n):
        out.append({"id": f"live-u{i}", "timestamp": "2026-11-22T10:00:00Z", "type": "user",
                    "content": [{"text": f"live prompt {i}"}]})
        out.append({"id": f"live-g{i}", "timestamp": "2026-11-22T10:00:01Z", "type": "gemini",
                    "content": f"live answer {i}", "model": "gemini-2.5-pro",
                    "tokens": {"input": 40000 + i, "output": 5, "cached": 0, "total": 40005 + i}})
    return "".join(json.dumps(r) + "\n" for r in out)


async def test_live_append_shows_new_turns_and_marks_preview_stale(session_file: Path) -> None:
    reloaded = asyncio.Event()

    def hook(message: object) -> None:
        if isinstance(message, SessionLoaded) and message.reason == "live":
            reloaded.set()

    original = session_file.read_bytes()
    app = InspectorApp(session_file, threshold=0.5, live=True)
    async with app.run_test(size=SIZE, message_hook=hook) as pilot:
        await settle(pilot)
        view = app.screen
        assert isinstance(view, SessionScreen)
        before = len(view.loaded.analysis.turns)
        await pilot.press("c")
        await settle(pilot)
        await pilot.press("escape")
        assert view.preview is not None and not view.preview.stale
        await asyncio.wait_for(view.watch_ready.wait(), 10)
        with session_file.open("a", encoding="utf-8") as handle:
            handle.write(record_lines(1))
        await asyncio.wait_for(reloaded.wait(), 15)
        await settle(pilot)
        assert len(view.loaded.analysis.turns) == before + 2
        assert view.query_one("TurnTable").row_count == before + 3
        assert view.status.get("live") == "live: 2 new turns"
        assert view.preview.stale
        await pilot.press("a")  # refuses: the preview is stale
        assert not isinstance(app.screen, ConfirmScreen)
        refused = [n.message for n in app._notifications if n.title == "Not applied"]
        assert refused and "stale" in refused[0]
        assert "c in the session view computes it again" in refused[0]  # where c works, not "press c" here
        assert session_file.read_bytes().startswith(original)


KEY = "AIza-test-key-never-shown-0123456789"


async def test_api_failure_is_a_notification_and_never_shows_the_key(
    session_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.gemini_server import GeminiServer, error

    monkeypatch.setenv("GEMINI_API_KEY", KEY)
    with GeminiServer([error(400, "INVALID_ARGUMENT", f"API key {KEY} not valid")]) as server:
        app = InspectorApp(session_file, threshold=0.5, live=False, provider="gemini", base_url=server.url)
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            await pilot.press("c")
            await settle(pilot)
            assert server.requests, "the app called the Gemini API"
            assert isinstance(app.screen, SnapshotScreen)
            assert app.screen.preview.status == "COMPRESSION_FAILED_SUMMARISER_ERROR"
            failed = [n for n in app._notifications if n.title == "Compaction failed"]
            assert len(failed) == 1 and "400" in failed[0].message  # once, not once per handler
            assert not any(n.title.startswith("Failed") for n in app._notifications)
            shown = " ".join(n.message for n in app._notifications) + plain(
                app.screen.query_one("#preview-summary").content)
            assert KEY not in shown
            await pilot.press("a")  # nothing to apply
            assert not isinstance(app.screen, ConfirmScreen)
    assert session_file.read_bytes() == SAMPLE.read_bytes()


async def test_escape_cancels_a_running_compaction(session_file: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from inspector.tui.screens.dialogs import RunningScreen
    from tests.gemini_server import GeminiServer, hang

    monkeypatch.setenv("GEMINI_API_KEY", KEY)
    with GeminiServer([hang()]) as server:
        app = InspectorApp(session_file, threshold=0.5, live=False, provider="gemini", base_url=server.url)
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            view = app.screen
            await pilot.press("c")
            assert isinstance(app.screen, RunningScreen)
            while not server.requests:  # the request is on its way: wait for it, not for a fixed time
                await asyncio.sleep(0.01)
            await pilot.press("escape")
            await settle(pilot)
            assert app.screen is view
            assert view.preview is None
            assert any("cancelled" in n.message for n in app._notifications)
            assert all(w.is_finished for w in app.workers if w.group == "compact")


async def test_live_view_stays_put_unless_at_the_bottom(tmp_path: Path) -> None:
    source = SAMPLES / "long-migration.jsonl"
    if not source.is_file():
        pytest.skip(f"{source} is missing")
    path = tmp_path / "chats" / source.name
    path.parent.mkdir()
    shutil.copyfile(source, path)
    reloads: list[asyncio.Event] = [asyncio.Event(), asyncio.Event()]
    seen: list[object] = []  # the messages themselves: an id alone may be a freed message's, given again

    def hook(message: object) -> None:
        if (isinstance(message, SessionLoaded) and message.reason == "live"
                and not any(message is known for known in seen)):  # (seen again as it bubbles up)
            seen.append(message)
            reloads[len(seen) - 1].set()

    app = InspectorApp(path, threshold=0.5, live=True)
    async with app.run_test(size=SIZE, message_hook=hook) as pilot:
        await settle(pilot)
        view = app.screen
        table = view.query_one("TurnTable")
        await pilot.press("home")
        await asyncio.wait_for(view.watch_ready.wait(), 10)
        with path.open("a", encoding="utf-8") as handle:
            handle.write(record_lines(1))
        await asyncio.wait_for(reloads[0].wait(), 15)
        await settle(pilot)
        assert table.cursor == 0 and table.scroll_y == 0  # the user was at the top: the view stays there

        await pilot.press("end")
        assert table.scroll_y == table.max_scroll_y > 0
        with path.open("a", encoding="utf-8") as handle:
            handle.write(record_lines(2).replace("live-", "more-"))
        await asyncio.wait_for(reloads[1].wait(), 15)
        await settle(pilot)
        assert table.row_count == len(view.loaded.analysis.turns) + 1
        assert table.scroll_y == table.max_scroll_y  # at the bottom: it follows the new turns


async def test_the_app_and_the_command_line_word_the_split_alike(session_file: Path) -> None:
    """The preview's split line and ``compact``'s are one sentence (both sides as turn ranges)."""
    import os
    import subprocess
    import sys

    cli = subprocess.run([sys.executable, "-m", "inspector", "compact", str(session_file), "--force",
                          "--threshold", "0.5", "--provider", "offline"], capture_output=True, text=True,
                         env={**os.environ, "COLUMNS": "200"}, check=True)
    said = next(line for line in cli.stdout.splitlines() if line.startswith("split "))
    app = InspectorApp(session_file, threshold=0.5, live=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = await screen_after(pilot, "c", SnapshotScreen)
        turns = len(screen.preview.source.analysis.turns) if screen.preview.source else 0
        summary = plain(screen.query_one("#preview-summary").content)
    split = screen.preview.result.split_point
    sentence = f"split {split} (reference): summarised turns 0-{split - 1}, kept turns {split}-{turns - 1}"
    assert said.startswith(sentence) and sentence in " ".join(summary.split())


async def test_at_80_columns_the_timeline_names_the_highlighted_apply_in_full(session_file: Path) -> None:
    """The timeline's last columns (who wrote the snapshot, the backup) are off to the side at 80
    columns; the line under the table says them for the highlighted apply, wrapped."""
    app = InspectorApp(session_file, threshold=0.5, live=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        for _ in range(2):
            await pilot.press("c")
            await settle(pilot)
            await pilot.press("a", "y")
            await settle(pilot)
        await pilot.press("t")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, TimelineScreen)
        table = screen.query_one("#timeline", DataTable)
        assert table.row_count == 2 and table.max_scroll_x > 0  # the case: the table is wider than the screen
        newest, first = screen.shown
        row = screen.query_one("#timeline-row", Static)
        said = plain(row.content)
        assert f"#{newest.seq} applied {newest.applied_at}" in said and f"backup {newest.backup}" in said
        assert "by offline digest (no model was called)" in said and row.size.width <= 80
        await pilot.press("down")
        await settle(pilot)
        said = plain(row.content)
        assert f"#{first.seq} applied" in said and f"backup {first.backup}" in said and newest.backup not in said
