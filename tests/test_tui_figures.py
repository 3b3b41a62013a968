"""Every total on every screen is the same figure, or the screen says what the difference is
(issue 14.2): the header, the figures screen (i), the preview, the comparison, the apply
confirmation - on a session with an environment turn, where the estimates differ by it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from rich.console import Console

from inspector.analysis import analyze
from inspector.compaction.view import HistoryView
from inspector.session import load
from inspector.tui.app import InspectorApp
from inspector.tui.running import chosen_split
from inspector.tui.screens.compare import CompareScreen
from inspector.tui.screens.dialogs import ConfirmScreen
from inspector.tui.screens.figures import FiguresScreen
from inspector.tui.screens.snapshot import SnapshotScreen
from inspector.tui.session.screen import SessionScreen
from inspector.tui.widgets.context_header import ContextHeader
from tests.snapshot_app import SAMPLES, copy_sample, screen_after, settle

SAMPLE = SAMPLES / "coding-task.jsonl"


def plain(renderable: object, width: int = 200) -> str:
    console = Console(width=width, record=True, color_system=None)
    console.print(renderable)
    text = console.export_text().replace("│", " ").replace("┃", " ")
    return " ".join(text.split())  # one line: the words as a person reads them


def numbers(text: str) -> list[int]:
    return [int(n.replace(",", "")) for n in re.findall(r"\d[\d,]*", text)]


@pytest.fixture
def session_file(tmp_path: Path) -> Path:
    return copy_sample(tmp_path, SAMPLE.name)


async def test_the_totals_agree_or_say_why_not(session_file: Path) -> None:
    analysis = analyze(load(session_file), threshold=0.5)
    context = analysis.context
    history, environment = analysis.total_estimated_tokens, context.environment_tokens
    assert environment > 0 and context.recorded_prompt_tokens is not None  # the case that confused people
    note = f"before = the table's {history:,} + the environment turn {environment:,}"
    app = InspectorApp(session_file, threshold=0.5, live=False, provider="offline")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        view = app.screen
        assert isinstance(view, SessionScreen)
        header = str(view.query_one(ContextHeader).render())
        assert "recorded" in header and "(i)" in header  # which figure the gauge shows, and where to read why
        # the split line's two sides add up to the table's total
        split_line = header.splitlines()[2]
        summarised = numbers(split_line.split("summarise ")[1].split(" tok")[0])[-1]
        kept = numbers(split_line.split("keep ")[1])[1]
        assert summarised + kept == history

        figures = await screen_after(pilot, "i", FiguresScreen)
        text = plain(figures.query_one("#figures-table").content) + plain(
            figures.query_one("#figures-verdict").content)
        assert f"history (estimate) {history:,}" in text
        assert f"environment turn {environment:,}" in text
        assert f"estimate {context.estimated_tokens:,}" in text and context.estimated_tokens == history + environment
        assert f"recorded prompt {context.recorded_prompt_tokens:,}" in text
        assert context.reason() in text
        await pilot.press("escape")

        preview = await screen_after(pilot, "c", SnapshotScreen)
        before, _after = preview.preview.tokens
        assert before == history + environment
        assert note in plain(preview.query_one("#preview-summary").content)
        await pilot.press("a")
        await pilot.pause()
        confirm = app.screen
        assert isinstance(confirm, ConfirmScreen)
        assert note in plain(confirm.body)
        await pilot.press("n")
        await pilot.press("escape")
        await settle(pilot)

        compare = await screen_after(pilot, "C", CompareScreen)
        assert note in plain(compare.query_one("#compare-notes").content)


async def test_where_the_tool_output_budget_moves_the_split_it_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    """long-migration: the history as it stands splits at one turn, the budget-truncated history a
    compaction splits at another.  The app's split is the compaction's (the one c uses, compact reports
    and the export marks); the wide header and the figures screen (at 80x24) name the other."""
    monkeypatch.setenv("GEMINI_MODEL", "auto-gemini-2.5")  # splits the turns as recorded: mid-history
    path = SAMPLES / "long-migration.jsonl"
    analysis = analyze(load(path), threshold=0.5, view=HistoryView.AS_RECORDED)
    assert analysis.compress_split_point != analysis.split_point
    moved = f"split {analysis.split_point:,} without the tool-output budget's cuts"
    for size in ((200, 50), (80, 24)):
        app = InspectorApp(path, threshold=0.5, live=False)
        async with app.run_test(size=size) as pilot:
            await settle(pilot)
            header = str(app.screen.query_one(ContextHeader).render())
            assert isinstance(app.screen, SessionScreen) and app.screen.split == analysis.compress_split_point
            assert f"split {analysis.compress_split_point:,} (reference)" in header
            assert chosen_split(app.screen.loaded, app.screen.split) is None  # c asks for Gemini CLI's own split
            if size[0] >= 200:
                assert moved in header.splitlines()[2]
                continue
            figures = await screen_after(pilot, "i", FiguresScreen)
            verdict = plain(figures.query_one("#figures-verdict").content)
            assert (f"Gemini CLI's split is turn {analysis.compress_split_point:,}: a compaction first lets the "
                    "tool-output budget cut old outputs") in verdict
            assert f"the history would split at turn {analysis.split_point:,})" in verdict
