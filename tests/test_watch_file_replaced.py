"""The live watch when something that is no session file takes the session's place.

A FIFO put where the session was made the watch's next look wait for ever
for a writer (on the app's event loop: the whole app froze), and a link to
/dev/zero made it read until memory ran out.  Now either is said once as
``Unreadable`` naming what the path is, the watch goes on, and a session
file put back is read whole (``Rewritten``).  Each check runs in a child
process with a time and memory limit, so a hang or a runaway read fails the
test instead of stopping the run.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

SAMPLE = Path(__file__).resolve().parents[1] / "sample_sessions" / "gemini-cli-0.61-tool-calls.jsonl"
LIMIT = """
import resource
resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))
"""


def _child(code: str, *args: str) -> list[str]:
    done = subprocess.run([sys.executable, "-c", LIMIT + code, *args], capture_output=True, text=True, timeout=60,
                          check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    return [json.loads(line) for line in done.stdout.splitlines()]


LOOKS = """
import os, sys, json
from inspector.live.watch import classify, initial_state, observe
path = sys.argv[1]
state = initial_state(path)
os.unlink(path)
{replace}
for _ in range(2):  # said once, then nothing new
    event, state = classify(state, observe(path, state))
    print(json.dumps(repr(event)))
print(json.dumps(initial_state(path).unreadable))
os.unlink(path)
with open(sys.argv[2], "rb") as src, open(path, "wb") as out:
    out.write(src.read())
event, state = classify(state, observe(path, state))
print(json.dumps(type(event).__name__ + " " + str(state.lines)))
"""


def _looks(tmp_path: Path, replace: str) -> list[str]:
    path = tmp_path / "session.jsonl"
    shutil.copy(SAMPLE, path)
    return _child(LOOKS.format(replace=replace), str(path), str(SAMPLE))


def test_a_fifo_in_the_files_place_is_said_not_waited_on(tmp_path: Path, machine_load: str) -> None:
    said, quiet, first_look, back = _looks(tmp_path, "os.mkfifo(path)")
    assert said.startswith("Unreadable(") and "it is a FIFO (named pipe) now, not a session file" in said
    assert quiet == "None"
    assert first_look == "it is a FIFO (named pipe) now, not a session file"
    lines = SAMPLE.read_bytes().count(b"\n")
    assert back == f"Rewritten {lines}"


def test_a_device_in_the_files_place_is_said_not_read_for_ever(tmp_path: Path, machine_load: str) -> None:
    said, quiet, first_look, back = _looks(tmp_path, "os.symlink('/dev/zero', path)")
    assert said.startswith("Unreadable(") and "it is a character device now, not a session file" in said
    assert quiet == "None"
    assert first_look == "it is a character device now, not a session file"
    assert back.startswith("Rewritten ")


WATCHED = """
import asyncio, os, sys, json
from inspector.live.watch import WatchOptions, watch_session
path = sys.argv[1]

async def main():
    ready = asyncio.Event()
    stop = asyncio.Event()
    events = watch_session(path, options=WatchOptions(quiet=0.05, max_wait=0.2), ready=ready, stop_event=stop)
    first = asyncio.ensure_future(events.__anext__())
    await asyncio.wait_for(ready.wait(), 20)
    os.unlink(path)
    os.mkfifo(path)
    event = await asyncio.wait_for(first, 20)
    print(json.dumps(type(event).__name__ + ": " + getattr(event, "reason", "")))
    os.unlink(path)
    with open(sys.argv[2], "rb") as src, open(path, "wb") as out:
        out.write(src.read())
    event = await asyncio.wait_for(events.__anext__(), 20)
    print(json.dumps(type(event).__name__))
    stop.set()

asyncio.run(main())
"""


def test_the_watch_goes_on_past_a_fifo_and_reads_the_file_put_back(tmp_path: Path, machine_load: str) -> None:
    path = tmp_path / "session.jsonl"
    shutil.copy(SAMPLE, path)
    first, then = _child(WATCHED, str(path), str(SAMPLE))
    assert first == "Unreadable: it is a FIFO (named pipe) now, not a session file"
    assert then == "Rewritten"


STARTED = """
import os, sys, json
from inspector.live import extend as live
from inspector.analysis import analyze
from inspector.session import load
path = sys.argv[1]
session = load(path)
analysis = analyze(session)
print(json.dumps(live.start(session, analysis) is not None))  # the file as read: live
os.unlink(path)
{replace}
print(json.dumps(live.start(session, analysis) is None))  # no longer the file read: not live, said at once
"""


@pytest.mark.parametrize("replace", ["os.mkfifo(path)", "os.symlink('/dev/zero', path)"])
def test_going_live_on_a_file_replaced_since_it_was_read_does_not_wait(tmp_path: Path, replace: str) -> None:
    path = tmp_path / "session.jsonl"
    shutil.copy(SAMPLE, path)
    assert _child(STARTED.format(replace=replace), str(path)) == [True, True]
