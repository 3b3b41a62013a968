"""Rough edges a newcomer hit (issue 40), each reproduced and fixed: the command line and the report."""

from __future__ import annotations

import os

import pytest

from inspector import cli
from inspector.format import USAGE_HEADER, usage_text
from tests.conftest import SAMPLES


def test_no_cost_is_taken_by_the_app_command(monkeypatch: pytest.MonkeyPatch) -> None:
    """``session-inspector --no-cost FILE`` opens the app with cost off (it was refused: unrecognized)."""
    from inspector.commands import app as app_command
    from inspector.tui.app import InspectorApp

    monkeypatch.setenv("SESSION_INSPECTOR_COST", "")
    seen: list[str | None] = []
    monkeypatch.setattr(InspectorApp, "run", lambda self: seen.append(os.environ.get("SESSION_INSPECTOR_COST")))
    assert cli.main(["--no-cost", str(SAMPLES / "coding-task.jsonl")]) == 0
    assert seen == ["off"]
    assert cli.main(["--cost", str(SAMPLES / "coding-task.jsonl")]) == 0
    assert seen == ["off", "on"]
    parser = __import__("argparse").ArgumentParser()
    app_command.add_arguments(parser)
    served = app_command.served_command(parser.parse_args(["--no-cost", "x.jsonl"]))
    assert served.endswith("--no-cost")  # each browser tab of --serve runs with it too


def test_the_usage_figures_name_thoughts_not_an_ordinal() -> None:
    assert usage_text({"input": 15_000, "output": 139, "cached": 12_000, "thoughts": 483}) == "15k/139/12k/483"
    assert usage_text({"input": 15_000, "output": 139, "cached": 12_000}) == "15k/139/12k"
    assert USAGE_HEADER == "in/out/cached/thoughts"


@pytest.mark.parametrize("name", ["coding-task.jsonl", "long-migration.jsonl"])
def test_the_split_marker_stays_one_line_at_80_columns_piped(capsys: pytest.CaptureFixture[str],
                                                             monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    assert cli.main(["analyze", str(SAMPLES / name)]) == 0
    lines = capsys.readouterr().out.splitlines()
    at = next(i for i, line in enumerate(lines) if "│ split │" in line)
    following = lines[at + 1]
    assert following.split("│")[0].strip()[:1].isdigit() or following.startswith("usage:"), lines[at:at + 2]
    assert all(len(line) <= 80 for line in lines)


def test_analyze_by_reads_at_80_columns(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    for by in ("kind", "tool", "file", "model"):
        assert cli.main(["analyze", "--by", by, str(SAMPLES / "long-migration.jsonl")]) == 0
        assert all(len(line) <= 80 for line in capsys.readouterr().out.splitlines())

