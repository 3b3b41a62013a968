"""Both strategies side by side say the same on both faces: ``compact --compare`` and the app's
comparison (C) give each strategy's tokens before, after and what it did ("split 31 (reference)", the
stages that ran) in the same words."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from textual.widgets import DataTable

from inspector import cli
from inspector.compaction.stage_words import how_compacted
from inspector.tui.app import InspectorApp
from inspector.tui.screens.compare import CompareScreen
from tests.snapshot_app import copy_sample, screen_after, settle


async def app_cells(path: Path) -> dict[str, dict[str, str]]:
    app = InspectorApp(path, threshold=0.5, live=False, provider="offline")
    async with app.run_test(size=(160, 45)) as pilot:
        await settle(pilot)
        screen = await screen_after(pilot, "C", CompareScreen)
        table = screen.query_one(DataTable)
        return {name: {key: table.get_cell(name, key).plain.strip() for key in ("before", "after", "how")}
                for name in ("reference", "staged")}


@pytest.mark.parametrize("name", ["coding-task.jsonl", "checkpoint-rate-limit.json"])
def test_the_comparison_reads_alike(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                    capsys: pytest.CaptureFixture[str], name: str) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    path = copy_sample(tmp_path, name)
    args = ["compact", "--compare", "--force", "--provider", "offline", str(path)]
    cli.main([*args, "--json"])
    results = json.loads(capsys.readouterr().out)["compare"]
    cli.main(args)
    table = {line.split("│")[0].strip(): [cell.strip() for cell in line.split("│")[1:]]
             for line in capsys.readouterr().out.splitlines() if "│" in line}
    shown = asyncio.run(app_cells(path))
    for column, strategy in enumerate(("reference", "staged")):
        result = results[strategy]
        stages = result.get("stages")
        how = how_compacted(None if stages is None else [_Stage(s) for s in stages], result["split_point"],
                            result["split_kind"])
        assert table["stages / split"][column] == how == shown[strategy]["how"], (strategy, table, shown)
        assert table["tokens before"][column] == f"{result['original_token_count']:,}" == shown[strategy]["before"]
        assert table["after"][column] == f"{result['new_token_count']:,}" == shown[strategy]["after"]


class _Stage:
    """A stage as ``--json`` writes it, read back."""

    def __init__(self, row: dict[str, object]) -> None:
        self.name = str(row["stage"])
        self.applied = bool(row["applied"])
