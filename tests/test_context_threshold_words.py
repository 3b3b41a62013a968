"""The share of the window and the threshold, as percentages, agree with the token figures beside
them and with each other, in ``analyze`` and in the app's header alike: a prompt one token under the
threshold never reads "50.0%" beside "below the threshold", and a threshold of 0.0316 is "3.16% of
1,048,576" beside its 33,136 tokens, never "3.2%" (which would be 33,554)."""

from __future__ import annotations

import asyncio
import math
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from inspector import cli
from inspector.analysis import analyze
from inspector.context import ContextFigures
from inspector.session import load
from inspector.tui.app import InspectorApp
from inspector.tui.widgets.context_header import ContextHeader
from tests.snapshot_app import copy_sample, settle

SHARE = re.compile(r"\(([\d.]+)%[,)]")
THRESHOLD = re.compile(r"threshold ([\d,]+) \(([\d.]+)% of ([\d,]+)\)")


async def header_line(path: Path, threshold: float) -> str:
    app = InspectorApp(path, threshold=threshold, live=False)
    async with app.run_test(size=(200, 50)) as pilot:
        await settle(pilot)
        return str(app.screen.query_one(ContextHeader).render()).splitlines()[1]


def thresholds(path: Path) -> list[float]:
    """Round ones, and those that put the recorded prompt one token either side of the line."""
    context = analyze(load(path), threshold=0.5).context
    prompt, limit = context.deciding_tokens, context.token_limit
    return [0.5, 0.0316, 0.07, prompt / limit, (prompt + 1) / limit, (prompt - 0.5) / limit]


@pytest.mark.parametrize("name", ["coding-task.jsonl", "long-migration.jsonl"])
def test_percentages_agree_with_the_figures_and_each_other(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], name: str) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    path = copy_sample(tmp_path, name)
    for threshold in thresholds(path):
        context = analyze(load(path), threshold=threshold).context
        assert cli.main(["analyze", "--threshold", repr(threshold), str(path)]) == 0
        report = capsys.readouterr().out.splitlines()
        header = asyncio.run(header_line(path, threshold))
        for line, said in ((report[1] + " " + report[2], report[1]), (header, header)):
            share = float(SHARE.search(line).group(1))  # type: ignore[union-attr]
            found = THRESHOLD.search(line)
            assert found is not None, line
            tokens, percent, limit = int(found[1].replace(",", "")), float(found[2]), int(found[3].replace(",", ""))
            assert tokens == context.threshold_tokens and limit == context.token_limit
            assert math.isclose(percent / 100 * limit, threshold * limit, abs_tol=limit * 1e-5), (line, threshold)
            assert (share >= percent) == context.over_threshold, (line, threshold)
            assert ("below" in said) == (not context.over_threshold), said
        assert SHARE.search(report[1])[1] == SHARE.search(header)[1]  # type: ignore[index]


@settings(max_examples=2_000, deadline=None)
@given(limit=st.sampled_from([1_048_576, 256_000, 1_000, 12_345]),
       threshold=st.one_of(st.floats(0.001, 1.0), st.integers(1, 10_000).map(lambda n: n / 10_000)),
       offset=st.integers(-2, 2), anywhere=st.booleans(), seed=st.integers(0, 10**7))
def test_the_shown_share_is_on_the_side_of_the_shown_threshold(limit: int, threshold: float, offset: int,
                                                                anywhere: bool, seed: int) -> None:
    """Every deciding figure, near the threshold or not: the two percentages as written compare as the
    figures do (``over_threshold``)."""
    deciding = seed % (2 * limit) if anywhere else max(0, math.ceil(threshold * limit) + offset)
    context = ContextFigures(deciding, deciding, limit, threshold)
    shown = float(context.share_percent.rstrip("%"))
    line = float(context.threshold_percent.rstrip("%"))
    assert (shown >= line) == context.over_threshold, (context.share_percent, context.threshold_percent)
    assert math.isclose(line, threshold * 100, rel_tol=1e-9)
