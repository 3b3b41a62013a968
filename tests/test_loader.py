"""Reading recordings: replay rules, lazy records, and the two-process reader."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

import pytest

from inspector.session import SessionError, load
from inspector.session import jsonl as jsonl_module
from inspector.session import reader as reader_module
from inspector.session.records import MessageList

META = {"sessionId": "s", "projectHash": "p"}
SAMPLES = Path(__file__).resolve().parents[1] / "sample_sessions"


def write(path: Path, records: list[object], end: str = "\n") -> Path:
    path.write_text(end.join(r if isinstance(r, str) else json.dumps(r) for r in records) + end)
    return path


def user(ident: str, text: str) -> dict[str, object]:
    return {"id": ident, "type": "user", "content": [{"text": text}]}


def test_replay_rules(tmp_path: Path) -> None:
    path = write(tmp_path / "s.jsonl", [
        META, user("a", "one"), user("b", "two"), user("a", "one again"),  # same id: replaced in place
        user("c", "three"), {"$rewindTo": "c"},  # drops c and after
        {"$set": {"summary": "sum"}}, user("d", "four"),
    ])
    session = load(path)
    assert [m["id"] for m in session.messages] == ["a", "b", "d"]
    assert session.messages[0]["content"][0]["text"] == "one again"
    assert session.message_lines == {"a": 4, "b": 3, "d": 8}
    assert session.metadata["summary"] == "sum"


def test_checkpoint_and_unknown_rewind(tmp_path: Path) -> None:
    path = write(tmp_path / "s.jsonl", [
        META, user("a", "one"), {"$set": {"messages": [user("x", "kept")]}}, user("b", "two"),
    ])
    assert [m["id"] for m in load(path).messages] == ["x", "b"]
    write(path, [META, user("a", "one"), {"$rewindTo": "nope"}, user("b", "two")])
    assert [m["id"] for m in load(path).messages] == ["b"]


def test_records_are_parsed_when_read_and_stay_the_same_object(tmp_path: Path) -> None:
    session = load(write(tmp_path / "s.jsonl", [META, user("a", "one"), user("b", "two")]))
    assert isinstance(session.messages, MessageList)
    first = session.messages[0]
    assert session.messages[0] is first
    assert list(session.messages)[1]["id"] == "b"
    assert session.messages + [] == [first, session.messages[1]]  # noqa: RUF005 - MessageList.__add__


@pytest.mark.parametrize("end", ["\r\n", "\r"])
def test_line_numbers_with_cr_line_ends(tmp_path: Path, end: str) -> None:
    session = load(write(tmp_path / "s.jsonl", [META, "not json", user("a", "x")], end=end))
    assert [(w.line, "not valid JSON" in w.message) for w in session.warnings] == [(2, True)]
    assert session.message_lines == {"a": 3}


def test_a_one_line_recording_is_read_as_jsonl(tmp_path: Path) -> None:
    # Gemini CLI reads a single line as a recording: repeated ids collapse.
    path = write(tmp_path / "s.json", [{**META, "messages": [user("a", "one"), user("a", "two")]}])
    session = load(path)
    assert session.format == "jsonl"
    assert [m["content"][0]["text"] for m in session.messages] == ["two"]


@pytest.mark.parametrize("ident", [1.5, 7, None, ["a"], {"a": 1}, True])
def test_a_legacy_message_whose_id_is_not_text_keeps_its_turns(tmp_path: Path, ident: object) -> None:
    # Gemini CLI builds a legacy file's history without reading ids, so it resumes such a file;
    # the inspector reads it too (the turn just has no record id) instead of failing in the middle.
    from inspector.analysis import analyze

    sample = json.loads((SAMPLES / "legacy-pomodoro.json").read_text(encoding="utf-8"))
    odd = json.loads(json.dumps(sample))
    odd["messages"][1]["id"] = ident
    (tmp_path / "plain.json").write_text(json.dumps(sample, indent=2))
    (tmp_path / "odd.json").write_text(json.dumps(odd, indent=2))
    plain, changed = analyze(load(tmp_path / "plain.json")), analyze(load(tmp_path / "odd.json"))
    assert [t.content for t in changed.turns] == [t.content for t in plain.turns]
    assert list(changed.quarters) == list(plain.quarters)
    moved = [t.index for t in changed.turns if t.message_index == 1]
    assert moved and all(changed.turns[i].record_id is None for i in moved)
    assert all(changed.turns[i].record_id == plain.turns[i].record_id for i in range(len(plain.turns))
               if i not in moved)
    shown = subprocess.run([sys.executable, "-m", "inspector", "analyze", "--json", str(tmp_path / "odd.json")],
                           capture_output=True, text=True, check=False)
    assert shown.returncode == 0, shown.stderr
    assert [row["record_id"] for row in json.loads(shown.stdout)["history"]][moved[0]] is None


def test_the_first_bad_message_in_file_order_is_reported(tmp_path: Path) -> None:
    path = write(tmp_path / "s.jsonl", [META, user("a", "x"), {"id": "b", "type": "user", "content": 1},
                                        {"id": "c", "type": "gemini", "content": 2}])
    with pytest.raises(SessionError) as caught:
        load(path)
    assert caught.value.line == 3


def _big_recording(count: int) -> bytes:
    rng = random.Random(7)
    lines = [json.dumps(META)]
    for i in range(count):
        ident = f"m{rng.randint(0, count // 2)}"  # many ids come back, as re-appended messages do
        roll = rng.random()
        if roll < 0.02:
            lines.append(json.dumps({"$rewindTo": f"m{rng.randint(0, count)}"}))
        elif roll < 0.03:
            lines.append("{broken")
        elif roll < 0.04:
            lines.append(json.dumps({"$set": {"messages": [user(f"c{i}", "checkpoint")]}}))
        else:
            calls = [{"id": "t", "name": "read_file", "args": {"n": 1.5}, "result": "é" * rng.randint(0, 50)}]
            lines.append(json.dumps({"id": ident, "type": rng.choice(["user", "gemini"]),
                                     "content": f"text {i} 😀", "toolCalls": calls, "tokens": {"input": i}}))
    return ("\n".join(lines) + "\n").encode()


_TWO_PROCESSES = """
import sys
from pathlib import Path
from inspector.session import jsonl, parse, reader
import os
data = Path(sys.argv[1]).read_bytes()
serial_items = jsonl.scan(data)
reader.PARALLEL_MIN_BYTES = 0
assert reader.parallel_mode(len(data)) == "fork", "not single-threaded?"
items, lines = reader.scan_file(data)
def lines_of(items):  # (the rows' blocks differ: a half's pieces end where the half does)
    return [item for item in items if item[0] != "b"]
assert len(lines_of(items)) == len(lines_of(serial_items))
def without_rows(items):  # (where the rows are differs: in one block, or in either half's)
    return [(i, w, l, p) for i, w, _, l, p in jsonl.replay(items).entries.values()]
assert without_rows(items) == without_rows(serial_items)
assert lines == data.count(b"\\n")
parallel = parse(Path("x.jsonl"), data)
os.environ["SESSION_INSPECTOR_SERIAL"] = "1"
serial = parse(Path("x.jsonl"), data)
assert parallel.turn_index == serial.turn_index
assert list(parallel.messages) == list(serial.messages)
assert parallel.warnings == serial.warnings and parallel.warnings
print("same")
"""


def test_two_process_reading_equals_one(tmp_path: Path) -> None:
    # In a fresh interpreter: the reader forks only from a single-threaded process.
    path = tmp_path / "big.jsonl"
    path.write_bytes(_big_recording(3000))
    done = subprocess.run([sys.executable, "-c", _TWO_PROCESSES, str(path)], capture_output=True, text=True,
                          check=False, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "same"


def test_no_fork_from_a_threaded_process(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(reader_module, "PARALLEL_MIN_BYTES", 0)
    monkeypatch.setattr(reader_module.threading, "active_count", lambda: 2)
    assert reader_module.parallel_mode(len(_big_recording(10))) == "spawn"


def test_replaced_copies_are_not_measured_but_the_final_one_is() -> None:
    data = _big_recording(500)
    items = jsonl_module.scan(data)
    state = jsonl_module.replay(items)
    assert all(figures != () or not _turns_expected(where, data) for _, where, figures, _, _ in state.entries.values())


def _turns_expected(where: object, data: bytes) -> bool:
    from inspector.session.history import message_contents
    from inspector.session.records import loads_line

    record = where if isinstance(where, dict) else loads_line(data[where[0]:where[1]])  # type: ignore[index]
    return bool(message_contents(record))


# -- big recordings, read block by block from the file ----------------------------------------------

_STREAMED = """
import hashlib, os, sys
from pathlib import Path
import threading
from inspector.session import loader, reader
from inspector.session.records import MessageList
path = Path(sys.argv[1])
data = path.read_bytes()
os.environ["SESSION_INSPECTOR_SERIAL"] = "1"
whole = loader.parse(path, data)  # the bytes held in memory, one process
loader.STREAM_MIN_BYTES = 0
reader.BLOCK_BYTES = int(sys.argv[2])  # many blocks, and lines longer than a block
reader.PARALLEL_MIN_BYTES = 0
release = threading.Event()
for mode in ("serial", "fork", "spawn"):
    if mode == "fork":
        del os.environ["SESSION_INSPECTOR_SERIAL"]
    if mode == "spawn":  # another thread runs, as in the app: a fresh interpreter reads the second part
        threading.Thread(target=release.wait).start()
        def not_here(*args):
            raise AssertionError("the spawned process failed: its part was read here")
        reader.scan_tail = not_here
    assert reader.parallel_mode(len(data)) == (None if mode == "serial" else mode)
    streamed = loader.load(path)
    assert isinstance(streamed.messages, MessageList) and streamed.messages._data is None, mode
    for field in ("format", "metadata", "message_lines", "line_count", "size", "sha256", "ends_with_newline",
                  "warnings", "turn_index"):
        assert getattr(streamed, field) == getattr(whole, field), (mode, field)
    assert streamed.sha256 == hashlib.sha256(data).hexdigest()
    assert list(streamed.messages) == list(whole.messages), mode
release.set()
print("same")
"""


@pytest.mark.parametrize("block", [64, 4096])
@pytest.mark.parametrize("ending", ["\n", ""])
def test_streamed_reading_equals_reading_the_whole_file(tmp_path: Path, block: int, ending: str) -> None:
    path = tmp_path / "big.jsonl"
    data = _big_recording(2000)
    path.write_bytes(data if ending else data.rstrip(b"\n") + b'\n{"id": "half-writ')
    done = subprocess.run([sys.executable, "-c", _STREAMED, str(path), str(block)], capture_output=True,
                          text=True, check=False, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "same"


@pytest.mark.usefixtures("stream_everything")
def test_streamed_file_replaced_later_still_reads_what_was_analysed(tmp_path: Path) -> None:
    path = write(tmp_path / "s.jsonl", [META, user("a", "one"), user("b", "two")])
    session = load(path)
    assert isinstance(session.messages, MessageList) and session.messages._data is None
    replacement = write(tmp_path / "new.jsonl", [META, user("z", "other")])
    replacement.replace(path)  # as Gemini CLI's migration or our revert replace a file
    assert [m["content"][0]["text"] for m in session.messages] == ["one", "two"]


@pytest.mark.usefixtures("stream_everything")
def test_streamed_file_rewritten_in_place_is_reported_not_misread(tmp_path: Path) -> None:
    path = write(tmp_path / "s.jsonl", [META, user("a", "one"), user("b", "two")])
    session = load(path)
    with path.open("r+b") as handle:  # same inode, other bytes
        handle.write(json.dumps(META).encode() + b"\n" + json.dumps(user("x", "eno")).encode())
        handle.truncate()
    with pytest.raises(SessionError, match="changed on disk since it was read"):
        session.messages[1]


@pytest.mark.usefixtures("stream_everything")
@pytest.mark.parametrize(("content", "expected"), [
    (b'{"sessionId":"s","projectHash":"p"}\n{"id":"a",\x00}\n', "s.jsonl:2: binary data (a NUL byte at offset 46)"),
    (b'{"sessionId":"s","projectHash":"p"}\n{"id":"a","type":"user","content":7}\n',
     ":2: message 'a': 'content' must be text"),
])
def test_streamed_bad_input_gives_the_same_one_line_error(tmp_path: Path, content: bytes, expected: str) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(content)
    with pytest.raises(SessionError, match=expected.replace("(", r"\(").replace(")", r"\)")):
        load(path)


@pytest.mark.usefixtures("stream_everything")
def test_streamed_cr_line_ends_fall_back_to_the_whole_file(tmp_path: Path) -> None:
    session = load(write(tmp_path / "s.jsonl", [META, "not json", user("a", "x")], end="\r\n"))
    assert session.message_lines == {"a": 3}
    assert [w.line for w in session.warnings] == [2]
