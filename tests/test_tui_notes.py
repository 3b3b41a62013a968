"""Masking marks and the cost column come after the table, and say what ``analyze --json`` says.

Planning masking and pricing read every turn (seconds on a big session), so
the app shows the table first and works them out in a worker.  Here that
worker is held at a gate (a real ``threading.Event`` around the real
``masking_of``): the table is on screen without marks or cost column; once
the gate opens, the marks and the cost cells appear, equal to what
``session-inspector analyze --json`` prints for the same file.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
import threading
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from inspector.pricing.cost import usd_text
from inspector.tui import session_notes
from inspector.tui.app import InspectorApp
from inspector.tui.masking_marks import MASKED_MARK, WILL_MASK_MARK
from inspector.tui.messages import NotesReady, SessionLoaded
from inspector.tui.session.screen import SessionScreen
from inspector.tui.widgets.turn_table import TurnTable
from tests.snapshot_app import SAMPLES, settle

SIZE = (160, 45)
SAMPLE = SAMPLES / "long-migration.jsonl"  # outputs the next turn masks, and priced turns


def cells_by_turn(table: TurnTable) -> dict[int, dict[str, str]]:
    """Every turn's cells as drawn, page by page (the table draws only what is in view)."""
    found: dict[int, dict[str, str]] = {}
    for top in range(0, table.row_count, max(1, table.size.height)):
        table.scroll_to(y=top, animate=False, immediate=True)
        for y in range(table.size.height):
            turn = table.turn_at(y + int(table.scroll_y))
            if turn is None or turn in found:
                continue
            text, at, cells = table.render_line(y).text, 0, {}
            for column, width in table.columns:
                cells[column.key] = text[at:at + width].strip()
                at += width + 1
            found[turn] = cells
    return found


def analyze_json(path: Path, cwd: Path, env: dict[str, str]) -> dict[str, Any]:
    done = subprocess.run([sys.executable, "-m", "inspector", "analyze", "--json", str(path)], cwd=cwd, env=env,
                          capture_output=True, text=True, check=True)
    return json.loads(done.stdout)  # type: ignore[no-any-return]


async def test_marks_and_cost_appear_after_the_table_equal_to_analyze_json(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    if not SAMPLE.is_file():
        pytest.skip(f"{SAMPLE} is missing")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("GEMINI_CLI_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("SESSION_INSPECTOR_COST", "on")
    path = tmp_path / "proj" / "chats" / SAMPLE.name
    path.parent.mkdir(parents=True)
    shutil.copyfile(SAMPLE, path)
    report = analyze_json(path, tmp_path, dict(os.environ))
    masking, cost = report["masking"], report["cost"]
    assert masking["parts"] and cost["enabled"] and cost["turns"], "the sample no longer shows both"

    gate = threading.Event()
    real = session_notes.masking_of

    def held(*args: Any, **kwargs: Any) -> Any:
        assert gate.wait(60), "the test never opened the gate"
        return real(*args, **kwargs)

    monkeypatch.setattr(session_notes, "masking_of", held)
    shown = asyncio.Event()
    noted = asyncio.Event()

    def hook(message: object) -> None:
        if isinstance(message, SessionLoaded):
            shown.set()
        elif isinstance(message, NotesReady):
            noted.set()

    app = InspectorApp(path, threshold=0.5, live=False)
    async with app.run_test(size=SIZE, message_hook=hook) as pilot:
        try:
            await asyncio.wait_for(shown.wait(), 30)
            for _ in range(3):
                await pilot.pause()
            view = app.screen
            assert isinstance(view, SessionScreen) and view.loaded is not None
            assert any(w.group == "notes" and not w.is_finished for w in view.workers), "masking is not pending"
            table = view.query_one(TurnTable)
            before = cells_by_turn(table)
            assert len(before) == len(view.loaded.analysis.turns)  # the whole table is there...
            assert "cost" not in before[0]  # ...without a cost column
            assert all(c["mask"] == "…" for c in before.values())  # ...and masking marked pending, no mark yet
        finally:
            gate.set()
        await asyncio.wait_for(noted.wait(), 30)
        await settle(pilot)
        after = cells_by_turn(table)

    will_mask = {turn for turn, _part in masking["parts"]}
    masked = {turn for turn, _part in masking["already_masked"]} - will_mask
    assert {t for t, c in after.items() if c["mask"] == WILL_MASK_MARK} == will_mask
    assert {t for t, c in after.items() if c["mask"] == MASKED_MARK} == masked
    priced = {t["turn"]: usd_text(Decimal(str(t["usd"]))) for t in cost["turns"]}
    assert {t: c["cost"] for t, c in after.items() if c["cost"]} == priced
