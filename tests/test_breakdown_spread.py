"""The breakdown comes from what the reader measured (``TurnIndex.spread``), never from reading the turns
again, and it states the same rules as reading every part would: checked against a plain statement of
them (``Oracle``: each part classified, measured and paired by itself) on odd histories too (text parts
that carry a call, calls and results that are no object or have no or a numeric name, parts that are
null, @path inclusions, parts holding both a call and a response)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from inspector.analysis import analyze, analyze_turns
from inspector.breakdown import (
    INCLUDED,
    NO_MODEL,
    Breakdown,
    _Tally,
    _tool_groups,
    breakdown,
    session_breakdown,
    turn_models,
)
from inspector.compaction.pairs import Pairing
from inspector.session import load
from inspector.session.figures import pair_key
from inspector.session.history import contents_to_turns
from inspector.session.spread import KINDS
from inspector.tokens import IMAGE_QUARTERS, content_parts, media_quarters, part_quarters
from tests.conftest import session_files

FILES = session_files()
ACTIONS = {"read_file": "read", "write_file": "write", "replace": "edit", "edit": "edit"}


def _name(value: Any) -> str:
    return value if isinstance(value, str) and value else "(no name)"


def _kind(part: Any, role: str) -> str:
    if type(part) is not dict:
        return "other parts"
    text = part.get("text")
    if isinstance(text, str):
        if part.get("thought"):
            return "thoughts"
        if role == "model":
            return "model text"
        injected = text.lstrip().startswith(("<state_snapshot>", "<session_context>", "<hook_context>"))
        return "injected context" if injected else "user text"
    if part.get("functionResponse"):
        return "tool results"
    if part.get("functionCall"):
        return "tool calls"
    return "images" if media_quarters(part) == IMAGE_QUARTERS else "other parts"


def _keyed(part: Any, field: str) -> dict[str, Any] | None:
    value = part.get(field) if isinstance(part, dict) else None
    return value if isinstance(value, dict) else None  # (an object, even empty, is true in JavaScript)


def _pair_turn(pairing: Pairing[str | None], parts: list[Any], role: str) -> dict[int, str | None]:
    """One turn paired as every face pairs a history: each call that is an object (the file it names
    when the part counts as a call), then each response that is one; the file of the call each
    response part answers, by the part's place."""
    for part in parts:
        call = _keyed(part, "functionCall")
        if call is not None:
            args = call.get("args")
            path = args.get("file_path") if isinstance(args, dict) else None
            counted = _kind(part, role) == "tool calls" and isinstance(path, str) and path
            pairing.call(pair_key(call), path if counted else None)
    answered: dict[int, str | None] = {}
    for j, part in enumerate(parts):
        response = _keyed(part, "functionResponse")
        if response is not None:
            paired = pairing.answer(pair_key(response))
            answered[j] = paired[0] if paired is not None else None
    return answered


def oracle(contents: list[dict[str, Any]], split: int, models: list[str | None] | None = None) -> Breakdown:
    """Every part read, classified, measured and paired by itself, as the breakdown's rules say (a
    result's file: that of the call it answers, paired as every face pairs calls, ``_pair_turn``)."""
    kinds, tools, files, by_model = _Tally(split), _Tally(split), _Tally(split), _Tally(split)
    pairing: Pairing[str | None] = Pairing()
    total = 0
    for i, content in enumerate(contents):
        role = content.get("role")
        turn_quarters = 0
        referencing, included = False, None
        answered = _pair_turn(pairing, content_parts(content), str(role))
        for j, part in enumerate(content_parts(content)):
            quarters = part_quarters(part)
            turn_quarters += quarters
            kind = _kind(part, str(role))
            if kind == "user text" and part["text"].lstrip().startswith("--- Content from referenced files ---"):
                referencing = True
            if referencing and kind == "user text":
                kind = "injected context"
                text = part["text"].strip()
                if text.startswith("Content from @") and text.endswith(":"):
                    included = text[len("Content from @"):-1]
                elif text in ("--- End of content ---", "--- Content from referenced files ---"):
                    included = None
                elif included is not None:
                    files.add(included, i, quarters).grow(INCLUDED, 1)
                    included = None
            kinds.add(kind, i, quarters)
            if kind in ("tool calls", "tool results"):
                found = part["functionCall" if kind == "tool calls" else "functionResponse"]
                found = found if isinstance(found, dict) else {}
                name = _name(found.get("name"))
                entry = tools.add(name, i, quarters)
                if kind == "tool calls":
                    entry.calls += quarters
                else:
                    entry.results += quarters
                if kind == "tool calls":
                    args = found.get("args")
                    path = args.get("file_path") if isinstance(args, dict) else None
                    path = path if isinstance(path, str) and path else None
                    if path is not None:
                        files.add(path, i, quarters).grow(ACTIONS.get(name, name), 1)
                else:
                    called = answered.get(j)
                    if called is not None:
                        files.add(called, i, quarters)
        total += turn_quarters
        if role == "model":
            model = models[i] if models is not None else None
            by_model.add(model or NO_MODEL, i, turn_quarters)
    whole = total // 4
    return Breakdown(whole, split, len(contents), kinds.groups(whole, KINDS), _tool_groups(tools, whole),
                     files.groups(whole), by_model.groups(whole))


def _refuse(turn: Any) -> dict[str, Any]:
    raise AssertionError(f"turn {turn.index} read again")


@pytest.mark.parametrize("path", FILES, ids=[p.name for p in FILES])
def test_a_session_breakdown_reads_no_turn_again_and_states_the_rules(path: Path) -> None:
    session = load(path)
    result = analyze(session)
    models = turn_models(session, result.turns)
    found = session_breakdown(session, result)
    if session.turn_index is not None:  # a recording: everything comes from the reader's figures
        assert breakdown(result, models, None, session.turn_index, read=_refuse) == found
    assert found == oracle([turn.content for turn in result.turns], result.compress_split_point, models)


names = st.one_of(st.sampled_from(["read_file", "write_file", "replace", "run_shell_command", ""]),
                  st.none(), st.integers(0, 3))
paths = st.sampled_from(["a.py", "b.md", "", None, 7])
ids = st.one_of(st.sampled_from(["c1", "c2", "c3"]), st.none(), st.integers(0, 2), st.just(""))


def _call(ident: Any, name: Any, path: Any) -> dict[str, Any]:
    call: dict[str, Any] = {"args": {"file_path": path}} if path is not None else {}
    if ident is not None:
        call["id"] = ident
    if name is not None:
        call["name"] = name
    return call


calls = st.builds(_call, ids, names, paths)
responses = st.one_of(
    st.builds(lambda ident, name, out: {k: v for k, v in (("id", ident), ("name", name),
                                                          ("response", {"output": out})) if v is not None},
              ids, names, st.sampled_from(["ok", "", "x" * 40, None])),
    st.sampled_from([{}, {"name": "read_file"}, {"id": "c1", "name": "read_file", "response": {}}]),
)
texts = st.sampled_from(["hi", "  <session_context>ctx", "<state_snapshot>s", "\n--- Content from referenced files ---",
                         "\nContent from @c.md:\n", "ccc" * 9, "\n--- End of content ---", "é✓ é", ""])
parts = st.one_of(
    st.builds(lambda t: {"text": t}, texts),
    st.builds(lambda t: {"text": t, "thought": True}, texts),
    st.builds(lambda c: {"functionCall": c}, calls),
    st.builds(lambda r: {"functionResponse": r}, responses),
    st.builds(lambda t, c: {"text": t, "functionCall": c}, texts, calls),
    st.builds(lambda c, r: {"functionCall": c, "functionResponse": r}, calls, responses),
    st.sampled_from([None, 5, "loose", {"functionCall": "x"}, {"functionResponse": 1}, {"functionCall": {}},
                     {"inlineData": {"mimeType": "image/png", "data": "AAAA"}}, {"fileData": {"mimeType": "a/b"}}]),
)
histories = st.lists(st.builds(lambda role, ps: {"role": role, "parts": ps}, st.sampled_from(["user", "model"]),
                               st.lists(parts, max_size=5)), max_size=9)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(contents=histories, split_at=st.integers(min_value=0, max_value=9))
def test_the_spread_gives_what_reading_every_part_gives(contents: list[dict[str, Any]], split_at: int) -> None:
    result = analyze_turns(contents_to_turns(contents))
    split = min(split_at, len(result.turns))
    assert breakdown(result, None, split) == oracle([t.content for t in result.turns], split)
