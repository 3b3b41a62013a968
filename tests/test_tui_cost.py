"""Cost in the app: the cost column, the selected turn's figure in the detail pane, the saving in the apply
confirmation."""

from __future__ import annotations

import json
import shutil
from decimal import Decimal
from pathlib import Path

import pytest
from genai_prices import Usage, calc_price

from inspector.pricing.cost import usd_text
from inspector.session import history, load
from inspector.tui.app import InspectorApp
from inspector.tui.screens.dialogs import ConfirmScreen
from inspector.tui.widgets.turn_detail import TurnDetail
from inspector.tui.widgets.turn_table import TurnTable
from tests.snapshot_app import SAMPLES
from tests.test_tui_compaction import plain, settle

SIZE = (160, 45)


@pytest.fixture
def session_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("GEMINI_CLI_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("SESSION_INSPECTOR_COST", raising=False)
    target = tmp_path / "proj" / "chats" / "coding-task.jsonl"
    target.parent.mkdir(parents=True)
    shutil.copyfile(SAMPLES / "coding-task.jsonl", target)
    return target


def priced_turn(path: Path) -> tuple[int, Decimal]:
    """The first model turn with usage, priced by asking genai-prices directly."""
    session = load(path)
    for turn in history(session):
        if turn.role != "model" or turn.message_index is None or turn.is_tool_result:
            continue
        record = session.messages[turn.message_index]
        tokens = record.get("tokens")
        if isinstance(tokens, dict):
            usage = Usage(input_tokens=tokens["input"] + tokens.get("tool", 0), cache_read_tokens=tokens["cached"],
                          output_tokens=tokens["output"] + tokens.get("thoughts", 0))
            return turn.index, calc_price(usage, record["model"], provider_id="google").total_price
    raise AssertionError("no priced turn")


async def test_cost_in_detail_and_apply_confirmation(session_file: Path) -> None:
    turn, usd = priced_turn(session_file)
    app = InspectorApp(session_file, threshold=0.5, live=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        await pilot.press("home", *["down"] * turn)
        text = plain(screen.query_one(TurnDetail).body.content)
        assert f"cost: {usd_text(usd)} (Gemini 2.5 Pro, prompts up to 200,000 tokens)" in text
        table = screen.query_one(TurnTable)
        assert "cost" in [column.key for column, _ in table.columns]
        row = table.render_line(table.row_of(turn) - int(table.scroll_offset.y)).text
        assert f" {usd_text(usd)} " in row  # the turn's own row, in the cost column
        assert "The session: $" in text

        await pilot.press("c")
        await settle(pilot)
        before, after = app.screen.preview.tokens
        await pilot.press("a")
        assert isinstance(app.screen, ConfirmScreen)
        saved = calc_price(Usage(input_tokens=before), "gemini-2.5-pro", provider_id="google").total_price - \
            calc_price(Usage(input_tokens=after), "gemini-2.5-pro", provider_id="google").total_price
        assert f"cost: saves {usd_text(saved)} on every later turn" in plain(app.screen.body)
        await pilot.press("n")


async def test_cost_off(session_file: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    settings = session_file.parents[2] / "home" / ".gemini" / "settings.json"
    settings.parent.mkdir(parents=True)
    settings.write_text(json.dumps({"security": {"auth": {"selectedType": "oauth-personal"}}}))
    turn, _ = priced_turn(session_file)
    app = InspectorApp(session_file, threshold=0.5, live=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("home", *["down"] * turn)
        assert "cost:" not in plain(app.screen.query_one(TurnDetail).body.content)
        assert "cost" not in [column.key for column, _ in app.screen.query_one(TurnTable).columns]


async def test_no_figure_where_the_model_is_unknown(session_file: Path) -> None:
    """Turns naming a model the price table does not know: no cost column, no dollar figure in the
    detail pane (it says why there is none), no saving in the apply confirmation."""
    text = session_file.read_text(encoding="utf-8").replace('"gemini-2.5-pro"', '"house-model-7"')
    session_file.write_text(text, encoding="utf-8")
    turn, _ = priced_turn(SAMPLES / "coding-task.jsonl")
    app = InspectorApp(session_file, threshold=0.5, live=False, provider="offline")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert app.screen.loaded.analysis.model == "house-model-7"
        assert "cost" not in [column.key for column, _ in app.screen.query_one(TurnTable).columns]
        await pilot.press("home", *["down"] * turn)
        detail = plain(app.screen.query_one(TurnDetail).body.content)
        assert "$" not in detail and "cost: none shown" in detail
        await pilot.press("c")
        await settle(pilot)
        await pilot.press("a")
        assert isinstance(app.screen, ConfirmScreen)
        body = plain(app.screen.body)
        assert "cost" not in body and "$" not in body
        await pilot.press("n")
