"""Extending a loaded recording by appended lines gives what reading the whole file gives.

Every JSONL session in ``sample_sessions/`` and generated sessions are cut at
every line boundary (or at random ones): the prefix is read as usual, the
rest is appended through ``live.extend`` (with copies made ahead by
``live.prepare`` or not), and every figure is compared with reading the whole
file; the state an extension started from is checked unchanged.  When
``extend`` declines (``Declined``), the test checks it declined for a reason
the module names.
"""

from __future__ import annotations

import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from inspector.analysis import Analysis, analyze
from inspector.deciding import estimate_gap
from inspector.live import extend as live
from inspector.session import Session, SessionError, load
from inspector.session.records import MessageList

SAMPLES = Path(__file__).resolve().parent.parent / "sample_sessions"
JSONL = sorted(p for p in SAMPLES.glob("*.jsonl"))
META = {"sessionId": "s", "projectHash": "p", "startTime": "2026-01-01T00:00:00Z", "kind": "main"}


def figures_of(session: Session, analysis: Analysis) -> dict[str, Any]:
    """Everything the app and ``analyze --json`` show, and the session's own facts."""
    report = analysis.to_json(session.path, session.format, session.session_id)
    return {
        "report": report,
        "context": analysis.context,
        "gap": estimate_gap(analysis, session.turn_index),  # the header's "held twice" (live: deciding.TwiceHeld)
        "agentic": analysis.agentic_candidates,
        "fresh_from": analysis.fresh_from,
        "split_columns": analysis.split_columns,  # the view compression reads, extended in place
        "environment": analysis.environment_quarters,
        "truncations": list(analysis.truncations),
        "excerpts": [t.excerpt for t in analysis.truncations],
        "turns": [(t.index, t.record_id, t.message_index, t.is_tool_result, t.content) for t in analysis.turns],
        "messages": list(session.messages),
        "message_lines": list(session.message_lines.items()),
        "turn_index": session.turn_index,
        "metadata": session.metadata,
        "size": session.size,
        "sha256": session.sha256,
        "line_count": session.line_count,
        "warnings": [w.to_json() for w in session.warnings],
    }


def declined_for_a_reason(appended: bytes) -> bool:
    """A line ``extend`` must leave to a full read (see inspector.live.extend)."""
    for raw in appended.splitlines():
        try:
            record = orjson.loads(raw)
        except orjson.JSONDecodeError:
            return True
        if not isinstance(record, dict):
            continue
        if "$rewindTo" in record or "messages" in record or "messages" in (record.get("$set") or {}):
            return True
        if "id" in record:
            return True  # a repeated id (checked precisely by the caller's count)
    return False


def line_ends(data: bytes, start: int = 0) -> list[int]:
    """The offset after each newline of ``data`` from ``start`` on (found by ``bytes.find``, not byte by byte)."""
    ends = []
    found = data.find(b"\n", start)
    while found != -1:
        ends.append(found + 1)
        found = data.find(b"\n", found + 1)
    return ends


_WHOLE: dict[tuple[Path, bytes], dict[str, Any]] = {}


def whole_file_figures(path: Path, data: bytes) -> dict[str, Any]:
    """The figures of reading ``path`` (which holds ``data``) from scratch; the same bytes give the same
    figures, so each file is read once however many cuts end on it."""
    key = (path, data)
    if key not in _WHOLE:
        _WHOLE.clear()  # one file at a time: keep no more than one whole session in memory
        fresh = load(path)
        _WHOLE[key] = figures_of(fresh, analyze(fresh))
    return _WHOLE[key]


def read_live(path: Path) -> live.LiveState | str:
    """The live state of the file as it is now, or why there is none."""
    try:
        session = load(path)
    except SessionError:  # a prefix that is not a session yet (no metadata line)
        return "unreadable prefix"
    state = live.start(session, analyze(session))
    return "not extendable" if state is None else state


def extend_by(state: live.LiveState, chunk: bytes, offset: int, prepared: bool,
              before: dict[str, Any] | None = None) -> live.LiveState | None:
    """``state`` extended by ``chunk`` (already appended to its file at ``offset``), with the copies made
    ahead or not, checked: a second extension is refused and the state it started from is as it was
    (``before``: its figures, when known).  None: declined, for a reason the module names."""
    if before is None:
        before = figures_of(state.session, state.analysis)
    if prepared:
        live.prepare(state)
    extended = live.extend(state, chunk, offset)
    if isinstance(extended, live.Declined):
        assert declined_for_a_reason(chunk), f"declined a plain append at byte {offset}: {chunk[:200]!r}"
        return None
    again = live.extend(state, chunk, offset)  # a state already extended is refused
    assert isinstance(again, live.Declined) and again.reason == "this version was already extended"
    # extending (growing the copies made ahead, or its own) left the state it started from as it was
    assert figures_of(state.session, state.analysis) == before
    return extended


def same_as_a_whole_read(state: live.LiveState, path: Path, data: bytes, where: str) -> None:
    got = figures_of(state.session, state.analysis)
    want = whole_file_figures(path, data)
    for key in want:
        assert got[key] == want[key], f"{key} differs {where}"


def check_cut(tmp_path: Path, data: bytes, cut: int, *, steps: int = 1) -> str:
    """Read ``data[:cut]``, append the rest in ``steps`` pieces (at line ends), compare."""
    path = tmp_path / "live.jsonl"
    path.write_bytes(data[:cut])
    state = read_live(path)
    if isinstance(state, str):
        return state
    ends = line_ends(data, cut)
    pieces = sorted(set(random.Random(cut).sample(ends, min(steps - 1, len(ends)))) | {len(data)})
    offset = cut
    chooser = random.Random(-cut)
    with path.open("ab") as handle:
        for end in pieces:
            if end <= offset:
                continue
            chunk = data[offset:end]
            handle.write(chunk)
            handle.flush()
            extended = extend_by(state, chunk, offset, prepared=chooser.random() < 0.5)
            if extended is None:
                return "declined"
            state = extended
            offset = end
    same_as_a_whole_read(state, path, data, f"after cutting at byte {cut}")
    return "extended"


def follow_line_by_line(tmp_path: Path, data: bytes, start: int) -> list[str]:
    """Read ``data[:start]``, then append the rest one line at a time as Gemini CLI does, each extending the
    state the last one gave (as the app follows a file), or, declined, read again from the file; the end
    compared with a whole read.  The outcome of each line, in order."""
    path = tmp_path / "live.jsonl"
    path.write_bytes(data[:start])
    state = read_live(path)
    assert not isinstance(state, str), state
    outcomes = []
    offset = start
    chooser = random.Random(start)
    with path.open("ab") as handle:
        for end in line_ends(data, start):
            chunk = data[offset:end]
            handle.write(chunk)
            handle.flush()
            extended = extend_by(state, chunk, offset, prepared=chooser.random() < 0.5)
            outcomes.append("declined" if extended is None else "extended")
            if extended is None:
                again = read_live(path)
                assert not isinstance(again, str), again
                extended = again
            state = extended
            offset = end
    same_as_a_whole_read(state, path, data, f"after following from byte {start} line by line")
    return outcomes


@pytest.mark.parametrize("sample", JSONL, ids=lambda p: p.name)
def test_every_line_boundary_of_the_samples(sample: Path, tmp_path: Path) -> None:
    """A read that ends at any line boundary, extended by the next line, gives what reading that line too
    gives (the read at the next boundary, which the loop makes anyway); from a few boundaries the whole
    rest appended at once gives what reading the whole file gives."""
    data = sample.read_bytes()
    ends = line_ends(data)
    path = tmp_path / "live.jsonl"
    outcomes = []
    extended: dict[str, Any] | None = None  # the figures of the last read extended by one line
    chooser = random.Random(len(data))
    for cut, following in zip(ends, [*ends[1:], None], strict=True):
        path.write_bytes(data[:cut])
        state = read_live(path)
        if isinstance(state, str):
            outcomes.append(state)
            extended = None
            continue
        read = figures_of(state.session, state.analysis)
        if extended is not None:
            for key in read:
                assert extended[key] == read[key], f"{key} differs after extending to byte {cut}"
        if following is None:
            break
        with path.open("ab") as handle:
            handle.write(data[cut:following])
        grown = extend_by(state, data[cut:following], cut, prepared=chooser.random() < 0.5, before=read)
        outcomes.append("declined" if grown is None else "extended")
        extended = None if grown is None else figures_of(grown.session, grown.analysis)
    assert "extended" in outcomes or len(ends) < 4
    for cut in ends[:-1][::max(1, len(ends) // 6)]:
        check_cut(tmp_path, data, cut)


def make_session(turns: int, seed: int, folder: Path) -> bytes:
    out = folder / "gen.jsonl"
    script = Path(__file__).resolve().parent.parent / "bench" / "make_big_session.py"
    subprocess.run([sys.executable, str(script), "--turns", str(turns), "--seed", str(seed), "--out", str(out)],
                   check=True, capture_output=True)
    return out.read_bytes()


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 10_000), turns=st.integers(20, 3_000), where=st.floats(0.05, 0.995),
       steps=st.integers(1, 6))
def test_generated_sessions_cut_at_random_lines(tmp_path: Path, seed: int, turns: int, where: float,
                                                steps: int) -> None:
    data = make_session(turns, seed, tmp_path)
    ends = line_ends(data)
    cut = ends[min(len(ends) - 2, max(1, int(len(ends) * where)))]
    check_cut(tmp_path, data, cut, steps=steps)


def test_an_append_is_extended_not_declined(tmp_path: Path) -> None:
    """Gemini CLI's usual appends (new messages, the last message written again, ``$set``) extend."""
    data = make_session(2_500, 7, tmp_path)  # long enough for the tool-output budget to cut outputs
    ends = line_ends(data)
    outcomes = follow_line_by_line(tmp_path, data, ends[-40])
    assert len(outcomes) == 39 and outcomes.count("extended") >= 30, outcomes


def test_a_recording_read_from_its_file_extends_alike(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Big recordings keep their messages in the file (read again by place): extended the same way."""
    from inspector.session import loader

    monkeypatch.setattr(loader, "STREAM_MIN_BYTES", 1)
    data = make_session(1_500, 11, tmp_path)
    ends = line_ends(data)
    path = tmp_path / "live.jsonl"
    path.write_bytes(data[:ends[-30]])
    session = load(path)
    assert isinstance(session.messages, MessageList) and session.messages.reads_file
    outcomes = [check_cut(tmp_path, data, cut, steps=3) for cut in ends[-30:-1:4]]
    assert outcomes.count("extended") >= 4, outcomes


def _line(record: dict[str, Any]) -> bytes:
    return orjson.dumps(record) + b"\n"


def test_appends_that_join_or_drop_turns_extend_alike(tmp_path: Path) -> None:
    """Gemini CLI's compression joins consecutive turns of one role, strips thoughts (a turn of only
    thoughts goes) and leaves out a run of model turns holding a rejected one: appends that do each
    of these, at every line boundary, give the columns a whole read gives."""
    stamp = "2026-01-01T00:00:00Z"

    def gemini(ident: str, content: Any, **more: Any) -> bytes:
        return _line({"id": ident, "timestamp": stamp, "type": "gemini", "content": content, **more})

    def user(ident: str, content: Any) -> bytes:
        return _line({"id": ident, "timestamp": stamp, "type": "user", "content": content})

    call = {"id": "c1", "name": "read_file", "args": {"path": "a"},
            "result": [{"functionResponse": {"id": "c1", "name": "read_file", "response": {"output": "x" * 300}}}]}
    data = b"".join([
        _line(META),
        user("u1", [{"text": "first prompt " * 20}]),
        gemini("g1", "thinking only", thoughts=[{"subject": "s", "description": "d"}]),
        gemini("g1b", "", thoughts=[{"subject": "only", "description": "a thought"}]),  # emptied: dropped
        user("u2", [{"text": "a second prompt straight after"}]),
        gemini("g2", "calling", toolCalls=[call]),
        user("u3", [{"functionResponse": call["result"][0]["functionResponse"]}]),  # 0.61 writes it twice
        gemini("g3", [{"text": ""}]),  # rejected: its run is left out
        user("u4", [{"text": "prompt after a rejected reply " * 10}]),
        user("u5", [{"text": "and another"}]),
        gemini("g4", "done " * 40),
        gemini("g5", "more", thoughts=[{"subject": "s", "description": "d" * 50}]),
    ])
    cuts = line_ends(data)
    outcomes = [check_cut(tmp_path, data, cut) for cut in cuts[:-1]]
    assert outcomes == ["extended"] * len(outcomes), outcomes
    session = load(tmp_path / "live.jsonl")
    columns = analyze(session).split_columns
    assert columns.left_out, "the rejected run and the emptied turn are left out"


def test_a_declined_append_names_its_line_and_what_it_does(tmp_path: Path) -> None:
    """When an append cannot be extended, the reason names the line and says what it does, so the
    app can tell a person exactly why it read the whole file again."""
    stamp = "2026-01-01T00:00:00Z"
    start = b"".join([
        _line(META),
        _line({"id": "u1", "timestamp": stamp, "type": "user", "content": [{"text": "first"}]}),
        _line({"id": "g1", "timestamp": stamp, "type": "gemini", "content": "one"}),
        _line({"id": "u2", "timestamp": stamp, "type": "user", "content": [{"text": "second"}]}),
        _line({"id": "g2", "timestamp": stamp, "type": "gemini", "content": "two"}),
    ])
    path = tmp_path / "declined.jsonl"
    path.write_bytes(start)
    first_new = start.count(b"\n") + 1
    plain = _line({"id": "u3", "timestamp": stamp, "type": "user", "content": [{"text": "third"}]})
    cases = {
        "rewind": (plain + _line({"$rewindTo": "u2"}),
                   f"line {first_new + 1} rewinds to message 'u2' ($rewindTo)"),
        "checkpoint": (_line({"$set": {"messages": []}}),
                       f"line {first_new} sets the whole list of messages ($set with messages)"),
        "older message": (_line({"id": "g1", "timestamp": stamp, "type": "gemini", "content": "again"}),
                          f"line {first_new} writes again message 'g1' of line 3, not the last one"),
        "not JSON": (plain + b'{"id": "u4", \n', f"line {first_new + 1}: not valid JSON"),
        "NUL": (plain + plain.replace(b"third", b"th\x00ird"), f"line {first_new + 1} holds a NUL byte"),
        "unchecked message": (_line({"id": "u5", "timestamp": stamp, "type": "user", "content": 42}),
                              f"line {first_new}: message 'u5'"),
        "unfinished": (plain[:-1], "the appended text ends inside a line"),
    }
    for name, (appended, words) in cases.items():
        session = load(path)
        state = live.start(session, analyze(session))
        assert state is not None
        declined = live.extend(state, appended, len(start))
        assert isinstance(declined, live.Declined), name
        assert declined.reason.startswith(words), (name, declined.reason)
    elsewhere = live.extend(state, plain, len(start) - 1)
    assert isinstance(elsewhere, live.Declined)
    assert elsewhere.reason == f"the lines were written at byte {len(start) - 1:,}, not where the file ended " \
                               f"({len(start):,})"
    assert isinstance(live.extend(state, plain, len(start)), live.LiveState)  # the plain append alone extends
