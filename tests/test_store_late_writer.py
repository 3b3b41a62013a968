"""A writer that opened the recording before the swap and writes after it loses nothing.

Gemini CLI appends a line by opening the recording by name, writing the line and closing it
(``fs.appendFileSync``).  On a busy machine a whole time slice can pass between its ``open()`` and
its ``write()``: when an apply or a revert swaps the file in between, the line goes to the file that
was swapped out.  These writers hold the file open across the swap on purpose (the delay between
``open()`` and ``write()`` is the fault, 1-20 ms as a loaded machine makes it); every line they
write must be in the session afterwards, and the journal must say it was carried.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

import inspector.store.drain as draining
from inspector.session import history, load
from inspector.store import StoreError, apply_history, read_history, revert, store_dir
from tests.test_store import REPO, compacted, sample_copy

SEED = 37

# "open D" opens the recording by name (O_APPEND), says "opened", writes one line D ms later and
# closes it, then says "written"; "run" appends freely (open, 1-20 ms, write, close) until "stop",
# then says how many lines it wrote.  Each line is a user message "LATE <n>".
WRITER = r"""
import json, os, random, select, sys, time
path = sys.argv[1]
rng = random.Random(int(sys.argv[2]))
n = 0
def line():
    global n
    record = {"id": f"late-{n}", "timestamp": "t", "type": "user", "content": [{"text": f"LATE {n}"}]}
    n += 1
    return (json.dumps(record) + "\n").encode()
def one(delay):
    fd = os.open(path, os.O_WRONLY | os.O_APPEND)
    print("opened", flush=True)
    time.sleep(delay)  # the fault: a busy machine between open() and write()
    os.write(fd, line())
    os.close(fd)
print("ready", flush=True)
for command in sys.stdin:
    word = command.split()
    if word[0] == "open":
        one(float(word[1]) / 1000)
        print("written", flush=True)
    elif word[0] == "run":
        while not select.select([sys.stdin], [], [], 0)[0]:
            fd = os.open(path, os.O_WRONLY | os.O_APPEND)
            time.sleep(rng.uniform(0.001, 0.020))
            os.write(fd, line())
            os.close(fd)
    else:
        break
print(n, flush=True)
"""


class LateWriter:
    def __init__(self, path: Path, seed: int) -> None:
        self.process = subprocess.Popen([sys.executable, "-c", WRITER, str(path), str(seed)],
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        assert self._read() == "ready"

    def _read(self) -> str:
        assert self.process.stdout is not None
        return self.process.stdout.readline().strip()

    def send(self, command: str) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(command + "\n")
        self.process.stdin.flush()

    def open_then_write(self, delay_ms: float) -> None:
        """Open the recording now (it is open when this returns); the line follows ``delay_ms`` later."""
        self.send(f"open {delay_ms:.1f}")
        assert self._read() == "opened"

    def stop(self) -> int:
        out, _ = self.process.communicate("stop\n", timeout=60)
        return int(out.split()[-1])


def missing_lines(path: Path, count: int) -> list[int]:
    text = json.dumps([t.content for t in history(load(path))])
    return [n for n in range(count) if f'"LATE {n}"' not in text]


def _apply(path: Path, hook: Callable[[str], None] | None = None) -> None:
    session = load(path)
    turns = history(session)
    new, sources = compacted(turns, 2)
    apply_history(session, turns, new, sources, allow_grown=True, hook=hook)


def _opens_before_the_swap(writer: LateWriter, delay_ms: float) -> Callable[[str], None]:
    """A store hook that has the writer open the recording right before the swap (``checked``)."""
    def hook(step: str) -> None:
        if step == "checked":
            writer.open_then_write(delay_ms)
    return hook


@pytest.mark.parametrize("mode", ["apply", "revert"])
def test_a_line_written_after_the_swap_to_the_file_opened_before_it_is_carried(
        mode: str, machine_load: str, tmp_path: Path) -> None:
    rng = random.Random(SEED)
    lost = []
    tries = 4
    for index in range(tries):
        path = sample_copy(tmp_path / f"{mode}-{index}", "coding-task.jsonl")
        if mode == "revert":
            _apply(path)
        writer = LateWriter(path, index)
        delay = rng.uniform(1, 20)
        hook = _opens_before_the_swap(writer, delay)
        try:
            if mode == "apply":
                _apply(path, hook)
            else:
                revert(path, hook=hook)
        finally:
            count = writer.stop()
        assert count == 1
        if missing_lines(path, count):
            lost.append(f"try {index} ({delay:.1f} ms between open and write): the line is not in the session")
            continue
        entry = read_history(path).entries[-1]
        if mode == "apply":
            assert entry.state == "applied" and entry.lost_bytes == 0
            assert entry.late_bytes > 0, "the journal says the line written to the old file was carried"
    print(f"\nlate writer during {mode} ({machine_load}): {tries} tries, {tries - len(lost)} survived, "
          f"{len(lost)} lost")
    assert not lost, lost


@pytest.mark.parametrize("mode", ["apply", "revert"])
def test_a_free_running_appender_delayed_between_open_and_write_loses_nothing(
        mode: str, machine_load: str, tmp_path: Path) -> None:
    """The issue's writer: open by name, 1-20 ms, write one line, close, over and over, while applies
    (or reverts) run; every line it wrote is in the session, or the operation refused."""
    lost, refused = [], 0
    tries = 3
    for index in range(tries):
        path = sample_copy(tmp_path / f"{mode}-{index}", "coding-task.jsonl")
        if mode == "revert":
            _apply(path)
        writer = LateWriter(path, index)
        writer.send("run")
        try:
            if mode == "apply":
                _apply(path)
            else:
                revert(path)
        except StoreError as exc:
            assert exc.reason in ("changed", "stale", "busy"), exc
            refused += 1
        finally:
            count = writer.stop()
        missing = missing_lines(path, count)
        if missing:
            lost.append(f"try {index}: {len(missing)} of {count} lines missing")
    print(f"\nfree-running late writer during {mode} ({machine_load}): {tries} tries, {refused} refused, "
          f"{tries - len(lost)} survived, {len(lost)} lost")
    assert not lost, lost


@pytest.mark.parametrize("name", ["coding-task.jsonl", "legacy-pomodoro.json"])
@pytest.mark.parametrize("mode", ["apply", "revert"])
def test_a_writer_that_never_closes_the_old_file_undoes_the_swap(
        mode: str, name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A program that opened the file before the swap and still holds it when the wait runs out
    (stopped, or stuck): the swap is undone, the file left as that program has it, and the command
    refused in one line ("busy"), nothing lost and nothing half done."""
    monkeypatch.setattr(draining, "WRITER_WAIT_SECONDS", 0.2)
    path = sample_copy(tmp_path, name)
    if mode == "revert":
        _apply(path)
    before = path.read_bytes()
    held: list[int] = []

    def hook(step: str) -> None:
        if step == "checked":
            held.append(os.open(path, os.O_WRONLY | os.O_APPEND))  # opened before the swap, never closed

    try:
        with pytest.raises(StoreError, match=r"kept the session open for writing for over 0\.2 s") as refused:
            if mode == "apply":
                session = load(path)
                turns = history(session)
                new, sources = compacted(turns, 2)
                apply_history(session, turns, new, sources, hook=hook)
            else:
                revert(path, hook=hook)
        assert refused.value.reason == "busy"
        assert path.read_bytes() == before
        assert os.path.samestat(os.fstat(held[0]), os.stat(path)), "the file it holds is the session again"
    finally:
        for fd in held:
            os.close(fd)
    entries = read_history(path).entries
    assert entries[-1].state == ("failed" if mode == "apply" else "applied")
    assert not list((store_dir(path) / "swapped").glob("*")), "nothing is left in swapped/"


KILLED = r"""
import os, signal, sys
from pathlib import Path
from inspector.session import history, load
from inspector.store import apply_history, revert
mode, path = sys.argv[1], Path(sys.argv[2])
def hook(step):
    if step == "renamed" and mode == "revert" or step == "renamed" and hook.swaps:
        os.kill(os.getpid(), signal.SIGKILL)
    if step == "renamed":
        hook.swaps += 1
hook.swaps = 0
if mode == "apply":
    session = load(path)
    turns = history(session)
    new = [{"role": "user", "parts": [{"text": "<state_snapshot>kept</state_snapshot>"}]},
           {"role": "model", "parts": [{"text": "Got it."}]}] + [t.content for t in turns[2:]]
    apply_history(session, turns, new, [None, None, *turns[2:]], hook=hook)
else:
    revert(path, hook=hook)
"""


@pytest.mark.parametrize("mode", ["apply", "revert"])
def test_a_kill_right_after_the_swap_loses_no_late_line(mode: str, tmp_path: Path) -> None:
    """``kill -9`` of the apply (or revert) the moment its swap is done, before it drains the old file;
    then the writer that had opened the file before the swap writes its line into the old one.  The
    line is in a file the store keeps, and the next revert (or apply) appends it to the session."""
    path = sample_copy(tmp_path, "coding-task.jsonl")
    if mode == "revert":
        _apply(path)
    original = path.read_bytes()
    writer = os.open(path, os.O_WRONLY | os.O_APPEND)  # Gemini CLI, between its open() and its write()
    try:
        child = subprocess.run([sys.executable, "-c", KILLED, mode, str(path)], cwd=REPO, capture_output=True,
                               text=True, timeout=120)
        assert child.returncode == -9, child.stderr
        assert path.read_bytes() != original, "the swap happened"
        late = b'{"id":"late-0","timestamp":"t","type":"user","content":[{"text":"LATE 0"}]}\n'
        os.write(writer, late)
    finally:
        os.close(writer)
    assert late not in path.read_bytes()
    if mode == "apply":  # the next operation: undo the apply that was killed
        said = revert(path)[0].housekeeping
    else:  # the revert landed: the next operation is an apply
        _apply(path)
        said = read_history(path).entries[-1].housekeeping
    assert missing_lines(path, 1) == [], "the late line was carried into the session"
    assert any("appended to it now" in line for line in said), said


def test_a_swapped_out_file_a_writer_kept_filling_is_carried_without_hashing_each_line(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A writer that kept appending to the file an apply swapped out (60,000 lines on a loaded machine):
    the next revert looked for the apply's lines at each of them, hashing the whole plan each time,
    and ran past the suite's 300 s.  The plan is looked for by its bytes, read back from the session:
    a few hashes, and every late line carried."""
    import inspector.store.late as late

    path = sample_copy(tmp_path / "s", "coding-task.jsonl")
    _apply(path)
    (swapped,) = (store_dir(path) / "swapped").iterdir()  # the old file, kept for the next apply or revert
    count = 5_000
    with swapped.open("ab") as old:  # the writer kept going, into the file no longer the session
        for n in range(count):
            record = {"id": f"late-{n}", "timestamp": "t", "type": "user", "content": [{"text": f"LATE {n}"}]}
            old.write((json.dumps(record) + "\n").encode())
    hashed = []
    hash_of = late.sha256

    def counted(data: bytes) -> str:
        hashed.append(len(data))
        return hash_of(data)

    monkeypatch.setattr(late, "sha256", counted)
    revert(path)
    assert len(hashed) < 20, f"{len(hashed)} hashes to carry {count} late lines"
    assert not missing_lines(path, count)
