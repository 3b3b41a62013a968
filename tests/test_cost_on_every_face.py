"""Cost is the same figure on every face: a model turn whose record names no model (a session that
names one on other turns) is priced alike by ``analyze --json`` and by the app's table and detail pane."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

import pytest
from genai_prices import Usage, calc_price

from inspector import cli
from inspector.pricing.cost import usd_text
from inspector.session import history, load
from inspector.tui.app import InspectorApp
from inspector.tui.widgets.turn_detail import TurnDetail
from inspector.tui.widgets.turn_table import TurnTable
from tests.test_tui_compaction import plain, settle

USAGE = {"input": 12_000, "output": 40, "cached": 4_000, "thoughts": 10, "tool": 0, "total": 12_050}


@pytest.fixture
def session_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Two model turns with usage: the first names no model, the second names gemini-2.5-pro."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("GEMINI_CLI_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("SESSION_INSPECTOR_COST", raising=False)
    path = tmp_path / "proj" / "chats" / "session-2026-01-01T00-00-aaaa1111.jsonl"
    path.parent.mkdir(parents=True)
    records = [
        {"sessionId": "aaaa1111", "projectHash": "p", "startTime": "2026-01-01T00:00:00Z",
         "lastUpdated": "2026-01-01T00:00:00Z", "kind": "main"},
        {"id": "u1", "timestamp": "2026-01-01T00:00:01Z", "type": "user", "content": [{"text": "first question"}]},
        {"id": "g1", "timestamp": "2026-01-01T00:00:02Z", "type": "gemini", "content": "first answer",
         "tokens": USAGE},
        {"id": "u2", "timestamp": "2026-01-01T00:00:03Z", "type": "user", "content": [{"text": "second question"}]},
        {"id": "g2", "timestamp": "2026-01-01T00:00:04Z", "type": "gemini", "content": "second answer",
         "tokens": USAGE, "model": "gemini-2.5-pro"},
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def library_price(usage: dict[str, int], model: str) -> Decimal:
    priced = Usage(input_tokens=usage["input"] + usage["tool"], cache_read_tokens=usage["cached"],
                   output_tokens=usage["output"] + usage["thoughts"])
    return calc_price(priced, model, provider_id="google").total_price


def unnamed_turn(path: Path) -> int:
    session = load(path)
    for turn in history(session):
        if turn.role == "model" and turn.message_index is not None \
                and "model" not in session.messages[turn.message_index]:
            return turn.index
    raise AssertionError("no model turn without a model")


async def test_a_turn_naming_no_model_costs_the_same_in_analyze_and_the_app(
        session_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    turn = unnamed_turn(session_file)
    usd = library_price(USAGE, "gemini-2.5-pro")  # the session's model, assumed where a record names none
    assert cli.main(["analyze", "--json", str(session_file)]) == 0
    report = json.loads(capsys.readouterr().out)
    cost = report["cost"]
    assert turn not in cost["unpriced_turns"]
    priced = {row["turn"]: row for row in cost["turns"]}
    assert Decimal(str(priced[turn]["usd"])) == usd
    assert cost["session_usd"] == pytest.approx(float(2 * usd))

    app = InspectorApp(session_file, threshold=0.5, live=False)
    async with app.run_test(size=(160, 45)) as pilot:
        await settle(pilot)
        screen = app.screen
        await pilot.press("home", *["down"] * turn)
        text = plain(screen.query_one(TurnDetail).body.content)
        assert f"cost: {usd_text(usd)} (Gemini 2.5 Pro, " in text
        assert f"The session: {usd_text(2 * usd)} over 2 priced turns." in text
        table = screen.query_one(TurnTable)
        row = table.render_line(table.row_of(turn) - int(table.scroll_offset.y)).text
        assert f" {usd_text(usd)} " in row


def test_the_model_given_is_assumed_alike(session_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``--model`` names the model assumed where a record names none, as before."""
    turn = unnamed_turn(session_file)
    assert cli.main(["analyze", "--json", "--model", "gemini-2.5-flash", str(session_file)]) == 0
    cost = json.loads(capsys.readouterr().out)["cost"]
    priced = {row["turn"]: row for row in cost["turns"]}
    assert Decimal(str(priced[turn]["usd"])) == library_price(USAGE, "gemini-2.5-flash")


def test_what_masking_saves_is_priced_on_the_estimates_it_is_counted_in(capsys: pytest.CaptureFixture[str]) -> None:
    """Masking frees estimated tokens (1,041,570 on long-migration, whose last recorded prompt is 525,821):
    its saving per turn prices the estimate before and after, as a compaction's does, never a prompt cut
    to less than nothing."""
    from inspector.analysis import analyze
    from tests.snapshot_app import SAMPLES

    path = SAMPLES / "long-migration.jsonl"
    assert cli.main(["analyze", "--json", "--threshold", "0.5", str(path)]) == 0
    report = json.loads(capsys.readouterr().out)
    freed = report["masking"]["tokens_saved"]
    estimate = analyze(load(path), threshold=0.5).context.estimated_tokens
    assert freed > report["recorded_prompt_tokens"]  # the case: more freed than the recorded prompt holds
    saving = report["cost"]["masking_saving"]
    expected = calc_price(Usage(input_tokens=estimate), "gemini-2.5-pro", provider_id="google").total_price - \
        calc_price(Usage(input_tokens=estimate - freed), "gemini-2.5-pro", provider_id="google").total_price
    assert Decimal(str(saving["usd_per_turn"])) == expected


async def test_the_session_total_reads_the_same_in_analyze_and_the_detail_pane(
        session_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    usd = 2 * library_price(USAGE, "gemini-2.5-pro")
    said = f"{usd_text(usd)} over 2 priced turns"
    assert cli.main(["analyze", str(session_file)]) == 0
    assert f"cost: {said} (Gemini 2.5 Pro; " in capsys.readouterr().out
    assert cli.main(["analyze", "--no-cost", str(session_file)]) == 0
    assert "cost:" not in capsys.readouterr().out
    app = InspectorApp(session_file, threshold=0.5, live=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("home", "down", "d")  # the detail pane in place of the table at 80x24
        await pilot.pause()
        text = " ".join(plain(app.screen.query_one(TurnDetail).body.content).split())
        assert f"The session: {said}." in text
