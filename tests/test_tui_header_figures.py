"""The header and the split divider say the same token figures: at 80x24 the header drops words (the
reference's turn, the summarised turns, the share) before it rounds a figure, so a split of 626,300
tokens is never "626k" in the header right above "626,300 tok" on the divider (and two splits a step
apart never read alike in the header while the divider differs)."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

from inspector.format import plural
from inspector.tui.app import InspectorApp
from inspector.tui.session.screen import SessionScreen
from inspector.tui.widgets.context_header import ContextHeader
from inspector.tui.widgets.turn_table import TurnTable
from tests.snapshot_app import SAMPLES, settle


@pytest.mark.parametrize("name", ["long-migration.jsonl", "coding-task.jsonl"])
async def test_the_header_says_the_dividers_figures_at_80x24(name: str) -> None:
    app = InspectorApp(SAMPLES / name, threshold=0.5, live=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        view = app.screen
        assert isinstance(view, SessionScreen) and view.loaded is not None
        analysis = view.loaded.analysis
        header = view.query_one(ContextHeader)
        table = view.query_one(TurnTable)
        splits = sorted(set(analysis.candidates) | view.loaded.agentic_set | {analysis.compress_split_point})
        assert any(analysis.split_figures(s)["summarised_tokens"] >= 100_000 for s in splits) or \
            name != "long-migration.jsonl"  # figures a short form would round
        for split in splits:
            view.set_split(split)
            await pilot.pause()
            line = str(header.render()).splitlines()[2]
            assert len(line) <= 78, line
            figures = analysis.split_figures(split)
            summarised, kept = f"{figures['summarised_tokens']:,} tok", f"{figures['kept_tokens']:,} tok"
            assert f"summarise {summarised}" in line, line
            assert f"keep {plural(int(figures['kept_turns']), 'turn')}, {kept}" in line, line
            divider = table.divider_row
            assert divider is not None
            table.scroll_to(y=divider, animate=False, immediate=True)
            await pilot.pause()
            drawn = table.render_line(divider - int(table.scroll_offset.y)).text
            if "summarise" in drawn:  # the divider's figures, where it has room for them
                assert summarised in drawn and kept in drawn, drawn


async def test_the_wide_header_keeps_every_word(tmp_path: Path) -> None:
    """At 160 columns nothing is dropped: the turns on both sides and the kept share."""
    app = InspectorApp(SAMPLES / "long-migration.jsonl", threshold=0.5, live=False)
    async with app.run_test(size=(160, 45)) as pilot:
        await settle(pilot)
        view = app.screen
        assert isinstance(view, SessionScreen) and view.loaded is not None
        analysis = view.loaded.analysis
        split = sorted(view.loaded.agentic_set)[len(view.loaded.agentic_set) // 2]
        view.set_split(split)
        await pilot.pause()
        line = str(view.query_one(ContextHeader).render()).splitlines()[2]
        figures = analysis.split_figures(split)
        assert f"summarise {plural(split, 'turn')}, {figures['summarised_tokens']:,} tok" in line, line
        assert f"{figures['kept_tokens']:,} tok (" in line and f"reference {analysis.compress_split_point:,}" in line


async def test_a_long_historys_results_held_twice_are_counting_then_counted(monkeypatch: pytest.MonkeyPatch) -> None:
    """Past ``COUNT_AT_ONCE`` turns the header is shown at once, its held-twice figure "counting…", and the
    count (a pass over every turn) comes from a worker: the figure then is the one ``analyze`` gives."""
    from inspector.analysis import analyze
    from inspector.deciding import estimate_gap
    from inspector.session import load
    from inspector.tui.widgets import context_header

    monkeypatch.setattr(ContextHeader, "COUNT_AT_ONCE", 0)  # the sample counts as long
    release = threading.Event()
    count = context_header.twice_held_quarters

    def held_back(*args: Any) -> int:
        assert release.wait(60), "the test never let the count go on"
        return count(*args)

    monkeypatch.setattr(context_header, "twice_held_quarters", held_back)
    path = SAMPLES / "coding-task.jsonl"
    expected = estimate_gap(analyze(load(path), threshold=0.5))
    assert expected is not None and expected.twice, "the sample holds results twice"
    app = InspectorApp(path, threshold=0.5, live=False)
    async with app.run_test(size=(200, 50)) as pilot:
        header = app.screen.query_one(ContextHeader)
        for _ in range(500):  # until the header is shown (the count is held back meanwhile)
            if "counting" in str(header.render()):
                break
            await pilot.pause()
        else:
            raise AssertionError(f"the header never said it was counting: {header.render()}")
        release.set()
        await settle(pilot)
        shown = str(header.render())
    assert "counting" not in shown and any(expected.words(level) in shown for level in range(3)), shown
