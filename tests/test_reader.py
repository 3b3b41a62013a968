"""One reader for both faces: progress, stopping, and the app's read equal to the CLI's."""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from inspector.analysis import analyze
from inspector.live.watch import state_of
from inspector.session import load, parse, reader
from inspector.session.errors import ReadCancelled
from inspector.session.reader import ForkedCall, ReadWatch
from inspector.session.records import MessageList
from inspector.tui.loading import Cancelled, read_session

META = {"sessionId": "s", "projectHash": "p"}


def recording(path: Path, turns: int, ending: bytes = b"\n") -> Path:
    lines = [json.dumps(META)]
    for i in range(turns):
        lines.append(json.dumps({"id": f"u{i}", "type": "user", "content": [{"text": f"question {i} é😀"}]}))
        lines.append(json.dumps({"id": f"g{i}", "type": "gemini", "content": f"answer {i}", "model": "gemini-2.5-pro",
                                 "tokens": {"input": 10 + i, "output": 1, "cached": 0, "thoughts": 0, "tool": 0,
                                            "total": 11 + i},
                                 "toolCalls": [{"id": f"c{i}", "name": "ls", "args": {"dir": "."},
                                                "result": "a\n" * (i % 7), "status": "success"}]}))
    data = "\n".join(lines).encode() + ending
    path.write_bytes(data)
    return path


@pytest.mark.usefixtures("stream_everything")
def test_progress_covers_the_file_in_both_passes(tmp_path: Path) -> None:
    path = recording(tmp_path / "s.jsonl", 60)
    seen: list[tuple[str, int, int]] = []
    session = load(path, ReadWatch(progress=lambda phase, done, total: seen.append((phase, done, total))))
    assert isinstance(session.messages, MessageList) and session.messages.reads_file
    size = path.stat().st_size
    for phase in ("reading", "parsing"):
        done = [d for p, d, total in seen if p == phase and total == size]
        assert len(done) > 3 and done == sorted(done) and done[-1] == size, phase
    assert [p for p, _, _ in seen] == sorted((p for p, _, _ in seen), key=["reading", "parsing"].index)


@pytest.mark.usefixtures("stream_everything")
def test_a_read_stops_between_blocks_when_asked(tmp_path: Path) -> None:
    path = recording(tmp_path / "s.jsonl", 60)
    calls: list[int] = []

    def cancelled() -> bool:
        calls.append(1)
        return len(calls) > 5

    with pytest.raises(ReadCancelled):
        load(path, ReadWatch(cancelled=cancelled))
    assert len(calls) == 6  # stopped at the first block after being asked, not at the end


_STOP_TWO_PROCESSES = """
import os, sys, threading
from pathlib import Path
from inspector.session import loader, reader
from inspector.session.errors import ReadCancelled
loader.STREAM_MIN_BYTES = 0
reader.PARALLEL_MIN_BYTES = 0
reader.BLOCK_BYTES = 512
if sys.argv[2] == "spawn":
    release = threading.Event()
    threading.Thread(target=release.wait, daemon=True).start()
assert reader.parallel_mode(1) == sys.argv[2]
asked = []
def cancelled():
    asked.append(1)
    return len(asked) > 3
try:
    loader.load(Path(sys.argv[1]), reader.ReadWatch(cancelled=cancelled))
except ReadCancelled:
    try:
        os.waitpid(-1, os.WNOHANG)
        print("a child is left")
    except ChildProcessError:
        print("stopped, no child left")
"""


@pytest.mark.parametrize("mode", ["fork", "spawn"])
def test_stopping_a_two_process_read_ends_the_second_process(tmp_path: Path, mode: str) -> None:
    path = recording(tmp_path / "s.jsonl", 400)
    done = subprocess.run([sys.executable, "-c", _STOP_TWO_PROCESSES, str(path), mode], capture_output=True,
                          text=True, check=False, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "stopped, no child left"


# -- the second process's part ---------------------------------------------------------------------


here = os.getpid()  # (a forked child's differs)


def _exited(pid: int) -> bool:
    """Whether process ``pid`` (a child of this one) has exited, waiting up to a minute; it is not reaped."""
    watch = os.pidfd_open(pid)
    try:
        return bool(select.select([watch], [], [], 60)[0])
    finally:
        os.close(watch)


@pytest.mark.skipif(not hasattr(os, "pidfd_open"), reason="needs os.pidfd_open (Linux) to see the child exit")
def test_a_forked_child_leaves_its_part_and_exits_before_it_is_asked_for() -> None:
    part = ["x" * 1000 + str(n) for n in range(4000)]  # 4 MB marshalled: far more than a pipe holds
    child = ForkedCall(lambda: part)
    assert _exited(child.pid), "the child waited for this process to take its part"
    assert child.result() == (True, part)
    assert child.pid == 0


def test_a_forked_child_that_fails_sends_nothing_and_its_part_is_done_here() -> None:
    def fails() -> list[int]:
        raise RuntimeError("no")

    assert ForkedCall(fails).result() == (False, None)
    assert reader.in_two_processes(lambda: 1, lambda: [2] if os.getpid() == here else fails()) == (1, [2])


def test_without_memfd_the_part_waits_in_an_unlinked_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delattr(os, "memfd_create", raising=False)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    part = {"rows": list(range(100_000)), "text": "é😀"}
    assert reader.in_two_processes(lambda: "first", lambda: part) == ("first", part)
    assert list(tmp_path.iterdir()) == []  # nothing left behind


def test_with_nowhere_to_leave_a_part_both_are_done_here(monkeypatch: pytest.MonkeyPatch) -> None:
    def refused(*args: object, **kwargs: object) -> int:
        raise PermissionError("refused")

    monkeypatch.setattr(os, "memfd_create", refused, raising=False)
    monkeypatch.setattr(tempfile, "mkstemp", refused)
    child = ForkedCall(lambda: [os.getpid()])
    assert child.pid == 0 and child.result() == (False, None)  # no child was begun
    assert reader.in_two_processes(lambda: "first", lambda: [os.getpid()]) == ("first", [here])


def test_a_forked_child_no_longer_wanted_is_stopped_and_its_part_let_go() -> None:
    child = ForkedCall(lambda: sum(range(10**15)))  # would run for hours, in constant memory
    pid = child.pid
    child.kill()
    assert child.pid == 0
    with pytest.raises(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)  # killed and reaped


@pytest.mark.usefixtures("stream_everything")
@pytest.mark.parametrize("ending", [b"\n", b'\n{"id": "half-writ'], ids=["complete", "last line half written"])
def test_the_app_reads_as_the_command_line_does(tmp_path: Path, ending: bytes) -> None:
    path = recording(tmp_path / "s.jsonl", 80, ending)
    loaded = read_session(path, threshold=0.5)
    cli = load(path)
    assert isinstance(loaded.session.messages, MessageList) and loaded.session.messages.reads_file
    assert loaded.analysis.to_json(path, "jsonl", "s") == analyze(cli, threshold=0.5).to_json(path, "jsonl", "s")
    assert loaded.session.turn_index == cli.turn_index
    info = path.stat()
    assert loaded.file_state == state_of(path, path.read_bytes(), info.st_ino, info.st_mtime_ns)


def test_the_app_reads_a_small_file_whole_with_the_same_watch_state(tmp_path: Path) -> None:
    path = recording(tmp_path / "s.jsonl", 5, b"\n{")
    loaded = read_session(path, threshold=0.5)
    info = path.stat()
    assert loaded.file_state == state_of(path, path.read_bytes(), info.st_ino, info.st_mtime_ns)


@pytest.mark.usefixtures("stream_everything")
def test_the_app_stops_reading_when_asked(tmp_path: Path) -> None:
    path = recording(tmp_path / "s.jsonl", 60)
    phases: list[str] = []
    with pytest.raises(Cancelled):
        read_session(path, progress=lambda phase, done, total: phases.append(phase), cancelled=lambda: len(phases) > 2)
    assert "analysing" not in phases


@pytest.mark.usefixtures("stream_everything")
@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(steps=st.lists(st.one_of(
    st.tuples(st.just("message"), st.integers(0, 30)),  # a message (an id used before is written again)
    st.tuples(st.just("rewind"), st.integers(0, 30)),  # $rewindTo an id (maybe one never written)
    st.tuples(st.just("checkpoint"), st.lists(st.integers(0, 30), max_size=4)),  # $set.messages
), min_size=1, max_size=60))
def test_rows_from_many_blocks_equal_rows_from_one(tmp_path_factory: pytest.TempPathFactory,
                                                   steps: list[tuple[str, object]]) -> None:
    """Read block by block (256 bytes: a message's rows in one block, the replayed order calling on
    blocks out of order: a message written again later keeps its place, a checkpoint lists earlier
    ids), a recording has the turns, figures and lines of the same recording read in one block."""
    lines = [json.dumps(META)]
    for n, (kind, value) in enumerate(steps):
        if kind == "message":
            lines.append(json.dumps(_message(f"m{value}", n)))
        elif kind == "rewind":
            lines.append(json.dumps({"$rewindTo": f"m{value}"}))
        else:
            assert isinstance(value, list)
            lines.append(json.dumps({"$set": {"messages": [_message(f"m{k}", n) for k in value]}}))
    path = tmp_path_factory.mktemp("blocks") / "s.jsonl"
    path.write_bytes("\n".join(lines).encode() + b"\n")
    streamed = load(path)
    whole = parse(path, path.read_bytes())  # (one scan, one block)
    assert isinstance(streamed.messages, MessageList) and streamed.messages.reads_file  # (read from its file)
    assert streamed.turn_index == whole.turn_index
    assert streamed.message_lines == whole.message_lines
    assert list(streamed.messages) == list(whole.messages)


def _message(ident: str, n: int) -> dict[str, object]:
    if n % 2:
        return {"id": ident, "type": "user", "content": [{"text": f"ask {n}"}]}
    return {"id": ident, "type": "gemini", "content": f"answer {n}", "tokens": {"input": n, "output": 1},
            "toolCalls": [{"id": f"c{n}", "name": "read_file", "args": {"file_path": f"f{n % 3}.py"},
                           "result": "x" * n, "status": "success"}]}
