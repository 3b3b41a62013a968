"""Fault injection, bounded in count and time: nothing is ever lost.

* ``kill -9`` of a real apply or revert process (forked from a server that has the project imported:
  ``tests/fault_child.py``) at every step of its writes
  (the store's write hook sends the process SIGKILL at the chosen call) and at
  seeded random moments of the apply or revert itself (the child says when it
  starts; the kill comes a random share of the operation's measured span later);
* a real concurrent rewriter (Gemini CLI saving a legacy file by temp +
  rename, or in place) and a real appender (a JSONL recording) racing applies
  and reverts;
* a short write, then a full disk, on the journal, at seeded random lengths.

After every fault: the session is the original or the applied file, whole;
the journal reads and agrees with the file; revert gives back the original
byte for byte (keeping what other writers wrote); no writer's message is
missing.  Each test prints ``tries / survived / lost`` (``pytest -s``) and
asserts lost == 0.
"""

from __future__ import annotations

import contextlib
import errno
import json
import random
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from inspector.session import history, load
from inspector.store import StoreError, apply_history, read_history, revert, undoable
from tests import fault_child
from tests.test_store import compacted, same, sample_copy

REPO = Path(__file__).resolve().parents[1]
SEED = 1212
NAMES = ("legacy-pomodoro.json", "coding-task.jsonl")

def _run(mode: str, path: Path, kill_at: int) -> tuple[bool, int, float]:
    """(killed, hook calls made, seconds the apply or revert itself took); raises if the child failed otherwise."""
    killed, calls, seconds, _ = fault_child.start(mode, path, kill_at).finish()
    return killed, kill_at if killed else calls, seconds


def _steps(mode: str, path: Path) -> list[str]:
    """The write steps an apply (or revert) of ``path`` goes through, in order (the file is used up)."""
    killed, _, _, names = fault_child.start(mode, path, 0).finish()
    assert not killed
    return names


def _apply_here(path: Path) -> None:
    """The child's apply, in this process (a revert's setup: no fault there)."""
    session = load(path)
    turns = history(session)
    apply_history(session, turns, _new_history(path), [None, None, *turns[2:]])


def _new_history(path: Path) -> list[dict[str, object]]:
    turns = history(load(path))
    return [{"role": "user", "parts": [{"text": "<state_snapshot>kept</state_snapshot>"}]},
            {"role": "model", "parts": [{"text": "Got it."}]}] + [t.content for t in turns[2:]]


def _check_after_apply_fault(path: Path, original: bytes, new: list[dict[str, object]]) -> str | None:
    """None if nothing is lost after a killed apply (and it is undone cleanly), else what is wrong."""
    data = path.read_bytes()
    if data != original and not same([t.content for t in history(load(path))], new):
        return "the file is neither the original nor the applied history"
    try:
        pending = undoable(path)
    except StoreError as exc:
        return f"the journal does not read: {exc}"
    if data != original and not pending:
        return "the file is compacted but nothing can be undone"
    if pending:
        revert(path)
    if path.read_bytes() != original:
        return "revert did not give back the original"
    return None


def _figures(name: str, tries: int, survived: int, lost: list[str]) -> None:
    print(f"\nfault injection {name}: {tries} tries, {survived} survived, {len(lost)} lost")
    assert not lost, lost[:5]


@pytest.mark.parametrize("name", NAMES)
def test_kill_9_at_every_step_of_apply_and_revert(name: str, tmp_path: Path) -> None:
    dry = sample_copy(tmp_path / "dry", name)
    killed, steps, _ = _run("apply", dry, 0)
    assert not killed and steps > 3
    new = _new_history(sample_copy(tmp_path / "ref", name))
    tries, survived, lost = 0, 0, []
    for kill_at in range(1, steps + 1):
        path = sample_copy(tmp_path / f"apply-{kill_at}", name)
        original = path.read_bytes()
        killed, _, _ = _run("apply", path, kill_at)
        assert killed
        tries += 1
        problem = _check_after_apply_fault(path, original, new)
        if problem:
            lost.append(f"apply killed at call {kill_at}: {problem}")
        else:
            survived += 1
    # revert: apply whole, then kill the revert at each of its steps
    dry = sample_copy(tmp_path / "dry-revert", name)
    _apply_here(dry)
    _, revert_steps, _ = _run("revert", dry, 0)
    for kill_at in range(1, revert_steps + 1):
        path = sample_copy(tmp_path / f"revert-{kill_at}", name)
        original = path.read_bytes()
        _apply_here(path)
        applied = path.read_bytes()
        killed, _, _ = _run("revert", path, kill_at)
        assert killed
        tries += 1
        problem = _check_after_revert_fault(path, original, applied)
        if problem:
            lost.append(f"revert killed at call {kill_at}: {problem}")
        else:
            survived += 1
    _figures(f"kill -9 by step ({name})", tries, survived, lost)


@pytest.mark.parametrize("mode", ["apply", "revert"])
@pytest.mark.parametrize("name", NAMES)
def test_kill_9_at_random_moments(name: str, mode: str, machine_load: str, tmp_path: Path) -> None:
    """SIGKILL at a seeded random moment of the apply (or revert) itself: the child says when it starts
    (after its imports and the session's read), and the kill comes a random share of that operation's
    measured span later (up to 1.2 of it, so some runs finish first)."""
    rng = random.Random(SEED)
    new = _new_history(sample_copy(tmp_path / "ref", name))
    spans = []
    for probe in range(3):  # how long the operation takes on this machine now
        path = sample_copy(tmp_path / f"probe-{probe}", name)
        if mode == "revert":
            _apply_here(path)
        spans.append(_run(mode, path, 0)[2])
    span = sorted(spans)[1]
    tries, survived, lost = 0, 0, []
    landed = {"before any change": 0, "mid-way": 0, "finished first": 0}
    for index in range(8):  # (quiet and busy: 16 in all)
        path = sample_copy(tmp_path / f"try-{index}", name)
        original = path.read_bytes()
        if mode == "revert":
            _apply_here(path)
        before = path.read_bytes()
        child = fault_child.start(mode, path, 0)
        child.ready()
        # the fault: SIGKILL after a seeded random share of the operation's span (not a wait for anything)
        time.sleep(rng.uniform(0.0, 1.2) * span)
        child.kill()
        killed, *_ = child.finish()
        tries += 1
        if not killed:
            landed["finished first"] += 1
        else:
            landed["before any change" if path.read_bytes() == before else "mid-way"] += 1
        if mode == "apply":
            problem = _check_after_apply_fault(path, original, new)
        else:
            problem = _check_after_revert_fault(path, original, before)
        if problem:
            lost.append(f"try {index}: {problem}")
        else:
            survived += 1
    print(f"\n{mode} {name}: span {span * 1000:.1f} ms; " + ", ".join(f"{n} {k}" for k, n in landed.items()))
    _figures(f"kill -9 at random moments of {mode} ({name})", tries, survived, lost)


def _check_after_revert_fault(path: Path, original: bytes, applied: bytes) -> str | None:
    """None if nothing is lost after a killed revert: the file whole, the journal agreeing, undo finishing."""
    now = path.read_bytes()
    if now not in (original, applied):
        return "the file is neither the original nor the applied one"
    try:
        pending = undoable(path)
    except StoreError as exc:
        return f"the journal does not read: {exc}"
    if (now == applied) != bool(pending):
        return "the journal disagrees with the file"
    if pending:
        revert(path)
    return None if path.read_bytes() == original else "the original did not come back"


# A real other process: saves once when "go" arrives and says "saved", then
# (with "more") keeps saving freely until "stop"; prints how many saves it made.  The
# rewriter saves a legacy session with one more message (temp + rename, or
# in place, alternately), as Gemini CLI does; the appender appends a record
# to a JSONL recording.
REWRITER = r"""
import json, os, select, sys
path = sys.argv[1]
def save(n):
    with open(path, "rb") as handle:
        doc = json.loads(handle.read())
    doc["messages"].append({"id": f"w-{n}", "timestamp": "t", "type": "user", "content": [{"text": f"WRITER {n}"}]})
    data = json.dumps(doc, indent=2).encode()
    if n % 2:
        with open(path, "wb") as handle:
            handle.write(data)
    else:
        temp = path + ".tmp"
        with open(temp, "wb") as handle:
            handle.write(data)
        os.replace(temp, path)
"""

APPENDER = r"""
import json, os, select, sys
path = sys.argv[1]
def save(n):
    record = {"id": f"w-{n}", "timestamp": "t", "type": "user", "content": [{"text": f"WRITER {n}"}]}
    fd = os.open(path, os.O_WRONLY | os.O_APPEND)
    os.write(fd, (json.dumps(record) + "\n").encode())
    os.close(fd)
"""

LOOP = r"""
print("ready", flush=True)
sys.stdin.readline()
save(0)
print("saved", flush=True)
n = 1
if sys.argv[2] == "more":
    while not select.select([sys.stdin], [], [], 0)[0]:
        save(n)
        n += 1
sys.stdin.readline()
print(n, flush=True)
"""


def _operation(mode: str, path: Path, hook: Callable[[str], None] | None = None) -> Callable[[], object]:
    """The apply (from a preview read now, so the writer's saves land after it) or, once the file
    has been applied to, the revert that ``mode`` names."""
    if mode == "revert":
        _apply_here(path)
        return lambda: revert(path, hook=hook)
    session = load(path)
    turns = history(session)
    new, sources = compacted(turns, 2)
    return lambda: apply_history(session, turns, new, sources, allow_grown=True, hook=hook)


def steps_of(mode: str, name: str, folder: Path) -> list[str]:
    """The hook steps an apply (or revert) of a copy of ``name`` goes through, in order."""
    steps: list[str] = []
    _operation(mode, sample_copy(folder, name), lambda step: steps.append(step))()
    return steps


def race_once(mode: str, name: str, writer: str, index: int, at: int, folder: Path) -> tuple[str, int, list[int]]:
    """One try: the writer's first save lands at step ``at`` of an apply (or revert) of a fresh copy
    of ``name``; with an odd ``index`` it then keeps saving freely until the operation ends.  Returns
    ("done" or "refused", how many messages the writer saved, those of them missing after it)."""
    path = sample_copy(folder, name)
    calls = {"n": 0}
    process = subprocess.Popen([sys.executable, "-c", writer + LOOP, str(path), ("once", "more")[index % 2]],
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert process.stdin is not None and process.stdout is not None
    assert process.stdout.readline().strip() == "ready"

    def hook(step: str) -> None:
        if calls["n"] == at:
            assert process.stdin is not None and process.stdout is not None
            process.stdin.write("go\n")
            process.stdin.flush()
            assert process.stdout.readline().strip() == "saved"  # the event: its save is on disk
        calls["n"] += 1

    run = _operation(mode, path, hook)
    outcome = "done"
    try:
        run()
    except StoreError as exc:
        assert exc.reason in ("changed", "stale", "conflict", "busy"), exc
        outcome = "refused"
    count = int(process.communicate("stop\n", timeout=60)[0])
    text = json.dumps([t.content for t in history(load(path))])
    return outcome, count, [n for n in range(count) if f'"WRITER {n}"' not in text]


@pytest.mark.parametrize("mode", ["apply", "revert"])
@pytest.mark.parametrize(("name", "writer"), [("legacy-pomodoro.json", REWRITER), ("coding-task.jsonl", APPENDER)],
                         ids=["rewriter", "appender"])
def test_a_concurrent_writer_never_loses_a_message(
        name: str, writer: str, mode: str, machine_load: str, tmp_path: Path) -> None:
    """The writer's first save lands at a seeded random step of the apply (or revert); then, one try in
    two, it keeps saving as fast as it can (racing the rest of it freely).  A few tries here, quiet
    and busy; ``bench/bench_store_race.py`` runs 20 of each with every core busy."""
    rng = random.Random(SEED)
    steps = steps_of(mode, name, tmp_path / "probe")
    tries, survived, lost = 0, 0, []
    outcomes = {"done": 0, "refused": 0}
    for index in range(6):
        at = rng.randrange(len(steps))
        outcome, count, missing = race_once(mode, name, writer, index, at, tmp_path / f"try-{index}")
        outcomes[outcome] += 1
        tries += 1
        if missing:
            lost.append(f"try {index} (first save at step {at}, {steps[at]}): "
                        f"{len(missing)} of {count} writer messages missing")
        else:
            survived += 1
    print(f"\n{mode} {name} ({machine_load}): {outcomes['done']} done, {outcomes['refused']} refused")
    _figures(f"concurrent {('appender', 'rewriter')[writer is REWRITER]} during {mode} ({name})",
             tries, survived, lost)


def test_short_writes_and_a_full_disk_on_the_journal(tmp_path: Path) -> None:
    rng = random.Random(SEED)
    tries, survived, lost = 0, 0, []
    for index in range(16):
        name = NAMES[index % 2]
        path = sample_copy(tmp_path / f"try-{index}", name)
        original = path.read_bytes()
        session = load(path)
        turns = history(session)
        new, sources = compacted(turns, 2)
        apply_history(session, turns, new, sources)  # one good apply first
        once = path.read_bytes()
        which, taken = rng.randrange(1, 4), rng.randrange(1, 200)
        calls = {"n": 0}

        def hook(step: str, which: int = which, taken: int = taken, calls: dict[str, int] = calls) -> int | None:
            if step != "journal-write":
                return None
            calls["n"] += 1
            if calls["n"] == which:
                return taken  # a short write...
            if calls["n"] == which + 1:
                raise OSError(errno.ENOSPC, "No space left on device")  # ...then the disk is full
            return None

        session = load(path)
        turns = history(session)
        new, sources = compacted(turns, 2)
        with contextlib.suppress(StoreError):
            apply_history(session, turns, new, sources, hook=hook)
        tries += 1
        try:
            entries = read_history(path).entries
            while undoable(path):
                revert(path)
        except StoreError as exc:
            lost.append(f"try {index}: {exc}")
            continue
        if path.read_bytes() != original:
            lost.append(f"try {index}: the original did not come back ({len(entries)} entries)")
        elif once == original:
            lost.append(f"try {index}: the first apply did nothing")
        else:
            survived += 1
    _figures("short write + ENOSPC on the journal", tries, survived, lost)


def test_a_kill_while_the_recording_is_written_never_cuts_a_line(tmp_path: Path) -> None:
    """SIGKILL half way through writing the compacted recording, then Gemini CLI appends its next
    message.  Written by appending, the kill could leave half a line without its newline (the
    kernel stops a long write at a page when a fatal signal comes), and Gemini CLI's line would
    join it: a line no reader parses, its message lost.  The recording is written whole beside
    itself and swapped in, so the file is still the original, Gemini CLI's line reads, and the
    journal settles the apply as never having reached the file."""
    steps = _steps("apply", sample_copy(tmp_path / "dry", "coding-task.jsonl"))
    partial = [k + 1 for k, step in enumerate(steps) if step == "temp-partial"]
    assert len(partial) >= 2, steps  # the backup's write, then the recording's
    path = sample_copy(tmp_path / "live", "coding-task.jsonl")
    original = path.read_bytes()
    killed, _, _ = _run("apply", path, partial[-1])
    assert killed
    line = b'{"id":"gemini-next","timestamp":"2099-01-01T00:00:00.000Z","type":"user","content":"next"}\n'
    with path.open("ab") as gemini:  # appendFileSync, as Gemini CLI records
        gemini.write(line)
    assert path.read_bytes() == original + line
    assert history(load(path))[-1].content == {"role": "user", "parts": [{"text": "next"}]}
    [result] = revert(path)
    assert result.note == "the apply had not changed the file"
    assert path.read_bytes() == original + line and undoable(path) == []
