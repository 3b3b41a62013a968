"""The C measure (``inspector/session/_measure.c``) against its Python definition.

``figures.content_figures`` and ``figures.message_figures`` ask the C module
first and fall back to ``measured_content`` / ``measured_message``; the
differential tests check the result against Node.  Here the two
implementations are compared directly, on generated contents and messages
(the same strategies the differential tests use: lone surrogates, astral
characters, control characters, odd numbers, nested values, ignored user
prompts, thoughts, tool calls and results of every shape) and on every turn
of every session file.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from inspector.jsjson import js_json_len, js_string_json_len
from inspector.session import load
from inspector.session.figures import measured_content, measured_message
from inspector.session.history import message_contents
from inspector.tokens import text_quarters
from tests.conftest import session_files
from tests.reference import strategies as gen

measure_module = pytest.importorskip(
    "inspector.session._measure", reason="the C measure is not built here (pure-Python install)")

EXAMPLES = settings(max_examples=400, deadline=None, suppress_health_check=list(HealthCheck))

# Parts in the shapes Gemini CLI writes, which the C module must handle itself.
plain_parts = st.one_of(
    st.builds(lambda t: {"text": t}, gen.text),
    st.builds(lambda t: {"text": t, "thought": True}, gen.text),
    st.builds(lambda fc: {"functionCall": fc},
              st.fixed_dictionaries({"name": gen.names}, optional={"id": gen.ids, "args": st.dictionaries(
                  gen.keys, st.recursive(st.one_of(st.none(), st.booleans(), gen.text,
                                                   st.integers(-(2**53), 2**53)),
                                         lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                                 st.dictionaries(gen.keys, inner, max_size=3)),
                                         max_leaves=6), max_size=3)})),
    st.builds(lambda fr: {"functionResponse": fr},
              st.fixed_dictionaries({"response": st.builds(lambda o: {"output": o}, gen.text)},
                                    optional={"id": gen.ids, "name": gen.names})),
)
def _content(role: str, parts: list[Any]) -> dict[str, Any]:
    return {"role": role, "parts": parts}  # in this order, as Gemini CLI writes it


plain_contents = st.builds(_content, st.sampled_from(["user", "model", "function", "é😀"]),
                           st.lists(plain_parts, max_size=4))
any_contents = st.one_of(
    plain_contents,
    st.builds(_content, st.sampled_from(["user", "model"]), st.lists(gen.parts(), max_size=4)),
    st.fixed_dictionaries({"role": st.just("model"), "parts": st.lists(plain_parts, max_size=2)}),
    gen.parts(),
    st.builds(lambda m: [c for c, _ in message_contents(m)], gen.message()).filter(bool).map(lambda cs: cs[0]),
)
usages = st.one_of(st.none(), st.just((1, 2, 3, 4, 5, 15)), st.just({"input": 1.5}))


def _same(content: dict[str, Any], record_id: str | None, result: bool, usage: Any) -> tuple[Any, ...] | None:
    fast = measure_module.measure(content, record_id, result, usage)
    if fast is not None:
        assert fast == measured_content(content, record_id, result, usage), content
    return fast


@EXAMPLES
@given(content=plain_contents, record_id=st.one_of(st.none(), gen.ids), result=st.booleans(), usage=usages)
def test_common_shapes_are_measured_in_c_exactly(content: dict[str, Any], record_id: str | None, result: bool,
                                                 usage: Any) -> None:
    assert _same(content, record_id, result, usage) is not None, content


@EXAMPLES
@given(content=any_contents, result=st.booleans())
def test_any_content_is_measured_in_c_exactly_or_left_to_python(content: Any, result: bool) -> None:
    _same(content, "r", result, None)


@EXAMPLES
@given(text=gen.text)
def test_string_figures(text: str) -> None:
    assert measure_module.string_json_len(text) == js_string_json_len(text)
    assert measure_module.text_quarters(text) == text_quarters(text)


@EXAMPLES
@given(value=gen.json_values)
def test_json_length_where_handled(value: Any) -> None:
    found = measure_module.json_len(value)
    if found is not None:
        assert found == js_json_len(value)


def test_values_left_to_python() -> None:
    for value in (1.0, 2**53 + 1, -(2**53) - 1, [1, 0.5], {"a": {"b": 1e21}}, (1, 2), {1: 2}):
        assert measure_module.json_len(value) is None, value
    assert measure_module.json_len([2**53, -(2**53), 0, True, None, "\ud800"]) == js_json_len(
        [2**53, -(2**53), 0, True, None, "\ud800"])
    long_text = "é" * 100_001  # beyond the full heuristic: length / 4
    assert measure_module.text_quarters(long_text) == text_quarters(long_text) == 100_001


def _same_message(message: Any) -> tuple[Any, ...] | None:
    fast = measure_module.measure_message(message)
    if fast is not None:
        assert fast == measured_message(message), message
    return fast


# Messages in the shapes Gemini CLI writes, which the C module must measure itself.
plain_text = st.one_of(gen.text, st.just("😀 é \u2028 \x00 \"q\" \\"))
plain_user = st.builds(
    lambda ident, content: {"id": ident, "timestamp": "t", "type": "user", "content": content},
    gen.ids, st.one_of(plain_text, st.lists(st.one_of(plain_text, st.builds(lambda t: {"text": t}, plain_text)),
                                            max_size=3)))
plain_call = st.builds(
    lambda ident, name, args, result, status: {"id": ident, "name": name, "args": args, "result": result,
                                               "status": status},
    gen.ids, gen.names, st.dictionaries(gen.keys, st.one_of(plain_text, st.integers(-(2**53), 2**53), st.none(),
                                                            st.booleans()), max_size=3),
    st.one_of(st.none(), plain_text, st.builds(
        lambda ident, name, output: [{"functionResponse": {"id": ident, "name": name,
                                                           "response": {"output": output}}}],
        gen.ids, gen.names, plain_text)),
    st.sampled_from(["success", "error", "cancelled"]))
plain_thought = st.builds(lambda subject, description: {"subject": subject, "description": description,
                                                        "timestamp": "t"},
                          st.one_of(plain_text, st.just("")), plain_text)
plain_model = st.builds(
    lambda ident, content, thoughts, calls, usage: {
        "id": ident, "timestamp": "t", "type": "gemini", "content": content, "thoughts": thoughts,
        "tokens": dict(zip(("input", "output", "cached", "thoughts", "tool", "total"), usage, strict=True)),
        "model": "gemini-2.5-pro", "toolCalls": calls},
    gen.ids, plain_text, st.lists(plain_thought, max_size=2), st.lists(plain_call, max_size=3),
    st.tuples(*[st.integers(0, 10**6)] * 6))


@EXAMPLES
@given(message=st.one_of(plain_user, plain_model))
def test_messages_gemini_cli_writes_are_measured_in_c_exactly(message: dict[str, Any]) -> None:
    assert _same_message(message) is not None, message


@EXAMPLES
@given(message=gen.message())
def test_any_message_is_measured_in_c_exactly_or_left_to_python(message: dict[str, Any]) -> None:
    _same_message(message)


def test_odd_messages_are_left_to_python_or_measured_exactly() -> None:
    odd: list[Any] = [
        "not a message", {"type": "user"}, {"type": 5, "content": "x"}, {"type": "info", "content": "x"},
        {"type": "user", "content": None}, {"type": "user", "content": [5]}, {"type": "user", "content": [[]]},
        {"type": "user", "content": " \u3000\ufeff"}, {"type": "user", "content": [{"text": "  "}, "/cmd"]},
        {"type": "user", "content": [{"text": "<session_"}, {"text": "context> x"}]},
        {"type": "user", "content": [{"text": "0123456789abcdefgh"}, {"inlineData": {}}]},
        {"type": "gemini", "content": {"text": "x"}}, {"type": "gemini", "content": ""},
        {"type": "gemini", "content": [{"functionCall": {"name": "f"}}]},
        {"type": "gemini", "thoughts": [{"subject": "s"}, {"subject": "s", "description": None}, 5,
                                        {"description": "d"}, {"subject": 0, "description": "d"}]},
        {"type": "gemini", "toolCalls": [{"name": "f", "result": 7}]},
        {"type": "gemini", "toolCalls": [{"id": None, "name": "f", "result": "out"}]},
        {"type": "gemini", "toolCalls": [{"args": {"x": 1.5}}]},
        {"type": "gemini", "toolCalls": [{}], "tokens": {"input": 1}},
        {"type": "gemini", "toolCalls": [{"result": [{}, "text", {"functionResponse": {"response": {"output": 1}}}]}]},
    ]
    for message in odd:
        _same_message(message)
    assert measure_module.measure_message({"type": "user", "content": "  /help"}) == ()


def test_every_turn_of_every_session_file() -> None:
    measured = messages = 0
    for path in session_files():
        session = load(path)
        for message in session.messages:
            messages += _same_message(message) is not None
            for content, result in message_contents(message):
                measured += _same(content, message.get("id"), result, None) is not None
    assert measured > 0
    assert messages > 0
