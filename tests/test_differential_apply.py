"""Every file Gemini CLI resumes can be applied, resumes in Gemini CLI as the new history, and reverts.

hypothesis writes JSONL recordings, legacy files and /chat save checkpoints
full of what Python and JavaScript read differently (integers past 2^53,
1e21, -0, lone surrogates, duplicate keys, ...).  For each file Gemini CLI's
own loader reads (the Node reference), a compaction that keeps turns from a
drawn split point on (before a user prompt, as compaction splits) is
applied; then Gemini CLI's loader must read the applied file as [snapshot,
acknowledgement, ...the kept turns exactly as it read them before], and
revert must give back the original bytes.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st

from inspector.compaction.split import is_split_candidate
from inspector.jsjson import js_stringify
from inspector.session import history, load
from inspector.session.errors import SessionError
from inspector.store import StoreError, apply_history, revert
from tests.reference import strategies as gen
from tests.reference.client import RefServer

pytestmark = pytest.mark.differential
SCALE = float(os.environ.get("DIFFERENTIAL_SCALE", "1"))
SETTINGS = settings(max_examples=int(60 * SCALE), deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                           HealthCheck.function_scoped_fixture])
SNAPSHOT = {"role": "user",
            "parts": [{"text": "<state_snapshot>\n  <overall_goal>go on</overall_goal>\n</state_snapshot>"}]}
ACK = {"role": "model", "parts": [{"text": "Got it. Thanks for the additional context!"}]}
DUPLICATE_KEYS = b'{"id":"dup","timestamp":"t","type":"user","content":[{"text":"first"}],"content":[{"text":"last"}]}'


@pytest.fixture()
def folder() -> Iterator[Path]:
    with tempfile.TemporaryDirectory(prefix="differential-apply-") as name:
        yield Path(name)


def _check(reference: RefServer, path: Path, cut: float) -> None:
    before = reference.call("load", path=str(path))
    assume(before["kind"] is not None)  # only what Gemini CLI itself resumes
    try:
        session = load(path)
    except SessionError as exc:
        raise AssertionError(f"Gemini CLI resumes it but the project cannot load it: {exc}") from None
    turns = history(session)
    theirs: list[str] = before["history"]
    assume([js_stringify(t.content) for t in turns] == theirs)  # (the reader's differential tests cover this)
    # a split the way compaction makes one: before a user prompt (not a tool's result), or at the end
    points = [i for i, t in enumerate(turns) if is_split_candidate(t.content) and not t.is_tool_result]
    points.append(len(turns))
    split = points[min(int(cut * len(points)), len(points) - 1)]
    new = [SNAPSHOT, ACK, *[t.content for t in turns[split:]]]
    original = path.read_bytes()
    try:
        apply_history(session, turns, new, [None, None, *turns[split:]])
    except StoreError as exc:
        raise AssertionError(f"Gemini CLI resumes this file but apply refused: {exc.message}") from None
    after = reference.call("load", path=str(path))
    assert after["kind"] is not None, "Gemini CLI cannot load the applied file"
    assert after["history"] == [js_stringify(SNAPSHOT), js_stringify(ACK), *theirs[split:]]
    revert(path)
    assert path.read_bytes() == original
    shutil.rmtree(path.parent / ".session-inspector")


@SETTINGS
@given(data=gen.jsonl_files(), cut=st.floats(0, 1), duplicate=st.booleans())
def test_generated_jsonl_applies(reference: RefServer, folder: Path, data: bytes, cut: float,
                                 duplicate: bool) -> None:
    path = folder / "session-generated.jsonl"
    if duplicate:
        data = data.rstrip(b"\n") + (b"\n" if data.strip() else b"") + DUPLICATE_KEYS + b"\n"
    path.write_bytes(data)
    _check(reference, path, cut)


# found by hypothesis: a context-looking message the history reader keeps (a thought part) must
# not be carried in front of the snapshot as the environment record
CONTEXT_AS_THOUGHT = [{"id": "a", "timestamp": "2026-01-01T00:00:00Z", "type": "user", "content": None},
                      {"id": "a", "timestamp": "2026-01-01T00:00:00Z", "type": "user",
                       "content": {"text": "<session_context>", "thought": True}}]


def _document(value: Any, indent: int | None, raw: bool) -> bytes:
    """``value`` as JSON; ``raw``: not escaped, a lone surrogate written as the three bytes no UTF-8
    decoder accepts (Node reads them as U+FFFD, as a writer other than Gemini CLI may leave them)."""
    if not raw:
        return json.dumps(value, indent=indent, ensure_ascii=True).encode()
    return json.dumps(value, indent=indent, ensure_ascii=False).encode("utf-8", "surrogatepass")


@SETTINGS
@given(messages=gen.messages, pretty=st.booleans(), raw=st.booleans(), cut=st.floats(0, 1))
@example(messages=CONTEXT_AS_THOUGHT, pretty=False, raw=False, cut=0.0)
@example(messages=[{"id": "a", "timestamp": "2026-01-01T00:00:00Z", "type": "user", "content": [{"text": "hi \ud800"}]},
                  {"id": "b", "timestamp": "2026-01-01T00:00:00Z", "type": "gemini", "content": [{"text": "ok"}]}],
         pretty=True, raw=True, cut=1.0)
def test_generated_legacy_file_applies(reference: RefServer, folder: Path, messages: list[dict[str, Any]],
                                       pretty: bool, raw: bool, cut: float) -> None:
    path = folder / "session-legacy.json"
    path.write_bytes(_document({**gen.METADATA, "messages": messages}, 2 if pretty else None, raw))
    _check(reference, path, cut)


@SETTINGS
@given(messages=gen.messages, raw=st.booleans(), cut=st.floats(0, 1))
def test_generated_checkpoint_applies(reference: RefServer, folder: Path, messages: list[dict[str, Any]],
                                      raw: bool, cut: float) -> None:
    # a /chat save file: the history Gemini CLI would resume from these messages
    answer = reference.call("convert", messages=messages)
    contents = [json.loads(turn) for turn in answer["history"]]
    path = folder / "checkpoint-tag.json"
    path.write_bytes(_document({"history": contents, "authType": "oauth-personal"}, 2, raw))
    _check(reference, path, cut)


@pytest.mark.parametrize("session_id", [True, 7, {"a": 1}, 10**400], ids=["true", "7", "object", "1e400"])
def test_a_session_id_a_set_line_made_not_text_applies(reference: RefServer, folder: Path,
                                                       session_id: object) -> None:
    # after-compression.jsonl's line 15 is the {"$set": {"sessionId": ...}} Gemini CLI wrote when it
    # compressed; here a later writer made the id something else.  Apply used to write the id back
    # as null (or stand in a header whose id was not text) and refuse: the records would not load.
    source = Path(__file__).resolve().parents[1] / "sample_sessions" / "after-compression.jsonl"
    lines = source.read_text(encoding="utf-8").splitlines()
    assert json.loads(lines[14]).keys() == {"$set"} and "sessionId" in json.loads(lines[14])["$set"]
    lines[14] = json.dumps({"$set": {"sessionId": session_id}})
    path = folder / source.name
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    _check(reference, path, 0.5)
