"""``session-inspector analyze`` end to end: the figures are the reference's."""

from __future__ import annotations

import json
from pathlib import Path

import orjson
import pytest

from inspector import cli
from inspector.analysis import analyze
from inspector.commands.analyze import json_report
from inspector.session import load
from tests.conftest import SAMPLES
from tests.reference.client import RefServer

JSONL_SAMPLES = sorted(SAMPLES.glob("*.jsonl"))


def run_json(capsys: pytest.CaptureFixture[bytes], *args: str) -> tuple[bytes, dict]:
    assert cli.main(["analyze", "--json", *args]) == 0
    out = capsys.readouterr().out
    return out, json.loads(out)


@pytest.mark.differential
@pytest.mark.parametrize("path", JSONL_SAMPLES, ids=[p.name for p in JSONL_SAMPLES])
def test_json_figures_are_the_references(
    reference: RefServer, capsysbinary: pytest.CaptureFixture[bytes], path: Path
) -> None:
    raw, report = run_json(capsysbinary, str(path))
    figures = reference.call("load", path=str(path), measure=True)["figures"]
    assert [row["estimated_tokens"] for row in report["history"]] == [t["tokens"] for t in figures["turns"]]
    assert [row["json_chars"] for row in report["history"]] == [t["json_len"] for t in figures["turns"]]
    assert report["total_estimated_tokens"] == figures["total"]
    assert report["split_point"] == figures["split"]
    # streamed while written, yet the same bytes as one orjson.dumps of the whole object
    session = load(path)
    whole = json_report(session, analyze(session))
    assert raw == orjson.dumps(whole, option=orjson.OPT_INDENT_2) + b"\n"


def test_model_and_threshold_options(capsysbinary: pytest.CaptureFixture[bytes], tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    usage = {"input": 2**70, "output": 1}  # beyond 64 bits: the writer falls back, the value survives
    records = [{"sessionId": "s", "projectHash": "p"}, {"id": "u", "type": "user", "content": "hi"},
               {"id": "g", "type": "gemini", "content": "yo", "tokens": usage}]
    path.write_text("\n".join(json.dumps(r) for r in records) + "\n")
    _, report = run_json(capsysbinary, str(path), "--model", "gemma-4-31b-it", "--threshold", "0.3")
    assert report["token_limit"] == 256_000
    assert report["threshold"] == 0.3
    assert report["history"][1]["recorded"] == usage
    assert report["recorded_prompt_tokens"] == 2**70


def test_text_report(capsys: pytest.CaptureFixture[str]) -> None:
    path = JSONL_SAMPLES[0]
    assert cli.main(["analyze", str(path)]) == 0
    out = capsys.readouterr().out
    result = analyze(load(path))
    assert path.name in out
    assert f"turns: {len(result.turns)}" in out
    assert f"split: {result.split_point} (reference)" in out
