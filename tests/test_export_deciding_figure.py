"""The export says the figure that decides and why, as ``analyze`` and the app's header do: on a
session with no recorded prompt, the estimate the threshold is compared with counts the environment
turn, so it may cross the threshold while the history's total the export lists does not; the export
then says "would compress now: yes" beside the figure that makes it so."""

from __future__ import annotations

import html
import json
from pathlib import Path

import pytest

from inspector import cli
from inspector.analysis import analyze
from inspector.format import count_text
from inspector.session import load
from tests.snapshot_app import SAMPLES

SHARED = Path("/work/shared/gemini-cli-sessions")


def without_usage(source: Path, target: Path) -> Path:
    """``source`` with every recorded usage left out: the estimate decides."""
    lines = []
    for line in source.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        record.pop("tokens", None)
        lines.append(json.dumps(record, ensure_ascii=False))
    target.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return target


def context_words(path: Path, threshold: float) -> tuple[str, str]:
    context = analyze(load(path), threshold=threshold).context
    figure = count_text(context.deciding_tokens)
    head = f"{figure} / {context.token_limit:,} ({context.share_percent}, {context.source})"
    return head, context.reason()


def sessions(tmp_path: Path) -> list[Path]:
    found = sorted(SAMPLES.glob("*.json*"))
    if SHARED.is_dir():
        found += sorted(SHARED.glob("*.json*"))
    return [*found, without_usage(SAMPLES / "coding-task.jsonl", tmp_path / "no-usage.jsonl")]


def test_the_export_says_the_deciding_figure_as_analyze_does(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("COLUMNS", "250")
    for path in sessions(tmp_path):
        for threshold in ("0.5", "0.01"):
            head, reason = context_words(path, float(threshold))
            assert cli.main(["analyze", "--threshold", threshold, str(path)]) == 0
            report = capsys.readouterr().out
            assert f"context: {head}" in report and reason in report, path
            assert cli.main(["export", "--threshold", threshold, str(path)]) == 0
            assert f"| context | {head}: {html.escape(reason)} |" in capsys.readouterr().out, path
            assert cli.main(["export", "--format", "html", "--threshold", threshold, str(path)]) == 0
            assert f"<td>context</td><td>{html.escape(f'{head}: {reason}')}</td>" in capsys.readouterr().out


def test_an_estimate_over_the_threshold_only_with_the_environment_turn(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = without_usage(SAMPLES / "coding-task.jsonl", tmp_path / "no-usage.jsonl")
    analysis = analyze(load(path), threshold=0.5)
    context = analysis.context
    assert context.recorded_prompt_tokens is None and context.environment_tokens > 1
    threshold = (analysis.total_estimated_tokens + 1) / context.token_limit  # the history alone is under it
    over = analyze(load(path), threshold=threshold)
    assert over.context.over_threshold and over.would_compress
    assert cli.main(["export", "--threshold", repr(threshold), str(path)]) == 0
    text = capsys.readouterr().out
    assert f"| estimated tokens | {analysis.total_estimated_tokens:,} |" in text
    assert "| would compress now | yes |" in text
    assert f"estimate {context.estimated_tokens:,} &gt;= threshold {over.context.threshold_tokens:,}" in text


async def detail_text(path: Path, turn: int) -> str:
    from inspector.tui.app import InspectorApp
    from inspector.tui.widgets.turn_detail import TurnDetail
    from tests.test_tui_compaction import plain, settle

    app = InspectorApp(path, threshold=0.5, live=False)
    async with app.run_test(size=(160, 45)) as pilot:
        await settle(pilot)
        await pilot.press("home", *["down"] * turn)
        return " ".join(plain(app.screen.query_one(TurnDetail).body.content).split())


def test_recorded_usage_is_exact_in_the_export_as_in_the_detail_pane(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The export has room for every recorded figure: 9,120 and 9,149 are not both "9.1k" there."""
    import asyncio

    from inspector.format import usage_words

    path = SAMPLES / "coding-task.jsonl"
    assert cli.main(["analyze", "--json", str(path)]) == 0
    rows = json.loads(capsys.readouterr().out)["history"]
    assert cli.main(["export", str(path)]) == 0
    text = capsys.readouterr().out
    used = [row for row in rows if row["recorded"]]
    assert len({row["recorded"]["input"] for row in used}) > len({f"{row['recorded']['input']:.2g}" for row in used})
    for row in used:
        words = usage_words(row["recorded"])
        assert f"{row['recorded']['input']:,}" in words
        heading = f"### Turn {row['index']:,}: {row['role']} ({row['kind']}, "
        assert any(line.startswith(heading) and line.endswith(f", recorded {words})") for line in text.splitlines())
    first = used[0]
    assert usage_words(first["recorded"]) in asyncio.run(detail_text(path, first["index"]))


def test_the_export_gives_the_split_sides_analyze_and_the_header_give(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """The summarised and kept sides of Gemini CLI's split: turns, tokens and the kept share."""
    import asyncio

    from inspector.tui.app import InspectorApp
    from inspector.tui.widgets.context_header import ContextHeader
    from tests.test_tui_compaction import settle

    async def header(path: Path) -> str:
        app = InspectorApp(path, threshold=0.5, live=False)
        async with app.run_test(size=(200, 50)) as pilot:
            await settle(pilot)
            return str(app.screen.query_one(ContextHeader).render()).splitlines()[2]

    monkeypatch.setenv("COLUMNS", "250")
    for name in ("coding-task.jsonl", "after-compression.jsonl", "checkpoint-rate-limit.json"):
        path = SAMPLES / name
        figures = analyze(load(path), threshold=0.5).split_figures(analyze(load(path)).compress_split_point)
        summarised, kept = figures["summarised_tokens"], figures["kept_tokens"]
        assert cli.main(["analyze", str(path)]) == 0
        report = capsys.readouterr().out
        assert cli.main(["export", str(path)]) == 0
        text = capsys.readouterr().out
        line = asyncio.run(header(path))
        for words in (f"{figures['summarised_turns']:,} turn", f"{summarised:,} tok", f"{kept:,} tok",
                      f"({figures['kept_share'] * 100:.1f}%)"):
            assert words in report and words in text and words in line, (name, words)
        assert f"| keep | {figures['kept_turns']:,} turn" in text and f"| summarise | {figures['split']:,} turn" in text
