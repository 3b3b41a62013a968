"""The numbers of the tool outputs an apply saves: after those already in the project's ``tool-outputs/``.

Gemini CLI numbers the outputs its budget saves from 1 in every process and
overwrites whatever holds the name.  A compaction numbers them after the
highest number a name in the folder holds, so two sessions of one project
never name each other's files; ``analyze`` still shows Gemini CLI's own
numbering, and with an empty folder the two are the same.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from inspector.analysis import analyze
from inspector.compaction.budget import TOOL_OUTPUTS_DIR, output_file_name
from inspector.compaction.compress import CompressionResult, CompressOptions, compress
from inspector.compaction.request import CompactionContext, CompactionRequest, compaction_context, next_truncation_id
from inspector.compaction.strategies import run_request
from inspector.compaction.summarisers.offline import OfflineSummariser
from inspector.session import history, load
from inspector.store import StoreError, apply_compaction, read_history

BIG = 240_000  # characters: over the 50,000-token budget by itself, so it is cut to an excerpt


def _session(folder: Path, older_output: str) -> Path:
    """A recording with two tool results: ``older_output`` (read_file), then a big one (run_shell_command)."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "session-2026-01-01T00-00-abcd1234.jsonl"

    def call(ident: str, name: str, result: str) -> dict[str, Any]:
        return {"id": ident, "name": name, "args": {}, "result": result, "status": "success", "timestamp": "t"}

    records = [
        {"sessionId": "s1", "projectHash": "p1", "startTime": "t", "lastUpdated": "t", "kind": "main"},
        {"id": "u1", "timestamp": "t", "type": "user", "content": [{"text": "read the notes"}]},
        {"id": "g1", "timestamp": "t", "type": "gemini", "content": "Reading.", "model": "gemini-2.5-pro",
         "toolCalls": [call("c1", "read_file", older_output)]},
        {"id": "g1b", "timestamp": "t", "type": "gemini", "content": "Read them.", "model": "gemini-2.5-pro"},
        {"id": "u2", "timestamp": "t", "type": "user", "content": [{"text": "now run the build"}]},
        {"id": "g2", "timestamp": "t", "type": "gemini", "content": "Running.", "model": "gemini-2.5-pro",
         "toolCalls": [call("c2", "run_shell_command", "build log line\n" * (BIG // 15))]},
        {"id": "g3", "timestamp": "t", "type": "gemini", "content": "Done.", "model": "gemini-2.5-pro"},
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def _number(name: str) -> int:
    return int(Path(name).stem.rsplit("_", 1)[-1])


@pytest.mark.parametrize("tool", ["read_file", "", "1", "12", "a_1", "mcp__server__tool-2", "ツール", "Run Shell"])
@pytest.mark.parametrize("seq", [1, 7, 12, 120])
def test_the_next_number_follows_any_name_the_budget_gives(tool: str, seq: int, tmp_path: Path) -> None:
    """Whatever the tool's name, a folder holding the ``seq``-th output's file continues after ``seq``."""
    (tmp_path / output_file_name(tool, seq)).write_text("saved")
    assert next_truncation_id(tmp_path) == seq + 1


def test_the_next_number_reads_only_saved_output_names(tmp_path: Path) -> None:
    assert next_truncation_id(tmp_path / "missing") == 1
    assert next_truncation_id(tmp_path) == 1
    (tmp_path / "notes.txt").write_text("not a numbered output")
    (tmp_path / "read_file_40.txt.bak").write_text("not a .txt name")
    (tmp_path / ".read_file_41.txt.si-tmp123-abcd").write_text("a temporary file")
    (tmp_path / "session-99").mkdir()  # Gemini CLI's per-session folder: its files cannot collide with ours
    (tmp_path / "session-99" / "read_file_77.txt").write_text("inside a subfolder")
    assert next_truncation_id(tmp_path) == 1
    (tmp_path / "read_file_3.txt").write_text("x")
    (tmp_path / "GREP_SEARCH_11.TXT").write_text("x")  # a case-insensitive file system would take it for ours
    (tmp_path / "5.txt").write_text("x")
    assert next_truncation_id(tmp_path) == 12
    file = tmp_path / "a-file"
    file.write_text("x")
    assert next_truncation_id(file) == 1  # not a folder: nothing there to follow


def _context_and_contents(path: Path) -> tuple[CompactionContext, list[dict[str, Any]]]:
    session = load(path)
    analysis = analyze(session)
    context = compaction_context(session, analysis)
    return context, list(context.reader.read().contents)


def _compress(context: CompactionContext, contents: list[dict[str, Any]], first: int, *, reuse: bool
              ) -> CompressionResult:
    return asyncio.run(compress(contents, OfflineSummariser(), CompressOptions(
        model=context.model, force=True, threshold=context.threshold,
        recorded_prompt_tokens=context.recorded_prompt_tokens, environment=context.environment,
        temp_dir=context.temp_dir, first_truncation_id=first, planned=context.planned if reuse else None
    )))


def _cut_names(result: CompressionResult) -> list[tuple[int, int, str, str]]:
    return [(t.turn, t.part, t.output_file, t.excerpt) for t in result.truncations]


def _largest(predicate: Callable[[int], bool], low: int, high: int) -> int:
    """The largest value in ``low..high`` where the monotone ``predicate`` is still false."""
    assert not predicate(low) and predicate(high)
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (low, middle) if predicate(middle) else (middle, high)
    return low


def test_a_longer_number_can_move_the_split_as_planned_from_scratch(tmp_path: Path) -> None:
    """The excerpt naming a file is part of the weight the split divides: a longer number can move the
    reference's split, and the figures ``analyze`` measured, numbered again, move it as planning does."""
    chats = tmp_path / "project" / "chats"

    def split_later(length: int) -> bool:  # with Gemini CLI's numbering, the older part is too light
        analysis = analyze(load(_session(chats, "n" * length)))
        return analysis.compress_split_point == len(analysis.turns)

    context, contents = _context_and_contents(_session(chats, "n" * (_largest(
        lambda length: not split_later(length), 0, 150_000) + 1)))
    splits: dict[int, int | None] = {}
    for first in (1, 10, 100, 1_000):
        planned = _compress(context, contents, first, reuse=True)
        scratch = _compress(context, contents, first, reuse=False)
        assert _cut_names(planned) == _cut_names(scratch), first
        assert planned.split_point == scratch.split_point and planned.new_history == scratch.new_history
        splits[first] = planned.split_point
    assert len(set(splits.values())) == 2, splits


def test_numbered_after_the_folder_with_what_analyze_measured_as_planned_from_scratch(tmp_path: Path) -> None:
    """A longer number makes the excerpt that names it longer, which can change what the budget cuts
    next; what ``analyze`` measured, numbered again, gives what planning from nothing gives."""
    chats = tmp_path / "project" / "chats"

    def older_cut(length: int) -> bool:  # Gemini CLI's numbering (from 1): is the older output cut too?
        analysis = analyze(load(_session(chats, "n" * length)))
        return any(t.tool == "read_file" for t in analysis.truncations)

    # the largest older output that still fits beside the big one's excerpt
    context, contents = _context_and_contents(_session(chats, "n" * _largest(older_cut, 0, 4 * 50_000)))
    assert context.first_truncation_id == 1  # no folder yet

    older_cut_from: dict[int, bool] = {}
    for first in (1, 10, 100, 1_000, 10_000):
        planned = _compress(context, contents, first, reuse=True)
        scratch = _compress(context, contents, first, reuse=False)
        assert _cut_names(planned) == _cut_names(scratch), first
        assert (planned.split_point, planned.new_token_count) == (scratch.split_point, scratch.new_token_count)
        assert planned.new_history == scratch.new_history
        newest = planned.truncations[0]
        assert newest.tool == "run_shell_command" and _number(newest.output_file) == first
        assert newest.output_file in newest.excerpt
        older_cut_from[first] = any(t.tool == "read_file" for t in planned.truncations)
    assert not older_cut_from[1] and any(older_cut_from.values()), "a longer name changed what is cut"


def test_a_compaction_numbers_after_the_files_in_tool_outputs(tmp_path: Path) -> None:
    path = _session(tmp_path / "project" / "chats", "a short file")
    folder = tmp_path / "project" / TOOL_OUTPUTS_DIR
    session = load(path)
    analysis = analyze(session)
    request = CompactionRequest(force=True)

    context = compaction_context(session, analysis)
    empty = asyncio.run(run_request(request, context, analysis.turns, OfflineSummariser()))
    # an empty folder: Gemini CLI's own numbering, as analyze shows it
    assert [t.output_file for t in empty.truncations] == [t.output_file for t in analysis.truncations]
    assert [_number(t.output_file) for t in empty.truncations] == [1]

    folder.mkdir()
    (folder / "grep_search_4.txt").write_text("another session's output")
    (folder / "read_file_2.txt").write_text("another session's output")
    context = compaction_context(session, analysis)
    assert context.first_truncation_id == 5
    numbered = asyncio.run(run_request(request, context, analysis.turns, OfflineSummariser()))
    assert [_number(t.output_file) for t in numbered.truncations] == [5]
    assert [Path(t.output_file).parent for t in numbered.truncations] == [folder]
    assert [t.output_file for t in analysis.truncations] == [t.output_file for t in empty.truncations]
    assert _cut_names(numbered) == _cut_names(_compress(context, list(context.reader.read().contents), 5,
                                                        reuse=False))


def test_a_name_taken_after_the_preview_is_refused_then_a_new_preview_applies(tmp_path: Path) -> None:
    """Between preview and apply another session's apply may take the name: the store refuses and
    overwrites nothing; previewing again numbers after it."""
    path = _session(tmp_path / "project" / "chats", "a short file")
    original = path.read_bytes()
    session = load(path)
    analysis = analyze(session)
    context = compaction_context(session, analysis)
    preview = asyncio.run(run_request(CompactionRequest(force=True), context, analysis.turns, OfflineSummariser()))
    [cut] = preview.truncations
    taken = Path(cut.output_file)
    taken.parent.mkdir(parents=True)
    taken.write_text("written by another session's apply meanwhile")

    with pytest.raises(StoreError, match="preview again") as refused:
        apply_compaction(session, analysis.turns, preview)
    assert str(taken) in str(refused.value)
    assert taken.read_text() == "written by another session's apply meanwhile"
    assert path.read_bytes() == original and not read_history(path).entries

    session = load(path)
    analysis = analyze(session)
    context = compaction_context(session, analysis)
    again = asyncio.run(run_request(CompactionRequest(force=True), context, analysis.turns, OfflineSummariser()))
    entry = apply_compaction(session, history(session), again)
    [saved] = entry.outputs_new
    assert _number(saved) == _number(str(taken)) + 1
    assert Path(saved).read_text() == cut.full_text and taken.read_text().startswith("written by another")


def test_the_numbering_is_the_contexts(tmp_path: Path) -> None:
    """``run_request`` numbers from the context's first number (the value a face may also show)."""
    path = _session(tmp_path / "project" / "chats", "a short file")
    session = load(path)
    analysis = analyze(session)
    context = replace(compaction_context(session, analysis), first_truncation_id=123)
    result = asyncio.run(run_request(CompactionRequest(force=True), context, analysis.turns, OfflineSummariser()))
    assert [_number(t.output_file) for t in result.truncations] == [123]


def test_a_name_taken_while_applying_leaves_none_of_the_apply_s_outputs(tmp_path: Path) -> None:
    """The second of two outputs is taken after the store checked the names: the first, already written,
    goes again with the refused apply."""
    path = _session(tmp_path / "project" / "chats", "n" * BIG)
    original = path.read_bytes()
    session = load(path)
    analysis = analyze(session)
    context = compaction_context(session, analysis)
    preview = asyncio.run(run_request(CompactionRequest(force=True), context, analysis.turns, OfflineSummariser()))
    first, second = (Path(t.output_file) for t in preview.truncations)

    def meanwhile(stage: str) -> None:
        if stage == "journalled":
            second.parent.mkdir(parents=True, exist_ok=True)
            second.write_text("another session's output")

    with pytest.raises(StoreError, match="appeared with different content while applying; preview again"):
        apply_compaction(session, analysis.turns, preview, hook=meanwhile)
    assert not first.exists(), "the output written before the conflict was removed"
    assert second.read_text() == "another session's output"
    assert path.read_bytes() == original
