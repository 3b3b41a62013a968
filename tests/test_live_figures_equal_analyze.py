"""After a live append, the app's figures are those ``analyze`` prints for the file as it now is:
the header's context, share, threshold, verdict and split figures, the newest row, and (once worked
out again) the cost of each turn and of the session."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

import pytest

from inspector import cli
from inspector.format import percent, usage_text
from inspector.pricing.cost import usd_text
from inspector.tui.messages import NotesReady
from inspector.tui.session_notes import noted
from inspector.tui.widgets.context_header import ContextHeader
from inspector.tui.widgets.turn_table import TurnTable
from tests.test_tui_live import answer, conversation, prompt
from tests.test_tui_live_trust import Seen, append, idle, live_loads, watched


async def test_after_an_append_the_app_says_what_analyze_says(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "250")
    seen = Seen()
    async with watched(tmp_path, "session-appended.jsonl", conversation(6), seen) as (pilot, view, path):
        view.notes.NOTES_QUIET = 0.05  # the appends pause at once: masking and cost are worked out again
        worked_out = seen.count(lambda m: isinstance(m, NotesReady))
        appended = json.loads(answer(6, calls=2, size=9_000))
        del appended["model"]  # a turn that names no model: priced as the session's, on both faces
        append(path, prompt(6, 30_000) + json.dumps(appended) + "\n")
        await seen.until(pilot, lambda: seen.count(live_loads) >= 1, "the append was not shown")
        await seen.until(pilot, lambda: seen.count(lambda m: isinstance(m, NotesReady)) > worked_out,
                         "masking and cost were not worked out again", timeout=15)
        await idle(pilot)
        assert view.loaded is not None
        analysis = view.loaded.analysis
        found = noted(analysis)
        assert found is not None and found.as_of is None
        header = str(view.query_one(ContextHeader).render()).splitlines()
        split = view.split
        table = view.query_one(TurnTable)
        rows: dict[int, str] = {}
        priced = [turn.turn for turn in found.cost.turns]
        for turn in (len(analysis.turns) - 1, priced[-1]):
            view.table.move_to(turn)
            await pilot.pause()
            rows[turn] = table.render_line(table.row_of(turn) - int(table.scroll_offset.y)).text
        shown_cost = {turn: found.cost.of_turn(turn) for turn in priced}
        total = found.cost.total

    assert cli.main(["analyze", "--json", "--threshold", "0.5", str(path)]) == 0
    report = json.loads(capsys.readouterr().out)
    assert cli.main(["analyze", "--all", "--threshold", "0.5", str(path)]) == 0
    text = capsys.readouterr().out
    context = analysis.context
    assert (len(analysis.turns), context.deciding_tokens, analysis.verdict.value) == (
        len(report["history"]), report["context_tokens"], report["verdict"])
    assert f"context: {context.deciding_tokens:,} / {context.token_limit:,} ({context.share_percent}," in text
    assert f" {context.deciding_tokens:,} / {context.token_limit:,} ({context.share_percent}) " in header[1]
    assert context.reason() in text and context.reason() in header[1]
    figures = report["split"]
    assert split == figures["split"]
    assert f"{figures['summarised_tokens']:,} tok" in header[2] and f"{figures['kept_tokens']:,} tok" in header[2]

    for turn, row in rows.items():
        line = next(line for line in text.splitlines() if line.lstrip().startswith(f"{turn:,} "))
        estimate = report["history"][turn]["estimated_tokens"]
        share = percent(estimate / report["total_estimated_tokens"])
        for figure in (f"{estimate:,}", share, usage_text(report["history"][turn]["recorded"])):
            assert f" {figure} " in f" {row} " and f" {figure} " in f" {line} ", (figure, row, line)

    cost = report["cost"]
    assert cost["enabled"] and total is not None and float(total) == pytest.approx(cost["session_usd"])
    assert [row["turn"] for row in cost["turns"]] == priced
    for row in cost["turns"]:
        price = shown_cost[row["turn"]]
        assert price is not None and price.usd == Decimal(str(row["usd"])), row
    last = priced[-1]
    assert f" {usd_text(shown_cost[last].usd)} " in rows[last]  # type: ignore[union-attr]
