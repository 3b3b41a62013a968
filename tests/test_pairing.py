"""One pairing of calls and responses (``pairs.Pairing``), its journal, and the agentic split built on it."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from inspector.compaction.agentic import agentic_candidates, crossing_free_model_turns
from inspector.compaction.pairs import AgenticCandidates, Pairing, pair_calls

Key = tuple[str | None, str | None]
keys = st.tuples(st.sampled_from([None, "a", "b"]), st.sampled_from([None, "read", "run"]))
ops = st.lists(st.tuples(st.sampled_from(["call", "answer"]), keys), max_size=30)


def _run(pairing: Pairing[int], steps: list[tuple[str, Key]], start: int) -> list[object]:
    seen: list[object] = []
    for n, (what, key) in enumerate(steps, start):
        if what == "call":
            pairing.call(key, n)
        else:
            seen.append(pairing.answer(key))
    return seen


@settings(max_examples=300, deadline=None)
@given(before=ops, after=ops, then=ops)
def test_undo_goes_back_to_the_mark(before: list[tuple[str, Key]], after: list[tuple[str, Key]],
                                    then: list[tuple[str, Key]]) -> None:
    """Whatever was called and answered after ``mark``, ``undo`` leaves a pairing that answers the same
    as one that never saw it."""
    undone: Pairing[int] = Pairing()
    fresh: Pairing[int] = Pairing()
    _run(undone, before, 0)
    _run(fresh, before, 0)
    undone.mark()
    _run(undone, after, 1000)
    undone.undo()
    assert not undone.marked
    assert _run(undone, then, 2000) == _run(fresh, then, 2000)


def _brute_candidates(contents: list[dict]) -> list[int]:
    """The definition: a model turn (not the first) that no (call turn < it <= response turn) pair spans."""
    pairs = pair_calls(contents)
    spans = [(call[0], response[0]) for response, call in pairs.items()]
    return [i for i, c in enumerate(contents)
            if i > 0 and c["role"] == "model" and not any(a < i <= b for a, b in spans)]


turn = st.one_of(
    st.builds(lambda ident, name: {"role": "model", "parts": [{"functionCall": {
        **({"id": ident} if ident else {}), "name": name, "args": {}}}]}, keys.map(lambda k: k[0]),
        st.sampled_from(["read", "run"])),
    st.builds(lambda ident, name: {"role": "user", "parts": [{"functionResponse": {
        **({"id": ident} if ident else {}), "name": name, "response": {"output": "x"}}}]},
        keys.map(lambda k: k[0]), st.sampled_from(["read", "run"])),
    st.just({"role": "model", "parts": [{"text": "ok"}]}),
    st.just({"role": "user", "parts": [{"text": "go on"}]}),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(turn, max_size=25))
def test_agentic_candidates_are_the_turns_no_pair_spans(contents: list[dict]) -> None:
    assert agentic_candidates(contents) == _brute_candidates(contents)


@settings(max_examples=200, deadline=None)
@given(st.lists(turn, max_size=20), st.lists(turn, min_size=1, max_size=6), st.lists(turn, max_size=6))
def test_candidates_found_turn_by_turn_undo_a_message_written_again(
        kept: list[dict], first_version: list[dict], second_version: list[dict]) -> None:
    """The live view's use: mark before the last message's turns, add them, then undo when the message is
    written again and add its new turns: the same candidates as a whole pass over the final history."""
    live = AgenticCandidates()
    whole = kept + second_version
    for i, content in enumerate(kept):
        _add(live, i, content)
    live.mark()
    for i, content in enumerate(first_version, len(kept)):
        _add(live, i, content)
    live.low = len(live.found)
    live.undo()
    assert live.low <= len(live.found)
    for i, content in enumerate(second_version, len(kept)):
        _add(live, i, content)
    assert live.found == agentic_candidates(whole) == crossing_free_model_turns(
        [c["role"] for c in whole], [_keys(c, "functionCall") for c in whole],
        [_keys(c, "functionResponse") for c in whole])


def _keys(content: dict, field: str) -> tuple[Key, ...]:
    return tuple((p[field].get("id"), p[field]["name"]) for p in content["parts"] if field in p)


def _add(candidates: AgenticCandidates, i: int, content: dict) -> None:
    candidates.add(i, content["role"], _keys(content, "functionCall"), _keys(content, "functionResponse"))
