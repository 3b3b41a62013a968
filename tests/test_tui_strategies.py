"""The app's strategies: staged from the dialog and by key, the compare screen against
``strategies.compare``, an agentic split compacted, a staged apply reverted byte for byte.

Every expected figure is computed by the core with the options ``compact`` uses
(``session_defaults`` + the threshold + ``--force``), never written down.
"""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import DataTable, Select, TabbedContent

from inspector.analysis import analyze
from inspector.compaction.request import CompactionContext, CompactionRequest, compaction_context
from inspector.compaction.strategies import compare, run_request
from inspector.compaction.summarisers import pick_summariser
from inspector.session import load
from inspector.tui.app import InspectorApp
from inspector.tui.screens.compare import CompareScreen
from inspector.tui.screens.dialogs import ConfirmScreen, FocusScreen
from inspector.tui.screens.snapshot import SnapshotScreen
from inspector.tui.session.screen import SessionScreen
from tests.snapshot_app import SAMPLES, screen_after
from tests.test_tui_compaction import plain, settle

SIZE = (160, 45)


def copy_sample(tmp_path: Path, name: str) -> Path:
    source = SAMPLES / name
    if not source.is_file():
        pytest.skip(f"{source} is missing")
    target = tmp_path / "proj" / "chats" / name
    target.parent.mkdir(parents=True)
    shutil.copyfile(source, target)
    return target


def cli_context(path: Path) -> tuple[list[Any], CompactionContext]:
    """The turns and the context ``compact --threshold 0.5`` would use."""
    session = load(path)
    analysis = analyze(session, threshold=0.5)
    return analysis.turns, compaction_context(session, analysis)


def stage_rows(result: Any) -> list[tuple[str, bool, int, int, str]]:
    return [(s.name, s.applied, s.tokens_before, s.tokens_after, s.detail) for s in result.stages]


async def test_staged_from_the_dialog_shows_its_stages(tmp_path: Path) -> None:
    path = copy_sample(tmp_path, "coding-task.jsonl")
    turns, context = cli_context(path)
    request = CompactionRequest(strategy="staged", target=0.02, instruction="the parser", force=True)
    expected = await run_request(request, context, turns, pick_summariser("offline"))
    assert [s.name for s in expected.stages if s.applied] == ["duplicates", "summarise"]
    app = InspectorApp(path, threshold=0.5, live=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        view = app.screen
        assert "strategy reference" in view.status.get("strategy")
        await pilot.press("f", *"the parser")
        dialog = app.screen
        assert isinstance(dialog, FocusScreen)
        await pilot.press("tab", "enter", "down", "enter")  # the strategy list: pick staged
        assert dialog.query_one(Select).value == "staged"
        await pilot.press("tab", *"0.02", "enter")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, SnapshotScreen)
        result = screen.preview.result
        assert result.strategy == "staged" and result.instruction == "the parser"
        assert (result.status, result.original_token_count, result.new_token_count) == (
            expected.status, expected.original_token_count, expected.new_token_count)
        assert stage_rows(result) == stage_rows(expected)
        tabs = screen.query_one(TabbedContent)
        assert tabs.active == "stages"
        shown = plain(screen.query_one("#stages-pane").body.content)
        for stage in expected.stages:
            assert stage.name in shown
            assert f"{stage.tokens_before:,}" in shown and f"{stage.saved:,}" in shown
        assert shown.count("│ skipped ") == sum(not s.applied for s in expected.stages)
        assert screen.query("TabPane#final")  # the summary ran: the snapshot tabs are there
        header = plain(screen.query_one("#preview-summary").content)
        assert "stages used: duplicates, summarise" in header and header.count("stages used") == 1
        assert f"summary of turns 0-{result.split_point - 1}" in header
        await pilot.press("escape")
        assert "staged, target 2% of the window" in view.status.get("strategy")


async def test_staged_by_key_without_a_summary_has_no_snapshot_tabs(tmp_path: Path) -> None:
    path = copy_sample(tmp_path, "long-migration.jsonl")
    turns, context = cli_context(path)
    expected = await run_request(CompactionRequest(strategy="staged", force=True), context, turns,
                                 pick_summariser("offline"))
    assert expected.snapshot is None and expected.status.value == "COMPRESSED"
    app = InspectorApp(path, threshold=0.5, live=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("S", "c")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, SnapshotScreen)
        assert stage_rows(screen.preview.result) == stage_rows(expected)
        assert not screen.query("TabPane#final") and screen.query("TabPane#facts")
        await pilot.press("escape", "S")
        assert "strategy reference" in app.screen.status.get("strategy")


async def test_compare_screen_matches_the_core_then_staged_applies_and_reverts(tmp_path: Path) -> None:
    path = copy_sample(tmp_path, "coding-task.jsonl")
    original = path.read_bytes()
    turns, context = cli_context(path)
    expected = await compare(CompactionRequest(force=True, compare=True), context, turns, pick_summariser("offline"))
    app = InspectorApp(path, threshold=0.5, live=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        view = app.screen
        assert isinstance(view, SessionScreen)
        screen = await screen_after(pilot, "C", CompareScreen)
        table = screen.query_one(DataTable)
        assert table.row_count == 2
        for name, result in expected.results.items():
            row = [plain(cell).strip() for cell in table.get_row(name)]
            before, after = result.original_token_count, result.new_token_count
            assert row[:5] == [name, result.status.value, f"{before:,}", f"{after:,}", f"{before - after:,}"]
            recall = expected.recall[name]
            assert row[7] == (f"{recall:.1%}" if recall is not None else "-")
            assert row[6] == (f"{len(result.snapshot):,} chars" if result.snapshot else "-")
        staged = expected.results["staged"]
        assert table.get_row("staged")[5].plain == ", ".join(s.name for s in staged.stages if s.applied)

        await pilot.press("down", "enter")  # the staged row
        preview = app.screen
        assert isinstance(preview, SnapshotScreen)
        assert preview.preview.strategy == "staged"
        assert preview.preview.tokens == (staged.original_token_count, staged.new_token_count)
        await pilot.press("a")
        assert isinstance(app.screen, ConfirmScreen)
        assert "staged: duplicates, summarise" in plain(app.screen.body)
        await pilot.press("y")
        await settle(pilot)
        assert app.screen is view  # the preview and the comparison are closed
        assert path.read_bytes() != original
        assert len(view.loaded.analysis.turns) == len(staged.new_history)
        await pilot.press("u", "y")
        await settle(pilot)
        assert path.read_bytes() == original
        assert len(view.loaded.analysis.turns) == len(turns)


async def test_escape_cancels_a_running_comparison(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.gemini_server import GeminiServer, hang

    path = copy_sample(tmp_path, "coding-task.jsonl")
    monkeypatch.setenv("GEMINI_API_KEY", "test-key-0123456789")
    with GeminiServer([hang()]) as server:
        app = InspectorApp(path, threshold=0.5, live=False, provider="gemini", base_url=server.url)
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            view = app.screen
            await pilot.press("C")
            assert isinstance(app.screen, CompareScreen)
            while not server.requests:  # wait for the request itself, not for a fixed time
                await asyncio.sleep(0.01)
            await pilot.press("escape")
            await settle(pilot)
            assert app.screen is view
            assert any("cancelled" in n.message for n in app._notifications)
            assert all(w.is_finished for w in app.workers if w.group == "compare")


async def test_agentic_split_steps_marks_and_compacts(tmp_path: Path) -> None:
    from inspector.compaction.agentic import agentic_candidates

    path = copy_sample(tmp_path, "coding-task.jsonl")
    turns, context = cli_context(path)
    agentic = agentic_candidates([t.content for t in turns])
    app = InspectorApp(path, threshold=0.5, live=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        view = app.screen
        reference = view.split
        below = [c for c in agentic if c < reference]
        assert below, "the sample has an agentic candidate before the reference split"
        await pilot.press("left_curly_bracket")
        split = view.split
        assert split == below[-1] and turns[split].role == "model"
        assert f"split {split} (agentic; reference {reference})" in plain(view.query_one("#context").content)
        table = view.query_one("TurnTable")
        row = "".join(segment.text for segment in table._row(split, 120))
        assert row.startswith("◆") and f"{split}" in row
        await pilot.press("left_curly_bracket")
        assert view.split == below[-2]
        await pilot.press("right_curly_bracket")
        assert view.split == split

        expected = await run_request(CompactionRequest(force=True, split=split), context, turns,
                                     pick_summariser("offline"))
        await pilot.press("c")
        await settle(pilot)
        result = app.screen.preview.result
        assert result.status.value == "COMPRESSED" and result.split_point == split
        assert result.new_history == expected.new_history
        # [snapshot, the kept turns from that model turn on]: no acknowledgement in between
        assert len(result.new_history) == 1 + len(turns) - split
        assert result.new_history[0]["parts"][0]["text"] == result.snapshot
        assert result.new_history[1]["role"] == "model"
        assert result.new_history[1] == turns[split].content
