"""The core against Gemini CLI's own code: same history, same figures, always.

Every sample session (and the files Gemini CLI 0.61.0 wrote, when the shared
folder is present) is loaded by both; then hypothesis generates message
lists, whole JSONL files, legacy files, checkpoints and tool-output budgets
full of the inputs where Python and JavaScript differ.
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
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from inspector.analysis import analyze_turns
from inspector.compaction.budget import apply_budget, format_truncated, output_file_name
from inspector.compaction.split import ends_safely, find_split_point, is_split_candidate
from inspector.jsjson import js_json_len, js_stringify, js_utf8
from inspector.session.history import contents_to_turns
from tests.conftest import session_files
from tests.reference import strategies as gen
from tests.reference.client import RefServer
from tests.reference.compare import assert_figures, compare_file, compare_messages

pytestmark = pytest.mark.differential
HEALTH = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.function_scoped_fixture]


# DIFFERENTIAL_SCALE=20 runs twenty times as many examples (a deep search).
SCALE = float(os.environ.get("DIFFERENTIAL_SCALE", "1"))


def examples(count: int) -> settings:
    return settings(max_examples=int(count * SCALE), deadline=None, suppress_health_check=HEALTH)


@pytest.fixture(scope="module")
def scratch() -> Iterator[Path]:
    with tempfile.TemporaryDirectory(prefix="differential-") as folder:
        yield Path(folder)


# -- real files ---------------------------------------------------------------------


FILES = session_files()


@pytest.mark.parametrize("path", FILES, ids=[p.name for p in FILES])
def test_session_file_matches_reference(reference: RefServer, path: Path) -> None:
    assert compare_file(reference, path) == "same"


def test_there_are_sample_sessions() -> None:
    assert any("sample_sessions" in str(p) for p in FILES), "sample_sessions/ holds no session file"


# -- generated input ----------------------------------------------------------------


@examples(200)
@given(data=gen.jsonl_files())
def test_generated_jsonl_file(reference: RefServer, scratch: Path, data: bytes) -> None:
    path = scratch / "session.jsonl"
    path.write_bytes(data)
    compare_file(reference, path)


@examples(150)
@given(messages=gen.messages)
def test_generated_messages(reference: RefServer, messages: list[dict[str, Any]]) -> None:
    compare_messages(reference, messages)


contents = st.lists(
    st.builds(lambda role, parts: {"role": role, "parts": parts},
              st.sampled_from(["user", "model"]), st.lists(gen.parts(), max_size=3)),
    max_size=8,
)


@examples(100)
@given(contents=contents)
def test_generated_contents_figures(reference: RefServer, contents: list[dict[str, Any]]) -> None:
    answer = reference.call("measure", contents=contents)
    assert_figures(contents_to_turns(contents), answer, "contents")


@examples(60)
@given(messages=gen.messages, pretty=st.booleans(), newline=st.booleans())
def test_generated_legacy_file(
    reference: RefServer, scratch: Path, messages: list[dict[str, Any]], pretty: bool, newline: bool
) -> None:
    record = {**gen.METADATA, "messages": messages}
    text = json.dumps(record, indent=2 if pretty else None, ensure_ascii=True) + ("\n" if newline else "")
    path = scratch / "session-legacy.json"
    path.write_text(text, encoding="utf-8")
    compare_file(reference, path)


@examples(60)
@given(contents=contents, bare=st.booleans())
def test_generated_checkpoint(reference: RefServer, scratch: Path, contents: list[dict[str, Any]], bare: bool) -> None:
    document: Any = contents if bare else {"history": contents, "authType": "oauth-personal"}
    path = scratch / "checkpoint-tag.json"
    path.write_text(json.dumps(document, indent=2, ensure_ascii=True), encoding="utf-8")
    compare_file(reference, path)


# -- the tool-output budget ------------------------------------------------------------

big_text = st.builds(
    lambda unit, count, tail: unit * count + tail,
    st.sampled_from(["a", "ab\n", "é", "😀", "x\ud800"]),
    st.sampled_from([0, 10, 30_000, 120_000, 210_000]),
    gen.text,
)
response = st.one_of(
    st.builds(lambda t: {"output": t}, big_text),
    st.builds(lambda t: {"content": t, "other": 1.0}, big_text),
    st.builds(lambda t: t, big_text),
    st.builds(lambda t: {"lines": [t, 1e21]}, big_text),
    gen.json_values,
)
tool_part = st.builds(
    lambda name, resp, has_response, extra: {
        "functionResponse": {"name": name, **({"response": resp} if has_response else {})}, **extra
    },
    gen.names, response, st.integers(0, 7).map(bool), st.sampled_from([{}, {"thought": True}, {"x": 1}]),
)
budget_contents = st.lists(
    st.one_of(
        st.builds(lambda ps: {"role": "user", "parts": ps}, st.lists(tool_part, min_size=1, max_size=3)),
        st.builds(lambda t: {"role": "user", "parts": [{"text": t}]}, gen.text),
        st.builds(lambda t: {"role": "model", "parts": [{"text": t}, {"functionCall": {"name": "f"}}]}, gen.text),
        st.builds(lambda t: {"role": "model", "parts": [{"text": t}]}, gen.text),
    ),
    max_size=7,
)


@examples(40)
@given(contents=budget_contents, max_chars=st.sampled_from([40_000, 40_000, 1_000, 7, 0, -5]))
def test_budget_matches_reference(reference: RefServer, scratch: Path, contents: list[dict[str, Any]],
                                  max_chars: int) -> None:
    folder = scratch / "budget"
    shutil.rmtree(folder, ignore_errors=True)
    answer = reference.call("budget", contents=contents, max_chars=max_chars, temp_dir=str(folder))
    outputs = folder / "tool-outputs"
    truncated, truncations = apply_budget(
        contents, lambda tool, seq: str(outputs / output_file_name(tool, seq)), max_chars=max_chars
    )
    if contents:
        mine = [js_stringify(c) for c in truncated]
        assert mine == answer["history"]
    # Node writes a lone surrogate as U+FFFD; the store writes with js_utf8 too.
    saved = {t.output_file: js_utf8(t.full_text).decode() for t in truncations}
    assert saved == {f["path"]: f["text"] for f in answer["files"]}
    flags = [is_split_candidate(c) for c in truncated]
    safe = bool(truncated) and ends_safely(truncated[-1])
    weights = [js_json_len(c) for c in truncated]
    assert find_split_point(weights, flags, safe) == answer["raw_split"]
    if max_chars == 40_000:
        result = analyze_turns(contents_to_turns(contents), temp_dir=folder)
        assert result.compress_split_point == answer["split"]
        # the budget of what compression reads: no output in a thought part or a turn the view leaves out
        assert sorted(Path(t.output_file).name for t in result.truncations) == answer["view_saved"]
        if not result.split_columns.left_out and not any(
                isinstance(p, dict) and p.get("thought") for c in contents for p in c["parts"]):
            assert [(t.turn, t.output_file) for t in result.truncations] == \
                [(t.turn, t.output_file) for t in truncations]


@examples(40)
@given(content=big_text, max_chars=st.sampled_from([40_000, 1_000, 9, 1, 0, -3]), name=gen.text)
def test_format_truncated_matches_reference(reference: RefServer, content: str, max_chars: int, name: str) -> None:
    answer = reference.call("format_truncated", content=content, output_file=name, max_chars=max_chars)
    # compared as JavaScript sees strings (a pair of surrogates written as two code points is one character)
    assert js_stringify(format_truncated(content, name, max_chars)) == js_stringify(answer["text"])
