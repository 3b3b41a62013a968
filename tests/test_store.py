"""Apply and revert on real files: every sample session, every format."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from inspector.analysis import analyze
from inspector.compaction.budget import apply_budget
from inspector.session import history, load
from inspector.session.history import Turn
from inspector.store import (
    JournalInfo,
    StoreError,
    apply_history,
    read_history,
    revert,
    store_dir,
    undoable,
)
from inspector.store.records import same

REPO = Path(__file__).resolve().parents[1]
SAMPLE_FOLDERS = (REPO / "sample_sessions", REPO.parent / "shared" / "gemini-cli-sessions")
SNAPSHOT = "<state_snapshot>\n  <overall_goal>keep going</overall_goal>\n</state_snapshot>"
ACK = "Got it. Thanks for the additional context!"


def sample_paths() -> list[Path]:
    found = [
        p for folder in SAMPLE_FOLDERS if folder.is_dir()
        for p in sorted(folder.iterdir()) if p.is_file() and p.suffix in (".json", ".jsonl")
    ]
    return found


def copy_session(source: Path, folder: Path) -> Path:
    target = folder / source.name
    shutil.copyfile(source, target)
    return target


def compacted(turns: list[Turn], split: int) -> tuple[list[dict[str, Any]], list[Turn | None]]:
    """[snapshot, ack, ...turns[split:]] and where each turn came from."""
    new = [{"role": "user", "parts": [{"text": SNAPSHOT}]}, {"role": "model", "parts": [{"text": ACK}]}]
    new += [t.content for t in turns[split:]]
    return new, [None, None, *turns[split:]]


def contents(path: Path) -> list[dict[str, Any]]:
    return [t.content for t in history(load(path))]


PATHS = sample_paths()
if not PATHS:
    pytest.skip("no sample sessions found (sample_sessions/ or ../shared/gemini-cli-sessions/)",
                allow_module_level=True)


@pytest.mark.parametrize("source", PATHS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_apply_then_revert_is_byte_identical(source: Path, tmp_path: Path) -> None:
    path = copy_session(source, tmp_path)
    original = path.read_bytes()
    session = load(path)
    turns = history(session)
    split = analyze(session).split_point
    new, sources = compacted(turns, split)

    entry = apply_history(session, turns, new, sources, journal=JournalInfo(split_point=split))

    assert entry.state == "applied"
    assert same(contents(path), new), "the project's loader reads the applied file back as the new history"
    assert entry.size_before == len(original)
    assert entry.sha256_after == hashlib.sha256(path.read_bytes()).hexdigest()
    if session.format == "jsonl":
        assert path.read_bytes().startswith(original), "JSONL is only appended to"
    backup = store_dir(path) / "backups" / entry.backup
    assert backup.read_bytes() == original
    assert [e.id for e in undoable(path)] == [entry.id]

    [result] = revert(path)

    assert path.read_bytes() == original
    assert result.sha256 == hashlib.sha256(original).hexdigest()
    assert undoable(path) == []
    assert read_history(path).entries[0].state == "reverted"


def sample_copy(tmp_path: Path, name: str) -> Path:
    """A copy of the sample (or shared) session called ``name`` in ``tmp_path``; skips when it is absent."""
    matches = [p for p in PATHS if p.name == name]
    if not matches:
        pytest.skip(f"sample {name} not present")
    tmp_path.mkdir(parents=True, exist_ok=True)
    return copy_session(matches[0], tmp_path)


def test_kept_records_keep_their_fields(tmp_path: Path) -> None:
    path = sample_copy(tmp_path, "coding-task.jsonl")
    session = load(path)
    turns = history(session)
    split = analyze(session).split_point
    new, sources = compacted(turns, split)
    entry = apply_history(session, turns, new, sources)
    after = load(path)
    kept_ids = {t.record_id for t in turns[split:]}
    before_by_id = {m["id"]: m for m in session.messages}
    for record in after.messages:
        if record["id"] in kept_ids:
            assert record == before_by_id[record["id"]], "a kept record is written as it was"
    assert entry.records_reused == len({t.message_index for t in turns[split:]})
    assert entry.records_created == 2
    # the environment context leads the checkpoint, as Gemini CLI writes it
    assert after.messages[0] == session.messages[0]
    assert "<session_context>" in json.dumps(after.messages[0])


def test_jsonl_apply_appends_what_gemini_cli_appends(tmp_path: Path) -> None:
    path = sample_copy(tmp_path, "gemini-cli-0.61-compress.jsonl")
    original = path.read_bytes()
    session = load(path)
    turns = history(session)
    new, sources = compacted(turns, 2)
    apply_history(session, turns, new, sources)
    added = path.read_bytes()[len(original):].decode().splitlines()
    first, second = (json.loads(line) for line in added)
    assert first == {"$set": {"sessionId": session.session_id}}
    assert list(second["$set"]) == ["messages", "lastUpdated"]
    assert second["$set"]["messages"][0]["id"] == session.messages[0]["id"]


def test_budget_truncated_tool_result_rewrites_the_record(tmp_path: Path) -> None:
    """A kept model record whose tool output the budget cut keeps its record, result rewritten."""
    path = tmp_path / "session-2026-01-01T00-00-abcd1234.jsonl"
    big = "line of output\n" * 20_000
    records = [
        {"sessionId": "s1", "projectHash": "p1", "startTime": "t", "lastUpdated": "t", "kind": "main"},
        {"id": "u1", "timestamp": "t", "type": "user", "content": [{"text": "old question"}]},
        {"id": "g1", "timestamp": "t", "type": "gemini", "content": "old answer", "model": "gemini-2.5-pro"},
        {"id": "u2", "timestamp": "t", "type": "user", "content": [{"text": "read the log"}]},
        {"id": "g2", "timestamp": "t", "type": "gemini", "content": "Reading.", "model": "gemini-2.5-pro",
         "tokens": {"input": 10, "output": 2, "cached": 0, "total": 12},
         "thoughts": [{"subject": "Plan", "description": "read it", "timestamp": "t"}],
         "toolCalls": [{"id": "c1", "name": "read_file", "args": {"path": "a.log"}, "result": big,
                        "status": "success", "timestamp": "t", "resultDisplay": "shown"}]},
        {"id": "g3", "timestamp": "t", "type": "gemini", "content": "Done.", "model": "gemini-2.5-pro"},
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    session = load(path)
    turns = history(session)
    output = tmp_path / "tool-outputs" / "read_file_1.txt"
    truncated, truncations = apply_budget([t.content for t in turns], lambda tool, seq: str(output), 1000, 100)
    assert truncations and truncations[0].turn == 4
    split = 2
    new = [{"role": "user", "parts": [{"text": SNAPSHOT}]}, {"role": "model", "parts": [{"text": ACK}]},
           *truncated[split:]]
    sources = [None, None, *turns[split:]]

    entry = apply_history(session, turns, new, sources, truncations=truncations)

    assert output.read_text() == big, "the full output is saved before the session refers to it"
    assert same(contents(path), new)
    record = {m["id"]: m for m in load(path).messages}["g2"]
    assert record["tokens"] == records[4]["tokens"] and record["thoughts"] == records[4]["thoughts"]
    call = record["toolCalls"][0]
    assert call["resultDisplay"] == "shown" and call["status"] == "success"
    assert call["result"].startswith("Output too large.") and str(output) in call["result"]
    assert entry.records_adapted == 1 and entry.output_files == (str(output),)


def test_output_file_with_other_content_refuses_before_writing(tmp_path: Path) -> None:
    path = sample_copy(tmp_path, "coding-task.jsonl")
    original = path.read_bytes()
    session = load(path)
    turns = history(session)
    new, sources = compacted(turns, analyze(session).split_point)
    existing = tmp_path / "out.txt"
    existing.write_text("someone else's file")

    class Cut:
        output_file = str(existing)
        full_text = "the whole output"

    with pytest.raises(StoreError, match="already exists with different content"):
        apply_history(session, turns, new, sources, truncations=[Cut()])
    assert path.read_bytes() == original
    assert existing.read_text() == "someone else's file"
    assert not list((store_dir(path) / "backups").iterdir())


def test_refuses_a_history_the_records_cannot_say(tmp_path: Path) -> None:
    path = sample_copy(tmp_path, "legacy-pomodoro.json")
    original = path.read_bytes()
    session = load(path)
    turns = history(session)
    new = [{"role": "user", "parts": [{"text": "/help looks like a command and would be skipped"}]}]
    with pytest.raises(StoreError, match=r"refusing to write: .*turn"):
        apply_history(session, turns, new, [None])
    assert path.read_bytes() == original
    assert read_history(path).entries == []


def test_stale_preview_when_the_file_grew(tmp_path: Path) -> None:
    path = sample_copy(tmp_path, "gemini-cli-0.61-three-prompts.jsonl")
    session = load(path)
    turns = history(session)
    new, sources = compacted(turns, 2)
    line = {"id": "late-1", "timestamp": "t", "type": "user", "content": [{"text": "one more thing"}]}
    with path.open("a") as handle:
        handle.write(json.dumps(line) + "\n")
    grown = path.read_bytes()
    with pytest.raises(StoreError, match=r"preview is stale: .*appended") as caught:
        apply_history(session, turns, new, sources)
    assert caught.value.reason == "stale"
    assert path.read_bytes() == grown

    entry = apply_history(session, turns, new, sources, allow_grown=True)
    after = contents(path)
    assert same(after, [*new, {"role": "user", "parts": [{"text": "one more thing"}]}])
    revert(path)
    assert path.read_bytes() == grown
    assert entry.state == "applied"


def test_changed_file_refuses(tmp_path: Path) -> None:
    path = sample_copy(tmp_path, "legacy-pomodoro.json")
    session = load(path)
    turns = history(session)
    new, sources = compacted(turns, 2)
    path.write_bytes(path.read_bytes().replace(b"pomodoro", b"Pomodoro", 1))
    changed = path.read_bytes()
    with pytest.raises(StoreError, match="changed on disk since the preview") as caught:
        apply_history(session, turns, new, sources)
    assert caught.value.reason == "changed" and path.read_bytes() == changed


def test_checkpoint_keeps_its_wrapper_and_layout(tmp_path: Path) -> None:
    for name in ("checkpoint-rate-limit.json", "checkpoint-bare-array.json"):
        path = sample_copy(tmp_path, name)
        original = path.read_bytes()
        session = load(path)
        turns = history(session)
        apply_history(session, turns, [t.content for t in turns], list(turns))
        assert path.read_bytes() == original, f"{name}: an unchanged history writes the same bytes"
        new, sources = compacted(turns, 2)
        apply_history(load(path), turns, new, sources)
        doc = json.loads(path.read_bytes())
        if session.bare_checkpoint:
            assert isinstance(doc, list)
        else:
            assert list(doc) == list(json.loads(original)) and doc["history"] == new
        assert path.read_text().startswith("{\n  \"" if not session.bare_checkpoint else "[\n  {")


def test_legacy_keeps_metadata_and_pretty_layout(tmp_path: Path) -> None:
    path = tmp_path / "session-2025-01-01T00-00-00000000.json"
    doc = {"sessionId": "s", "projectHash": "p", "startTime": "a", "lastUpdated": "b",
           "messages": [{"id": "1", "timestamp": "t", "type": "user", "content": "héllo 🎉"},
                        {"id": "2", "timestamp": "t", "type": "gemini", "content": "hi", "extra": [1.5, 2]}],
           "summary": "kept"}
    path.write_text(json.dumps(doc, indent=2, ensure_ascii=False))
    session = load(path)
    turns = history(session)
    apply_history(session, turns, [t.content for t in turns], list(turns))
    written = json.loads(path.read_text())
    assert written == {**doc, "lastUpdated": written["lastUpdated"]}
    assert path.read_text() == json.dumps(written, indent=2, ensure_ascii=False)
    assert written["lastUpdated"] != "b"


def test_jsonl_without_final_newline(tmp_path: Path) -> None:
    path = sample_copy(tmp_path, "gemini-cli-0.61-three-prompts.jsonl")
    path.write_bytes(path.read_bytes().rstrip(b"\n"))
    original = path.read_bytes()
    session = load(path)
    turns = history(session)
    new, sources = compacted(turns, 2)
    apply_history(session, turns, new, sources)
    assert same(contents(path), new)
    revert(path)
    assert path.read_bytes() == original


def test_two_applies_revert_in_steps(tmp_path: Path) -> None:
    path = sample_copy(tmp_path, "coding-task.jsonl")
    original = path.read_bytes()
    session = load(path)
    turns = history(session)
    new, sources = compacted(turns, analyze(session).split_point)
    apply_history(session, turns, new, sources)
    middle = path.read_bytes()
    second = load(path)
    turns2 = history(second)
    new2, sources2 = compacted(turns2, 2)
    apply_history(second, turns2, new2, sources2)
    assert len(undoable(path)) == 2
    revert(path)
    assert path.read_bytes() == middle
    apply_history(load(path), turns2, new2, sources2)
    revert(path, steps=2)
    assert path.read_bytes() == original
    states = [e.state for e in read_history(path).entries]
    assert states == ["reverted", "reverted", "reverted"]


def test_preview_state(tmp_path: Path) -> None:
    from inspector.store import preview_state

    path = sample_copy(tmp_path, "gemini-cli-0.61-three-prompts.jsonl")
    session = load(path)
    assert preview_state(session) == "same"
    with path.open("ab") as handle:
        handle.write(b'{"$set":{"lastUpdated":"x"}}\n')
    assert preview_state(session) == "grown"
    path.write_bytes(b"x" + path.read_bytes())
    assert preview_state(session) == "changed"
    path.unlink()
    assert preview_state(session) == "changed"


def test_symlinked_session_keeps_its_link(tmp_path: Path) -> None:
    real = sample_copy(tmp_path, "legacy-pomodoro.json")
    original = real.read_bytes()
    link = tmp_path / "link.json"
    link.symlink_to(real)
    session = load(link)
    turns = history(session)
    new, sources = compacted(turns, 2)
    apply_history(session, turns, new, sources)
    assert link.is_symlink() and same(contents(real), new)
    revert(link)
    assert link.is_symlink() and real.read_bytes() == original


def test_a_number_past_the_doubles_in_a_tool_call_applies_and_reverts(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # Gemini CLI reads 1e400 written as an integer as Infinity and writes it back as null; the file
    # resumes, so it must apply.  The read-back check used to fail on it with an OverflowError.
    from inspector.cli import main

    path = copy_session(REPO / "sample_sessions" / "long-migration.jsonl", tmp_path)
    lines = path.read_text(encoding="utf-8").splitlines()
    with_calls = [i for i, line in enumerate(lines) if '"toolCalls"' in line]
    for i in (with_calls[0], with_calls[-1]):  # one summarised, one kept
        record = json.loads(lines[i])
        record["toolCalls"][0]["args"]["limit"] = 10**400
        record["toolCalls"][0]["args"]["offset"] = -(10**309)
        lines[i] = json.dumps(record)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    before = path.read_bytes()
    figures = analyze(load(path))  # the latest split that keeps the last call
    last_call = max(t.index for t in figures.turns if t.record_id == json.loads(lines[with_calls[-1]])["id"])
    split = max(c for c in [*figures.candidates, *figures.agentic_candidates] if 0 < c <= last_call)
    assert main(["compact", "--provider", "offline", "--split", str(split), "--apply", str(path)]) == 0, \
        capsys.readouterr().err
    assert path.read_bytes() != before
    kept = [part["functionCall"]["args"]["limit"] for turn in contents(path) for part in turn["parts"]
            if "limit" in part.get("functionCall", {}).get("args", {})]
    # the kept call's argument, written as Gemini CLI writes it (null); the summarised one is gone
    assert kept == [None]
    assert main(["revert", str(path)]) == 0
    assert path.read_bytes() == before
