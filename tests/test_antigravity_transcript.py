"""Reading Antigravity transcripts: steps, skipped lines, estimates, checkpoints and what each forgot."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from inspector.antigravity.checkpoints import checkpoints, summary_sections
from inspector.antigravity.compaction_point import (
    COMPACTION_POINT_VARIABLE,
    DEFAULT_COMPACTION_POINT,
    resolve_compaction_point,
)
from inspector.antigravity.history import checker_history, command_exit
from inspector.antigravity.report import report_of
from inspector.antigravity.transcript import parse_transcript
from inspector.quality import extract
from inspector.session import SessionError, load
from inspector.session.loader import STREAM_MIN_BYTES
from inspector.tokens import estimate_tokens
from scripts.make_antigravity_sample import BROKEN, sample_lines, sample_rows, write

SHARED_FILES = {
    "alexsaab__anarchy-database-client__transcript_full.jsonl": ([0, 1, 2, 3, 4], []),
    "juglesbass__AgildoDockCpp_Wayland__transcript_full.jsonl": ([7, 8, 9, 10, 11], [2, 3, 120, 121, 532]),
}
EVERY_TYPE = {"USER_INPUT", "PLANNER_RESPONSE", "VIEW_FILE", "RUN_COMMAND", "CODE_ACTION", "GREP_SEARCH",
              "LIST_DIRECTORY", "EPHEMERAL_MESSAGE", "SYSTEM_MESSAGE", "CONVERSATION_HISTORY", "CHECKPOINT",
              "ERROR_MESSAGE", "GENERIC"}


def shared(name: str) -> Path:
    path = Path("/work/shared/antigravity-sessions") / name
    if not path.is_file():
        pytest.skip(f"{path} is absent (the real transcripts are not committed; see SOURCES.md there)")
    return path


@pytest.fixture
def sample(tmp_path: Path) -> Path:
    return write(tmp_path / "brain" / "conv-1" / ".system_generated" / "logs" / "transcript_full.jsonl")


def test_every_step_is_a_turn_with_its_source_kind_and_estimate(sample: Path) -> None:
    session = load(sample)
    assert session.format == "antigravity"
    assert session.session_id == "conv-1"
    transcript = session.transcript
    assert transcript is not None
    rows = sample_rows()
    assert len(transcript.steps) == len(rows)
    assert {s.kind for s in transcript.steps} == EVERY_TYPE
    for step, row in zip(transcript.steps, rows, strict=True):
        assert (step.step_index, step.source, step.kind) == (row["step_index"], row["source"], row["type"])
        parts = [{"text": t} for t in (row.get("content", ""), row.get("error", "")) if t]
        if row.get("thinking"):
            parts.append({"text": row["thinking"], "thought": True})
        parts += [{"functionCall": {"name": c["name"], "args": c["args"]}} for c in row.get("tool_calls", [])]
        assert step.tokens == estimate_tokens(parts)
    commands = [s for s in transcript.steps if s.kind == "RUN_COMMAND"]
    assert [command_exit(s) for s in commands] == [1, 0, 2, "background"]
    # the turns the app shows: a planner step's calls carry their answers' text
    calls = [c for m in session.messages for c in m.get("toolCalls", [])]
    assert calls and all("result" in c for c in calls)
    assert any(c["status"] == "error" and "Overwrite is not allowed" in c["result"] for c in calls)


def test_a_line_that_does_not_parse_is_named_and_skipped(sample: Path) -> None:
    session = load(sample)
    broken_line = sample_lines().index(BROKEN) + 1
    assert [(w.line, "not JSON" in w.message) for w in session.warnings] == [(broken_line, True)]
    lines = sample.read_text(encoding="utf-8").splitlines()
    lines.insert(3, json.dumps({"note": "no step here"}))
    sample.write_text("\n".join(lines) + "\n", encoding="utf-8")
    again = load(sample)
    assert [w.line for w in again.warnings] == [4, broken_line + 1]
    assert "not a step" in again.warnings[0].message


def test_a_transcript_that_begins_with_broken_lines_is_still_one(tmp_path: Path) -> None:
    path = tmp_path / "transcript.jsonl"
    path.write_text("tail of a cut line\n" + "\n".join(sample_lines()) + "\n", encoding="utf-8")
    session = load(path)
    assert session.format == "antigravity"
    assert session.warnings[0].line == 1


def test_an_empty_file_is_refused_in_one_line(tmp_path: Path) -> None:
    path = tmp_path / "transcript_full.jsonl"
    path.write_bytes(b"\n  \n")
    with pytest.raises(SessionError, match="the file is empty"):
        load(path)


def test_no_readable_step_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "transcript_full.jsonl"
    path.write_text(json.dumps({"step_index": 0, "source": "MODEL", "type": "CONVERSATION_HISTORY"})[:-1] + "\n"
                    + BROKEN + "\n", encoding="utf-8")
    with pytest.raises(SessionError):
        load(path)


def test_a_huge_first_step_is_read_whole(tmp_path: Path) -> None:
    """A first line longer than the head the format is told from (and a file read block by block)."""
    path = tmp_path / "transcript_full.jsonl"
    body = "x" * (STREAM_MIN_BYTES + 1024)
    first = {"step_index": 0, "source": "MODEL", "type": "VIEW_FILE", "status": "DONE", "content": body}
    path.write_text(json.dumps(first) + "\n" + "\n".join(sample_lines()) + "\n", encoding="utf-8")
    session = load(path)
    assert session.transcript is not None
    huge = session.transcript.steps[0]
    assert len(huge.content) == len(body)
    assert huge.tokens == len(body) // 4  # the length / 4 rule of a text over 100,000 characters
    assert len(checkpoints(session.transcript)) == 2


def test_the_checker_reads_commands_errors_paths_and_the_users_rule(sample: Path) -> None:
    transcript = parse_transcript(sample, sample.read_bytes())
    history = checker_history(transcript.steps)
    facts = {(f.kind, f.value) for f in extract(history.contents, history.statuses).facts}
    assert ("command", "`python -m pytest tests/test_export.py -q` -> failed") in facts
    assert ("command", "`python -m pytest tests/test_export.py -q` -> ok") in facts
    assert ("command", "`python -m notes.watch --serve` -> background") in facts
    assert ("path", "/home/dev/notes-app/notes/export.py (write)") in facts
    assert ("path", "/home/dev/notes-app/notes/cli.py (edit)") in facts
    assert ("path", "/home/dev/notes-app (list)") in facts
    assert ("constraint", "Never change the storage format of existing notes.") in facts
    assert any(kind == "error" and "Overwrite is not allowed" in value for kind, value in facts)
    # what Antigravity adds to a request (its metadata) and its system messages are not the user's words
    assert not any("local time" in value or "planning_mode" in value for _, value in facts)


def test_each_checkpoint_is_graded_against_the_steps_it_replaced(sample: Path) -> None:
    transcript = parse_transcript(sample, sample.read_bytes())
    first, second = checkpoints(transcript)
    assert (first.number, second.number) == (1, 2)
    assert first.replaced == (0, first.position)
    assert second.replaced == (first.position + 1, second.position)
    kept = {c.fact.value for c in first.report.checks if c.kept}
    assert "`python -m pytest tests/test_export.py -q` -> failed" in kept  # the summary says it failed, then passed
    lost = {f.value for f in second.report.lost}
    assert "`python -m pytest -q` -> failed" in lost
    assert any("parse_since" in value for value in lost)
    assert 0 < second.report.recall < first.report.recall < 1
    as_json = second.to_json()
    assert as_json["step_index"] == second.step.step_index
    assert all(fact["step_lines"] for fact in as_json["lost_facts"])
    assert second.changes is not None
    assert {s.name for s in second.changes.sections if s.status == "removed"} == {"2. User Knowledge",
                                                                                 "5. Files and Code"}


def test_summary_sections_leave_headings_in_code_alone() -> None:
    text = "{{ CHECKPOINT 3 }}\n intro\n# User Requests\n1. a\n## Files and Code:\n```sh\n# not a heading\n```\nx"
    sections = summary_sections(text)
    assert sections.names() == ["User Requests", "Files and Code"]
    assert sections.preamble == "intro"
    assert "# not a heading" in sections.lines("Files and Code")


def test_the_gauge_is_drawn_against_the_compaction_point(sample: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    transcript = parse_transcript(sample, sample.read_bytes())
    monkeypatch.delenv(COMPACTION_POINT_VARIABLE, raising=False)
    assert resolve_compaction_point() == DEFAULT_COMPACTION_POINT
    monkeypatch.setenv(COMPACTION_POINT_VARIABLE, "1,000")
    report = report_of(transcript, resolve_compaction_point())
    last = transcript.steps.index(next(s for s in reversed(transcript.steps) if s.kind == "CHECKPOINT"))
    assert report.gauge.tokens == sum(s.tokens for s in transcript.steps[last:])
    assert report.gauge.compaction_point == 1000
    assert resolve_compaction_point(5) == 5
    monkeypatch.setenv(COMPACTION_POINT_VARIABLE, "lots")
    assert resolve_compaction_point() == DEFAULT_COMPACTION_POINT


@pytest.mark.parametrize("name", sorted(SHARED_FILES))
def test_the_shared_transcripts(name: str) -> None:
    path = shared(name)
    numbers, skipped = SHARED_FILES[name]
    session = load(path)
    assert session.transcript is not None
    assert [w.line for w in session.warnings] == skipped
    report = report_of(session.transcript)
    assert [c.number for c in report.checkpoints] == numbers
    for checkpoint in report.checkpoints:
        assert checkpoint.report.total > 0
        assert 0 <= checkpoint.report.recall <= 1
        assert checkpoint.summary.get("User Requests") is not None
    assert any(c.report.lost for c in report.checkpoints)
    data = report.to_json()
    assert data["step_count"] == len(session.transcript.steps) == len(data["steps"])
