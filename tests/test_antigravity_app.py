"""The app on an Antigravity transcript at 80x24: its turns, its checkpoints, what each forgot, read only."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import DataTable, Static

from inspector.tui.app import InspectorApp
from inspector.tui.screens.checkpoints import STATUS, CheckpointsScreen
from inspector.tui.screens.dialogs import ConfirmScreen
from inspector.tui.screens.snapshot import SnapshotScreen
from inspector.tui.session.screen import SessionScreen
from inspector.tui.widgets.turn_table import TurnTable
from scripts.make_antigravity_sample import sample_rows, write
from tests.snapshot_app import settle

SIZE = (80, 24)


def _sample(tmp_path: Path) -> Path:
    return write(tmp_path / "brain" / "c1" / ".system_generated" / "logs" / "transcript_full.jsonl")


def _shown(screen: CheckpointsScreen) -> str:
    return str(screen.query_one("#checkpoints-detail", Static).render())


async def test_the_table_then_the_checkpoints_and_what_each_forgot(tmp_path: Path) -> None:
    path = _sample(tmp_path)
    app = InspectorApp(path, threshold=0.5, live=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        view = app.screen
        assert isinstance(view, SessionScreen)
        assert view.loaded is not None and view.loaded.session.format == "antigravity"
        assert view.status.get("antigravity") == STATUS  # says what it is, and where its compactions are
        turns = view.query_one(TurnTable)
        assert len(view.loaded.analysis.turns) + 1 == turns.row_count  # every turn, and the split's divider
        assert 0 < len(view.loaded.analysis.turns) <= len(sample_rows())
        await pilot.press("t")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, CheckpointsScreen)
        table = screen.query_one("#checkpoints", DataTable)
        assert table.row_count == 2
        title = str(screen.query_one("#checkpoints-title", Static).render())
        assert "150,000" in title and "read only" in title
        await pilot.press("down")
        await settle(pilot)
        shown = _shown(screen)
        assert "CHECKPOINT 2" in shown
        assert "lost facts (5)" in shown and "`python -m pytest -q` -> failed" in shown
        assert "[User Requests]" in shown and "[6. Current Work and Next Steps]" in shown  # the preview
        assert "since the previous checkpoint" in shown
        await pilot.press("up")
        await settle(pilot)
        assert "CHECKPOINT 1" in _shown(screen)
        await pilot.press("escape")
        await settle(pilot)
        assert app.screen is view


async def test_apply_is_refused_with_why(tmp_path: Path) -> None:
    path = _sample(tmp_path)
    before = sorted(p.name for p in path.parent.iterdir()), path.read_bytes()
    app = InspectorApp(path, threshold=0.01, live=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("c")  # the project's own compaction may still be previewed, for comparison
        await settle(pilot)
        preview = app.screen
        assert isinstance(preview, SnapshotScreen) and preview.preview.compressed
        footer = str(preview.query_one("#preview-footer", Static).render())
        assert "cannot apply" in footer and "never reads this file back" in footer
        await pilot.press("escape")
        await settle(pilot)
        await pilot.press("a")
        await pilot.pause()
        refused = [str(n.message) for n in app._notifications if n.title == "Not applied"]
        assert refused and "never reads this file back" in refused[0]
        assert not isinstance(app.screen, ConfirmScreen)
    assert (sorted(p.name for p in path.parent.iterdir()), path.read_bytes()) == before


async def test_the_gauge_is_drawn_against_antigravitys_compaction_point(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """Opened with no threshold given, a transcript's gauge and deciding figure are measured against
    Antigravity's compaction point (150,000 tokens by default, or the setting), not Gemini CLI's 50%."""
    for setting, point in ((None, 150_000), ("100000", 100_000)):
        if setting is None:
            monkeypatch.delenv("SESSION_INSPECTOR_COMPACTION_POINT", raising=False)
        else:
            monkeypatch.setenv("SESSION_INSPECTOR_COMPACTION_POINT", setting)
        app = InspectorApp(_sample(tmp_path), live=False)
        async with app.run_test(size=(200, 50)) as pilot:  # (wide enough for the header to name the threshold)
            await settle(pilot)
            view = app.screen
            assert isinstance(view, SessionScreen) and view.loaded is not None
            context = view.loaded.analysis.context
            assert context.threshold_tokens == point
            assert "Antigravity's compaction point" in view.loaded.threshold.source
            header = " ".join(str(w.render()) for w in view.query(Static))
            assert f"{point:,}" in header, header
