"""Antigravity transcripts on the command line: analyze, read only refusals, search, export, the catalog."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from inspector.antigravity.catalog import transcript_candidates
from inspector.catalog.listing import catalog
from inspector.cli import main
from scripts.make_antigravity_sample import BROKEN, sample_lines, write

LOGS = Path(".system_generated") / "logs"


@pytest.fixture(autouse=True)
def no_credentials(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("GEMINI_API_KEY", "GOOGLE_API_KEY", "GOOGLE_GENAI_USE_VERTEXAI", "GOOGLE_CLOUD_PROJECT"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("GEMINI_CLI_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    return tmp_path / "home"


@pytest.fixture
def sample(home: Path) -> Path:
    return write(home / ".gemini" / "antigravity-cli" / "brain" / "conv-cli" / LOGS / "transcript_full.jsonl")


def _one_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1, lines
    assert "Traceback" not in err
    return lines[0]


def test_analyze_json_gives_steps_checkpoints_and_warnings(sample: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["analyze", "--json", "--compaction-point", "2000", str(sample)]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["format"] == "antigravity"
    assert data["step_count"] == len(data["steps"]) == len(sample_lines()) - 1
    assert data["total_estimated_tokens"] == sum(s["tokens"] for s in data["steps"])
    assert data["warnings"] == [{"line": sample_lines().index(BROKEN) + 1,
                                 "message": data["warnings"][0]["message"]}]
    assert [c["number"] for c in data["checkpoints"]] == [1, 2]
    for checkpoint in data["checkpoints"]:
        assert {"step_index", "number", "tokens", "lost_facts", "recall", "sections"} <= set(checkpoint)
    assert data["context"]["compaction_point"] == 2000
    replaced = [s["replaced_by_checkpoint"] for s in data["steps"]]
    assert replaced[0] == 1 and replaced[-1] is None
    assert "Antigravity records no token usage" in data["token_estimate"]


def test_analyze_text_shows_each_checkpoint(sample: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["analyze", str(sample)]) == 0
    captured = capsys.readouterr()
    assert "CHECKPOINT 2" in captured.out and "lost facts" in captured.out
    assert "[User Requests]" in captured.out and "replaced by checkpoint 1" in captured.out
    assert "not JSON" in _one_line(captured.err)


def test_session_text_is_shown_literally(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = home / "transcript_full.jsonl"
    path.parent.mkdir(parents=True)
    step = {"step_index": 0, "source": "SYSTEM", "type": "CHECKPOINT", "status": "DONE",
            "content": "{{ CHECKPOINT 1 }}\n# User Requests\n1. ring \x1b]0;owned\x07 the bell"}
    path.write_text(json.dumps(step) + "\n", encoding="utf-8")
    assert main(["analyze", str(path)]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\x07" not in out


def test_empty_and_unreadable_files_exit_two_in_one_line(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    empty = home / "transcript_full.jsonl"
    empty.parent.mkdir(parents=True)
    empty.write_bytes(b"")
    assert main(["analyze", str(empty)]) == 2
    assert "empty" in _one_line(capsys.readouterr().err)
    assert main(["analyze", str(empty.parent)]) == 2  # a folder where the transcript was expected
    assert "is a folder" in _one_line(capsys.readouterr().err)
    if os.geteuid() != 0:  # (root reads any file)
        locked = write(home / "locked.jsonl")
        locked.chmod(0)
        assert main(["analyze", str(locked)]) == 2
        assert "permission denied" in _one_line(capsys.readouterr().err)


@pytest.mark.parametrize("command", [["compact", "--apply"], ["compact", "--apply", "--force", "--json"],
                                     ["revert"]])
def test_writes_are_refused_in_one_line(sample: Path, command: list[str],
                                        capsys: pytest.CaptureFixture[str]) -> None:
    before = {p: p.read_bytes() for p in sample.parent.iterdir()}
    assert main([*command, str(sample)]) == 2
    line = _one_line(capsys.readouterr().err)
    assert str(sample) in line and "never reads this file back" in line
    assert {p: p.read_bytes() for p in sample.parent.iterdir()} == before


def test_compact_without_apply_previews_the_projects_own_compaction(sample: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    before = sample.read_bytes()
    assert main(["compact", "--force", "--json", str(sample)]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["format"] == "antigravity" and data["status"] == "COMPRESSED"
    assert sample.read_bytes() == before


def test_export_accepts_a_transcript(sample: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "export.md"
    assert main(["export", str(sample), "--out", str(out)]) == 0
    text = out.read_text(encoding="utf-8")
    assert "antigravity" in text and "parse_since" in text


def test_search_finds_words_in_antigravity_conversations(sample: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["search", "--json", "parse_since"]) == 0
    hits = json.loads(capsys.readouterr().out)
    found = hits["hits"] if isinstance(hits, dict) else hits
    assert found and all(Path(h["path"]) == sample for h in found)


def test_the_catalog_lists_both_roots_marked_as_antigravity(home: Path) -> None:
    cli = write(home / ".gemini" / "antigravity-cli" / "brain" / "a1" / LOGS / "transcript_full.jsonl")
    short = write(home / ".gemini" / "antigravity-cli" / "brain" / "a1" / LOGS / "transcript.jsonl")
    app = write(home / ".gemini" / "antigravity" / "brain" / "b2" / LOGS / "transcript.jsonl")
    (home / ".gemini" / "antigravity" / "brain" / "empty").mkdir()
    assert [(c.path, c.project) for c in transcript_candidates()] == [(cli, "antigravity-cli"),
                                                                       (app, "antigravity")]
    assert short not in {c.path for c in transcript_candidates()}
    rows = catalog().entries
    assert {(e.path, e.format, e.candidate.project, e.session_id) for e in rows} == {
        (cli, "antigravity", "antigravity-cli", "a1"), (app, "antigravity", "antigravity", "b2")}
    assert {e.title for e in rows} == {"Add a CSV export to the notes app. Never change the storage format of "
                                       "existing notes."}  # the first request, without Antigravity's tags
