"""What masking frees next turn reads the same in ``analyze`` (text and ``--json``) and in the app's
detail pane beside a □ mark: how many outputs and tokens, in all."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from inspector import cli
from inspector.format import masking_words
from inspector.tui.app import InspectorApp
from inspector.tui.masking_marks import WILL_MASK_MARK
from inspector.tui.widgets.turn_detail import TurnDetail
from inspector.tui.widgets.turn_table import TurnTable
from tests.snapshot_app import SAMPLES
from tests.test_tui_compaction import plain, settle


async def app_words(path: Path, turn: int) -> tuple[str, str]:
    """(the table's row of ``turn``, the detail pane on it)."""
    app = InspectorApp(path, threshold=0.5, live=False)
    async with app.run_test(size=(160, 45)) as pilot:
        await settle(pilot)
        table = app.screen.query_one(TurnTable)
        table.move_to(turn)
        await pilot.pause()
        row = table.render_line(table.row_of(turn) - int(table.scroll_offset.y)).text
        return row, " ".join(plain(app.screen.query_one(TurnDetail).body.content).split())


def test_masking_reads_the_same_in_analyze_and_the_app(monkeypatch: pytest.MonkeyPatch,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("COLUMNS", "250")
    path = SAMPLES / "long-migration.jsonl"
    assert cli.main(["analyze", "--json", str(path)]) == 0
    masking = json.loads(capsys.readouterr().out)["masking"]
    assert masking["masked_count"] and masking["tokens_saved"]
    words = f"in all, {masking_words(masking['masked_count'], masking['tokens_saved'])}"
    assert cli.main(["analyze", str(path)]) == 0
    assert words in " ".join(capsys.readouterr().out.split())
    turn = masking["parts"][-1][0]
    row, detail = asyncio.run(app_words(path, turn))
    assert WILL_MASK_MARK in row and words in detail


def test_no_masking_line_when_nothing_is_masked(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["analyze", str(SAMPLES / "coding-task.jsonl")]) == 0
    assert "masking:" not in capsys.readouterr().out
