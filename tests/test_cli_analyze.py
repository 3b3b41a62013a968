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
from tests.conftest import SAMPLES, write_agent_run
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


def test_the_rows_and_the_total_are_reconciled_alike_in_the_report_and_the_app(
        capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    """Each row's estimate is rounded down on its own and the total once: the report and the app's
    figures say by how much the rows fall short of the total, from the rows --json gives."""
    from inspector.format import rounding_words
    from inspector.tui.loading import read_session
    from inspector.tui.screens.figures import figure_rows

    path = SAMPLES / "coding-task.jsonl"
    assert cli.main(["analyze", "--json", str(path)]) == 0
    data = json.loads(capsysbinary.readouterr().out)
    rows = sum(row["estimated_tokens"] for row in data["history"])
    total = data["total_estimated_tokens"]
    assert rows < total  # the case: 36 turns, each rounded down
    words = rounding_words(total, rows)
    assert words is not None and f"{rows:,}" in words and f"({total - rows:,} more)" in words
    assert cli.main(["analyze", "--all", str(path)]) == 0
    report = " ".join(capsysbinary.readouterr().out.decode().split())
    assert " ".join(words.split()) in report
    loaded = read_session(path, threshold=0.5)
    assert any(words in how for _, _, how in figure_rows(loaded, loaded.analysis.compress_split_point))


def test_a_command_run_in_process_lets_go_of_what_it_held(capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    """``analyze`` holds the session and its analysis for the process's end (the console script then
    leaves without freeing them); ``cli.main`` in a process that goes on lets go of them."""
    from inspector.commands import analyze as command
    from inspector.commands.common import holding, release_held

    args = cli.build_parser().parse_args(["analyze", "--json", str(SAMPLES / "coding-task.jsonl")])
    assert command.run(args) == 0
    assert holding()
    release_held()
    assert not holding()
    assert cli.main(["analyze", "--json", str(SAMPLES / "coding-task.jsonl")]) == 0
    assert not holding()
    capsysbinary.readouterr()


@pytest.mark.parametrize("json_flag", [["--json"], []], ids=["json", "text"])
def test_the_console_script_writes_everything_before_it_leaves(
    capsysbinary: pytest.CaptureFixture[bytes], monkeypatch: pytest.MonkeyPatch, json_flag: list[str],
) -> None:
    """The console script leaves with os._exit after a command that held what it built: every byte the
    command wrote still reaches a pipe, and the exit code is the command's."""
    import os
    import subprocess
    import sys

    path = str(SAMPLES / "long-migration.jsonl")
    monkeypatch.setenv("COLUMNS", "100")
    assert cli.main(["analyze", *json_flag, path]) == 0
    expected = capsysbinary.readouterr().out
    done = subprocess.run([sys.executable, "-m", "inspector", "analyze", *json_flag, path], capture_output=True,
                          env={**os.environ, "COLUMNS": "100"}, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout == expected
    assert len(expected) > 1000
    bad = subprocess.run([sys.executable, "-m", "inspector", "analyze", *json_flag, str(SAMPLES)],
                         capture_output=True, check=False)
    assert bad.returncode == 2
    assert bad.stderr.count(b"\n") == 1


def test_over_the_threshold_with_nothing_before_the_split_is_not_called_below_it(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """One prompt and an agent still calling tools: the last prompt (600,000 tokens) is over half of
    the 1,048,576 limit, but Gemini CLI can split only before the prompt, so it would do nothing.
    The report says that, not "below the threshold", and compact agrees."""
    path = write_agent_run(tmp_path / "agent-run.jsonl")
    assert cli.main(["analyze", str(path)]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "below the threshold" not in out
    assert "over the threshold, but nothing comes before the split: Gemini CLI would not compress (NOOP)" in out
    assert "recorded prompt 600,000 >= threshold 524,288" in out
    assert cli.main(["analyze", "--json", str(path)]) == 0
    report = json.loads(capsys.readouterr().out)
    assert (report["context_tokens"], report["split_point"], report["would_compress"]) == (600_000, 0, False)
    assert report["verdict"] == "nothing before the split"
    assert cli.main(["compact", str(path)]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "NOOP" in out and "nothing comes before the split point" in out and "under the threshold" not in out
    # what it offers instead is what --agentic then does
    assert "--agentic splits before model turn 5 instead and summarises turns 0-4" in out
    assert cli.main(["compact", "--json", str(path)]) == 0
    assert json.loads(capsys.readouterr().out)["agentic_alternative"] == 5
    assert cli.main(["compact", "--agentic", "--json", str(path)]) == 0
    done = json.loads(capsys.readouterr().out)
    assert (done["status"], done["split_point"], done["split_kind"]) == ("COMPRESSED", 5, "agentic")


def test_a_cut_off_reply_s_zero_usage_is_not_taken_for_the_last_prompt(
    capsysbinary: pytest.CaptureFixture[bytes], tmp_path: Path
) -> None:
    """A reply cut off before its usage arrived keeps the zeros Gemini CLI wrote for it.  No request
    is empty, so the last prompt Gemini CLI measured is the one before, on every face."""
    path = tmp_path / "cut-off.json"
    zeros = dict.fromkeys(("input", "output", "cached", "thoughts", "tool", "total"), 0)
    measured = {"input": 14_522, "output": 24, "cached": 12_047, "thoughts": 458, "tool": 0, "total": 15_004}
    messages = [{"id": "u", "type": "user", "content": "please read the task file"},
                {"id": "g1", "type": "gemini", "content": "On it.", "tokens": measured},
                {"id": "g2", "type": "gemini", "content": "", "tokens": zeros,
                 "thoughts": [{"subject": "Going on", "description": "Next, the search."}]}]
    path.write_text(json.dumps({"sessionId": "s", "projectHash": "p", "messages": messages}))
    _, report = run_json(capsysbinary, str(path))
    assert report["recorded_prompt_tokens"] == 14_522
    assert cli.main(["analyze", str(path)]) == 0
    assert b"14,522 / 1,048,576 (1.4%, recorded prompt)" in capsysbinary.readouterr().out
    assert cli.main(["compact", str(path)]) == 0
    assert b"14,522 tokens (the last recorded prompt) is under the threshold" in capsysbinary.readouterr().out


def test_the_threshold_comes_from_the_settings_the_project_first(
        capsysbinary: pytest.CaptureFixture[bytes], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``model.compressionThreshold``: the project's settings win over the user's, a file without it
    (or one that does not parse) gives way to the next, and none means 0.5."""
    home, project = tmp_path / "home", tmp_path / "project"
    for folder in (home, project):
        (folder / ".gemini").mkdir(parents=True)
    monkeypatch.setenv("GEMINI_CLI_HOME", str(home))
    monkeypatch.chdir(project)
    session = str(SAMPLES / "coding-task.jsonl")
    assert run_json(capsysbinary, session)[1]["threshold"] == 0.5
    (home / ".gemini" / "settings.json").write_text('{"model": {"compressionThreshold": 0.4}}')
    assert run_json(capsysbinary, session)[1]["threshold"] == 0.4
    (project / ".gemini" / "settings.json").write_text('{"model": {"compressionThreshold": 0.3}} // ours')
    assert run_json(capsysbinary, session)[1]["threshold"] == 0.3
    (project / ".gemini" / "settings.json").write_text('{"model": {"name": "gemini-2.5-pro"}}')
    assert run_json(capsysbinary, session)[1]["threshold"] == 0.4
    (project / ".gemini" / "settings.json").write_text('{"model": ')
    assert run_json(capsysbinary, session)[1]["threshold"] == 0.4
