"""The tail read (``session.tail``): the newest turns of a recording, each with the figures the whole
read gives the same turn, and nothing it cannot know."""

from __future__ import annotations

import json
import os
import random
from pathlib import Path
from typing import Any

import pytest

from inspector.analysis import Analysis, analyze
from inspector.session.loader import load, open_session_file
from inspector.session.tail import TailRead, read_tail

LIMIT = 16_384  # a small tail, so that the files stay small


def meta() -> dict[str, Any]:
    return {"sessionId": "tail-test", "projectHash": "p" * 64, "startTime": "t", "lastUpdated": "t"}


def records(count: int, seed: int) -> list[dict[str, Any]]:
    """Prompts and answers: thoughts, tool calls with results, usage, non-ASCII text, messages written
    again under the same id (Gemini CLI's way when usage or results arrive), info records, commands."""
    rng = random.Random(seed)
    out: list[dict[str, Any]] = []
    for n in range(count):
        vocabulary = ["alpha", "beta", "gamma", "δέλτα", "🙂", "x" * 30]
        words = " ".join(rng.choice(vocabulary) for _ in range(rng.randint(3, 40)))
        out.append({"id": f"u{n}", "timestamp": "t", "type": "user",
                    "content": [{"text": ("/stats " if n % 17 == 5 else "") + f"prompt {n}: {words}"}]})
        answer: dict[str, Any] = {"id": f"g{n}", "timestamp": "t", "type": "gemini", "content": f"answer {n} {words}",
                                  "model": rng.choice(["gemini-2.5-pro", "gemini-2.5-flash"])}
        if n % 3 == 0:
            answer["thoughts"] = [{"subject": "Plan", "description": words}]
        if n % 2 == 0:
            answer["toolCalls"] = [{"id": f"c{n}", "name": "read_file", "args": {"file_path": f"src/{n}.py"},
                                    "status": "success", "timestamp": "t"}]
            out.append(dict(answer))  # first written without results and usage
            answer = json.loads(json.dumps(answer))
            answer["toolCalls"][0]["result"] = [{"functionResponse": {"id": f"c{n}", "name": "read_file",
                                                                      "response": {"output": words * 3}}}]
        answer["tokens"] = {"input": 1000 + n, "output": 10 + n % 7, "cached": n, "thoughts": 1, "tool": 0,
                            "total": 1011 + n}
        out.append(answer)
        if n % 11 == 0:
            out.append({"id": f"i{n}", "timestamp": "t", "type": "info", "content": "a note"})
    return out


def write(path: Path, lines: list[str], newline: str = "\n") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(newline.join(lines).encode() + newline.encode())
    return path


def as_lines(items: list[dict[str, Any]]) -> list[str]:
    return [json.dumps(item, ensure_ascii=False) for item in items]


def tail_of(path: Path, limit: int = LIMIT) -> TailRead | None:
    fd = open_session_file(path)
    try:
        return read_tail(path, fd, limit=limit)
    finally:
        os.close(fd)


def whole(path: Path) -> Analysis:
    return analyze(load(path))


def assert_exact(tail: TailRead, analysis: Analysis) -> list[int]:
    """Every turn of the tail is a turn of the whole read with the same figures; their places there."""
    where = {(t.record_id, t.is_tool_result): t.index for t in analysis.turns}
    places = []
    for k, turn in enumerate(tail.turns):
        i = where[(turn.record_id, turn.is_tool_result)]
        places.append(i)
        assert turn.role == analysis.turns[i].role
        assert turn.content == analysis.turns[i].content
        assert tail.index.quarters[k] == analysis.quarters[i]
        assert tail.tokens(k) == analysis.turn_tokens(i)
        assert tail.index.json_lengths[k] == analysis.json_chars[i]
        assert tail.index.kinds[k] == analysis.kinds[i]
        assert tail.index.usage[k] == analysis.recorded[i]
    return places


@pytest.mark.parametrize("newline", ["\n", "\r\n"])
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_newest_turns_with_the_figures_of_the_whole_read(tmp_path: Path, seed: int, newline: str) -> None:
    path = write(tmp_path / "s.jsonl", as_lines([meta(), *records(300, seed)]), newline)
    assert path.stat().st_size > 4 * LIMIT
    tail = tail_of(path)
    assert tail is not None and tail.recording and tail.session_id == "tail-test"
    analysis = whole(path)
    assert 10 < len(tail.turns) < len(analysis.turns)
    places = assert_exact(tail, analysis)
    # nothing but the newest turns, in their order
    assert places == list(range(len(analysis.turns) - len(places), len(analysis.turns)))
    size = path.stat().st_size
    assert size - LIMIT - 1 < tail.start < size
    assert path.read_bytes()[tail.start - 1:tail.start] == b"\n"  # cut at a line start


def test_a_line_that_starts_at_the_cut_is_kept(tmp_path: Path) -> None:
    lines = as_lines([meta(), *records(200, 4)])
    path = write(tmp_path / "s.jsonl", lines)
    data = path.read_bytes()
    start = data.rfind(b"\n", 0, len(data) - LIMIT) + 1  # the line starting at or before the cut
    tail = tail_of(path, len(data) - start)
    assert tail is not None and tail.start == start


def test_a_broken_line_in_the_tail_is_skipped_there_and_reported_by_the_whole_read(tmp_path: Path) -> None:
    lines = as_lines([meta(), *records(200, 5)])
    lines.insert(len(lines) - 6, '{"id": "broken", "type": "user", "content": [{"te')
    path = write(tmp_path / "s.jsonl", lines)
    tail = tail_of(path)
    assert tail is not None and tail.turns
    analysis = whole(path)
    assert assert_exact(tail, analysis)[-1] == len(analysis.turns) - 1
    assert any("not valid JSON" in w.message for w in analysis.warnings)


@pytest.mark.parametrize("target", ["u190", "nowhere", "u10"])
def test_only_what_follows_a_rewind_in_the_tail(tmp_path: Path, target: str) -> None:
    """A rewind's target may lie before the tail (u10), in it (u190) or nowhere: the turns written before
    it are left out; those after it are in the history, with their figures."""
    items = [meta(), *records(200, 6), {"$rewindTo": target}, *records(205, 7)[-12:]]
    path = write(tmp_path / "s.jsonl", as_lines(items))
    tail = tail_of(path)
    assert tail is not None and tail.turns
    analysis = whole(path)
    places = assert_exact(tail, analysis)
    assert {t.record_id for t in tail.turns} <= {str(r["id"]) for r in items[-12:]}
    assert places == sorted(places)


def test_a_rewind_to_a_message_written_before_the_tail_and_again_in_it(tmp_path: Path) -> None:
    """The tail sees the target after a newer message; the history has it before, so the rewind
    drops both: what precedes a rewind in the tail is never shown."""
    early = records(200, 15)
    target = next(r for r in early[:20] if r["type"] == "user")
    newer = {"id": "newer", "timestamp": "t", "type": "user", "content": [{"text": "dropped by the rewind"}]}
    items = [meta(), *early, newer, target, {"$rewindTo": target["id"]}, *records(205, 16)[-8:]]
    path = write(tmp_path / "s.jsonl", as_lines(items))
    tail = tail_of(path)
    assert tail is not None and tail.turns
    analysis = whole(path)
    assert "newer" not in {t.record_id for t in analysis.turns}
    assert "newer" not in {t.record_id for t in tail.turns}
    assert_exact(tail, analysis)


def test_a_checkpoint_in_the_tail_replaces_what_came_before(tmp_path: Path) -> None:
    kept = records(3, 8)
    items = [meta(), *records(200, 9), {"$set": {"messages": kept}}, *records(40, 10)[-5:]]
    path = write(tmp_path / "s.jsonl", as_lines(items))
    tail = tail_of(path)
    assert tail is not None
    analysis = whole(path)
    assert assert_exact(tail, analysis) == list(range(len(analysis.turns)))  # the whole history, in place


def test_a_message_the_whole_read_refuses_gives_no_rows(tmp_path: Path) -> None:
    items = [meta(), *records(200, 11), {"id": "bad", "type": "gemini", "timestamp": "t", "content": 5}]
    path = write(tmp_path / "s.jsonl", as_lines(items))
    tail = tail_of(path)
    assert tail is not None and tail.recording and tail.turns == []


def test_a_legacy_document_has_no_tail_rows(tmp_path: Path) -> None:
    doc = {**meta(), "messages": records(200, 12)}
    path = tmp_path / "session-legacy.json"
    path.write_text(json.dumps(doc, indent=2))
    tail = tail_of(path)
    assert tail is not None and not tail.recording and tail.turns == [] and tail.size == path.stat().st_size


def test_a_file_within_the_tail_size_has_no_tail_step(tmp_path: Path) -> None:
    path = write(tmp_path / "s.jsonl", as_lines([meta(), *records(5, 13)]))
    assert path.stat().st_size < LIMIT
    assert tail_of(path) is None


def test_one_line_longer_than_the_tail_gives_no_rows(tmp_path: Path) -> None:
    items = [meta(), *records(3, 14), {"id": "long", "type": "user", "timestamp": "t",
                                        "content": [{"text": "y" * (2 * LIMIT)}]}]
    path = write(tmp_path / "s.jsonl", as_lines(items))
    tail = tail_of(path)
    assert tail is not None and tail.recording and tail.turns == []
