"""Another writer's change survives an apply, whatever moment it lands at.

Gemini CLI may rewrite a legacy ``session-*.json`` or a ``/chat save`` file
(temp file + rename, or in place) or append to / rewrite a JSONL recording
while an apply runs.  Each test first records every step an apply goes
through (the store's write hook), then, on a fresh copy for each step, lets
"Gemini CLI" change the file at exactly that step.  Whatever happens, the
other writer's message must be in the file afterwards: the apply either
refused (leaving the other writer's file byte for byte) or included it.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from inspector.analysis import analyze
from inspector.session import history, load
from inspector.store import StoreError, apply_history, baseline, read_history, revert
from tests.test_store import compacted, sample_copy

MARK = "ANOTHER WRITER'S MESSAGE"




def _changed_bytes(path: Path) -> bytes:
    """The file as Gemini CLI would write it with one more message."""
    data = path.read_bytes()
    if path.suffix == ".jsonl":
        # a JSONL rewrite: same records, first line changed, one more message
        lines = data.splitlines(keepends=True)
        first = json.loads(lines[0])
        first["lastUpdated"] = "2099-01-01T00:00:00.000Z"
        record = {"id": "other-1", "timestamp": "2099-01-01T00:00:00.000Z", "type": "user",
                  "content": [{"text": MARK}]}
        return (json.dumps(first) + "\n").encode() + b"".join(lines[1:]) + (json.dumps(record) + "\n").encode()
    doc = json.loads(data)
    if isinstance(doc, list) or "history" in doc:
        turns = doc if isinstance(doc, list) else doc["history"]
        turns.append({"role": "user", "parts": [{"text": MARK}]})
    else:
        doc["messages"].append({"id": "other-1", "timestamp": "2099-01-01T00:00:00.000Z", "type": "user",
                                "content": [{"text": MARK}]})
    return json.dumps(doc, indent=2).encode()


def rename_writer(path: Path) -> bytes:
    data = _changed_bytes(path)
    temp = path.with_name(path.name + ".gemini-tmp")
    temp.write_bytes(data)
    os.replace(temp, path)
    return data


def in_place_writer(path: Path) -> bytes:
    data = _changed_bytes(path)
    path.write_bytes(data)  # open(O_TRUNC) + write, like fs.writeFileSync
    return data


def appender(path: Path) -> bytes:
    record = {"id": "other-1", "timestamp": "2099-01-01T00:00:00.000Z", "type": "user", "content": [{"text": MARK}]}
    with path.open("ab") as handle:
        handle.write((json.dumps(record) + "\n").encode())
    return path.read_bytes()


def _steps(tmp_path: Path, name: str) -> list[str]:
    """Every hook step of one apply of ``name``, in order."""
    (tmp_path / "dry").mkdir()
    path = sample_copy(tmp_path / "dry", name)
    seen: list[str] = []
    _apply(path, lambda step: seen.append(step))
    return seen


def _apply(path: Path, hook: Callable[[str], None]) -> None:
    session = load(path)
    turns = history(session)
    split = analyze(session).split_point if session.format == "jsonl" else 2
    new, sources = compacted(turns, split)
    apply_history(session, turns, new, sources, hook=hook)


def _texts(path: Path) -> str:
    return json.dumps([t.content for t in history(load(path))])


def _broken_lines(data: bytes) -> list[bytes]:
    broken = []
    for line in data.splitlines():
        try:
            json.loads(line)
        except ValueError:
            broken.append(line)
    return broken


def _writer_at(
    index: int, path: Path, writer: Callable[[Path], bytes]
) -> tuple[Callable[[str], None], dict[str, bytes]]:
    """A store hook that lets ``writer`` change ``path`` at the ``index``-th step, and where it keeps what it wrote."""
    theirs: dict[str, bytes] = {}
    calls = {"n": 0}

    def hook(step: str) -> None:
        if calls["n"] == index:
            theirs["data"] = writer(path)
        calls["n"] += 1

    return hook, theirs


def _apply_while_writing(
    tmp_path: Path, name: str, writer: Callable[[Path], bytes], index: int, steps: list[str]
) -> tuple[Path, dict[str, bytes], str, StoreError | None]:
    """An apply of a fresh copy of ``name`` while ``writer`` changes it at step ``index``: the copy, what
    the writer left, where it landed, and the refusal (None: applied).  A refusal leaves the file as
    the writer left it and nothing to undo."""
    folder = tmp_path / f"{writer.__name__}-{index}"
    folder.mkdir()
    path = sample_copy(folder, name)
    hook, theirs = _writer_at(index, path, writer)
    where = f"{writer.__name__} at step {index} ({steps[index]})"
    try:
        _apply(path, hook)
    except StoreError as exc:
        assert path.read_bytes() == theirs["data"], f"{where}: refused, yet the file is not theirs"
        assert read_history(path).undoable() == [], where
        return path, theirs, where, exc
    return path, theirs, where, None


WRITERS = {
    "legacy-pomodoro.json": (rename_writer, in_place_writer),
    "checkpoint-rate-limit.json": (rename_writer, in_place_writer),
    "gemini-cli-0.61-chat-save.json": (rename_writer, in_place_writer),
    "coding-task.jsonl": (rename_writer, in_place_writer, appender),
}


@pytest.mark.parametrize("swap", ["exchange", "replace"])
@pytest.mark.parametrize("name", sorted(WRITERS))
def test_another_writers_change_survives_at_every_step(
    name: str, swap: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if swap == "replace":  # a system without renameat2(RENAME_EXCHANGE): check the bytes, then os.replace
        monkeypatch.setattr(baseline, "_renameat2", None)
    elif baseline._renameat2 is None:
        pytest.skip("this system has no renameat2")
    steps = _steps(tmp_path, name)
    assert "renamed" in steps or "append-written" in steps
    outcomes: dict[str, int] = {"refused": 0, "included": 0}
    for writer in WRITERS[name]:
        for index in range(len(steps)):
            path, _, where, refusal = _apply_while_writing(tmp_path, name, writer, index, steps)
            if refusal is not None:
                assert refusal.reason in ("changed", "stale"), f"{where}: {refusal}"
                outcomes["refused"] += 1
                continue
            assert MARK in _texts(path), f"{where}: the apply succeeded and lost the other writer's message"
            if path.suffix == ".jsonl":
                assert _broken_lines(path.read_bytes()) == [], f"{where}: the apply left a broken line"
            outcomes["included"] += 1
            # and undo keeps it too (or refuses, leaving it)
            try:
                revert(path)
            except StoreError as exc:
                assert exc.reason == "conflict", f"{where}: {exc}"
            assert MARK in _texts(path), f"{where}: revert lost the other writer's message"
    assert outcomes["refused"] + outcomes["included"] == len(steps) * len(WRITERS[name])


def _revert_steps(tmp_path: Path, name: str) -> list[str]:
    (tmp_path / "dry-revert").mkdir()
    path = sample_copy(tmp_path / "dry-revert", name)
    _apply(path, lambda step: None)
    seen: list[str] = []
    revert(path, hook=lambda step: seen.append(step))
    return seen


@pytest.mark.parametrize("name", sorted(WRITERS))
def test_another_writers_change_survives_a_revert_at_every_step(name: str, tmp_path: Path) -> None:
    """The same writers, landing at each step of a revert: the revert refuses (their file left as they
    wrote it, the apply still undoable) or keeps their message."""
    steps = _revert_steps(tmp_path, name)
    assert "renamed" in steps
    for writer in WRITERS[name]:
        for index in range(len(steps)):
            folder = tmp_path / f"revert-{writer.__name__}-{index}"
            folder.mkdir()
            path = sample_copy(folder, name)
            _apply(path, lambda step: None)
            hook, theirs = _writer_at(index, path, writer)
            where = f"{writer.__name__} at revert step {index} ({steps[index]})"
            try:
                revert(path, hook=hook)
            except StoreError as exc:
                assert exc.reason in ("changed", "conflict"), f"{where}: {exc}"
                assert path.read_bytes() == theirs["data"], f"{where}: refused, yet the file is not theirs"
                assert len(read_history(path).undoable()) == 1, where
                continue
            assert MARK in _texts(path), f"{where}: the revert lost the other writer's message"
            if path.suffix == ".jsonl":
                assert _broken_lines(path.read_bytes()) == [], f"{where}: the revert left a broken line"


def rewinder(path: Path) -> bytes:
    """Gemini CLI's /rewind: a line that cuts the conversation back to a message."""
    first = next(r for r in load(path).messages if r.get("type") == "user")
    with path.open("ab") as handle:
        handle.write((json.dumps({"$rewindTo": first["id"]}) + "\n").encode())
    return path.read_bytes()


def resumer(path: Path) -> bytes:
    """Gemini CLI resuming the session: a line that sets every message."""
    with path.open("ab") as handle:
        handle.write((json.dumps({"$set": {"messages": list(load(path).messages)}}) + "\n").encode())
    return path.read_bytes()


@pytest.mark.parametrize("writer", [rewinder, resumer], ids=["rewind", "resume"])
def test_a_line_that_rebuilds_the_history_is_never_hidden_under_the_checkpoint(
        writer: Callable[[Path], bytes], tmp_path: Path) -> None:
    """Landing while the apply writes, a rewind (or a resume's $set.messages) would come before the
    checkpoint, which rebuilds the history without it: the apply refuses and leaves the file as
    Gemini CLI wrote it.  Landing after the swap, it comes after the checkpoint and acts on the
    compacted history, as Gemini CLI meant; revert then names the rewind, and leaves out the
    resume's line, which restates the compacted history it read."""
    name = "coding-task.jsonl"
    steps = _steps(tmp_path, name)
    refused = restated = 0
    for index in range(len(steps)):
        path, theirs, where, refusal = _apply_while_writing(tmp_path, name, writer, index, steps)
        if refusal is not None:
            assert refusal.reason == "changed" and "while the compaction was being written" in str(refusal), where
            refused += 1
            continue
        [entry] = read_history(path).undoable()
        data = path.read_bytes()
        their_line = theirs["data"][theirs["data"].rstrip(b"\n").rfind(b"\n") + 1:]
        assert data.rfind(their_line) > entry.regions[0].offset, f"{where}: their line sits under the checkpoint"
        if writer is resumer and _restates(tmp_path, data, their_line):
            # it read the compacted history (it landed after the swap) and restates it: revert leaves it out
            revert(path)
            restored = path.read_bytes()
            assert hashlib.sha256(restored[: entry.size_before]).hexdigest() == entry.sha256_before, where
            assert len(restored) == entry.size_before, where  # nothing else was appended
            restated += 1
        else:
            with pytest.raises(StoreError, match="as Gemini CLI does when it resumes a session"):
                revert(path)
    assert refused >= 1  # the step between the read and the swap
    assert restated >= (1 if writer is resumer else 0)  # a resume after the swap


def _restates(folder: Path, data: bytes, line: bytes) -> bool:
    """Whether the resume's line lists the messages the file held before it (the compacted ones)."""
    before = folder / "before-their-line.jsonl"
    before.write_bytes(data[: data.rfind(line)])
    return bool(json.loads(line)["$set"]["messages"] == [dict(m) for m in load(before).messages])
