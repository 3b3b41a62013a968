"""A writer process appending (as Gemini CLI does) while apply and revert run loses no line."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from inspector.analysis import analyze
from inspector.session import history, load
from inspector.store import apply_history, revert
from tests.test_store import PATHS, compacted, copy_session, same

# Appends one message record per open/write/close, like fs.appendFileSync,
# until "stop" arrives on stdin ("mark": one more line now, then "marked");
# prints "started" after its first line and the number of lines at the end.
WRITER = r"""
import json, os, select, sys
path, tag = sys.argv[1], sys.argv[2]
n = 0
def write():
    global n
    record = {"id": f"{tag}-{n}", "timestamp": "t", "type": "user", "content": [{"text": f"{tag} line {n}"}]}
    fd = os.open(path, os.O_WRONLY | os.O_APPEND)
    os.write(fd, (json.dumps(record) + "\n").encode())
    os.close(fd)
    n += 1
write()
print("started", flush=True)
while True:
    if select.select([sys.stdin], [], [], 0)[0]:
        if sys.stdin.readline().strip() != "mark":
            break
        write()  # one more line, said when it is on disk
        print("marked", flush=True)
    write()
print(n, flush=True)
"""


class Writer:
    def __init__(self, path: Path, tag: str) -> None:
        self.tag = tag
        self.process = subprocess.Popen(
            [sys.executable, "-c", WRITER, str(path), tag],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
        )
        assert self.process.stdout is not None
        assert self.process.stdout.readline().strip() == "started"

    def mark(self) -> None:
        """Have the writer append one more line now; returns once it is on disk (an event, not a wait)."""
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write("mark\n")
        self.process.stdin.flush()
        assert self.process.stdout.readline().strip() == "marked"

    def stop(self) -> int:
        out, _ = self.process.communicate("stop\n", timeout=30)
        return int(out.strip())

    def lines(self, count: int) -> list[bytes]:
        return [
            (json.dumps({"id": f"{self.tag}-{n}", "timestamp": "t", "type": "user",
                         "content": [{"text": f"{self.tag} line {n}"}]}) + "\n").encode()
            for n in range(count)
        ]


def test_writer_appending_during_apply_and_revert(machine_load: str, tmp_path: Path) -> None:
    matches = [p for p in PATHS if p.name == "coding-task.jsonl"]
    if not matches:
        pytest.skip("sample coding-task.jsonl not present")
    path = copy_session(matches[0], tmp_path)
    original = path.read_bytes()

    first = Writer(path, "a")
    try:
        session = load(path)  # the preview: the writer keeps going after it
        first.mark()  # (at least one line lands after the preview, however busy the machine)
        turns = history(session)
        new, sources = compacted(turns, analyze(session).split_point)
        entry = apply_history(session, turns, new, sources, allow_grown=True)
    finally:
        count_a = first.stop()
    assert count_a > 1
    after_apply = [t.content for t in history(load(path))]
    assert same(after_apply[: len(new)], new), "the new conversation comes first"
    def writer_texts(contents: list[dict]) -> list[str]:  # type: ignore[type-arg]
        return [c["parts"][0].get("text", "") for c in contents
                if c["role"] == "user" and c["parts"][0].get("text", "").startswith("a line ")]

    previewed = set(writer_texts([t.content for t in turns]))
    expected_after = writer_texts(new) + [f"a line {n}" for n in range(count_a) if f"a line {n}" not in previewed]
    assert len(expected_after) > len(writer_texts(new)), "the writer appended after the preview"
    assert Counter(writer_texts(after_apply)) == Counter(expected_after), \
        "every line the writer appended after the preview is a message after the apply, exactly once"

    second = Writer(path, "b")
    try:
        [result] = revert(path)
    finally:
        count_b = second.stop()
    data = path.read_bytes()
    assert data.startswith(original)
    rest = data[len(original):].splitlines(keepends=True)
    expected = first.lines(count_a) + second.lines(count_b)
    assert Counter(rest) == Counter(expected), "revert drops only what the apply wrote, and loses no line"
    assert result.entry.id == entry.id
