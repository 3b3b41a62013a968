"""Hypothesis strategies for Gemini CLI data: parts, messages, whole session files.

Built to reach the corners where Python and JavaScript differ: UTF-16 lengths
(astral emoji, lone surrogates), JSON number printing (1.0, 1e21, 1e-7, -0.0,
integers beyond 2**53 and 2**64), control characters, CR/CRLF line ends,
broken and blank lines, repeated ids, rewinds and checkpoints.  Everything
generated here has the *types* of a real session, so the project must read it
exactly as the reference does (bad types are tested separately).
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import strategies as st

ODD_CHARS = [
    "\ud800", "\udfff", "\ud83d", "\ude00", "😀", "𝄞", "\x00", "\x1f", "\x7f", "\x80", "\u2028", "\u2029",
    "\ufeff", "\u00a0", "\u3000", "é", "中", "\\", '"', "\n", "\r", "\t", " ", "/", "?", "<",
]
PREFIXES = ["", "", "", "/", "?", " /", "\u00a0?", "<session_context>", "<hook_context>", "\ufeff/", "\u180e/"]

chars = st.one_of(
    st.characters(max_codepoint=0x7F), st.characters(), st.sampled_from(ODD_CHARS)
)
text = st.builds(lambda p, t: p + t, st.sampled_from(PREFIXES), st.lists(chars, max_size=12).map("".join))

ODD_NUMBERS = [
    1.0, -1.0, 0.5, 1e21, 1e20, 1e-7, 1e-6, -0.0, 0.1, 1e300, 5e-324, 2.0**53, 2**53 + 1, 2**63, 2**64 + 7,
    12345678901234567890, 123456789012345678901234567890, -(2**70), 1e16, 123456789.125, 0,
    10**400, -(10**309),  # past the doubles: Infinity in JavaScript, written back as null
]
numbers = st.one_of(
    st.sampled_from(ODD_NUMBERS),
    st.integers(min_value=-(2**60), max_value=2**60),
    st.floats(allow_nan=False, allow_infinity=False),
)
keys = st.one_of(st.sampled_from(["output", "content", "0", "1", "10", "01", "-1", "4294967295", "a", "é"]), text)
json_values = st.recursive(
    st.one_of(st.none(), st.booleans(), numbers, text),
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(keys, inner, max_size=3)),
    max_leaves=8,
)
json_objects = st.dictionaries(keys, json_values, max_size=3)
MIMES = ["image/png", "image/jpeg", "application/pdf", "application/pdf; x=1", "audio/wav", "text/plain", ""]
ids = st.sampled_from(["a", "b", "c", "d", "call-1", "x_response"])
names = st.one_of(st.sampled_from(["read_file", "run_shell_command", "ls", "😀tool"]), text)


def _with(base: dict[str, Any], extra: dict[str, Any]) -> dict[str, Any]:
    return {**base, **{k: v for k, v in extra.items() if k not in base}}


def _media(kind: str) -> st.SearchStrategy[dict[str, Any]]:
    inner = st.fixed_dictionaries(
        {"mimeType": st.one_of(st.sampled_from(MIMES), st.none())},
        optional={"data": text, "fileUri": text},
    )
    return st.builds(lambda d: {kind: d}, inner)


def parts(depth: int = 0) -> st.SearchStrategy[Any]:
    response_keys: dict[str, Any] = {"name": names, "response": json_values}
    if depth < 4:
        response_keys["parts"] = st.lists(st.deferred(lambda: parts(depth + 1)), max_size=2)
    function_response = st.fixed_dictionaries({}, optional={"id": ids, **response_keys})
    options = [
        st.builds(lambda t: {"text": t}, text),
        st.builds(lambda t, th: {"text": t, "thought": th}, text, st.sampled_from([True, False, 1, "yes"])),
        st.builds(lambda fc: {"functionCall": fc},
                  st.fixed_dictionaries({"name": names}, optional={"id": ids, "args": json_objects})),
        st.builds(lambda fr: {"functionResponse": fr}, function_response),
        st.builds(lambda r: {"functionResponse": {"name": "t", "response": {"output": r}}}, text),
        _media("inlineData"),
        _media("fileData"),
        st.builds(lambda a, b: {**a, **b}, _media("inlineData"), _media("fileData")),
        st.builds(lambda v: {"executableCode": {"code": v}}, text),
        st.builds(lambda v: {"codeExecutionResult": {"output": v}}, text),
        st.builds(lambda v: {"videoMetadata": v}, json_objects),
        st.just({}),
    ]
    part = st.one_of(*options)
    return st.builds(_with, part, json_objects) if depth == 0 else part


part_list = st.lists(st.one_of(parts(), text), max_size=4)
contents_field = st.one_of(text, parts(), part_list, st.none(), st.just(""), st.just([]))


maybe_text = st.one_of(text, st.none())
thoughts = st.lists(
    st.fixed_dictionaries({}, optional={"subject": maybe_text, "description": maybe_text, "timestamp": text}),
    max_size=3,
)
tool_result = st.one_of(
    st.none(), text, st.just(""), part_list, parts(),
    st.builds(lambda o: [{"functionResponse": {"name": "t", "response": {"output": o}}}], text),
)
tool_calls = st.lists(
    st.fixed_dictionaries(
        {"status": st.sampled_from(["success", "error"])},
        optional={"id": ids, "name": names, "args": json_objects, "result": tool_result, "resultDisplay": text},
    ),
    max_size=3,
)
# Token counts are figures the project shows: one past the doubles is refused with a one-line error
# (tests/test_bad_input.py), so they are drawn from the numbers JavaScript holds as finite.
finite_numbers = numbers.filter(lambda n: abs(n) < 2**1024)
tokens = st.fixed_dictionaries({}, optional={k: finite_numbers for k in ("input", "output", "cached", "thoughts",
                                                                          "total")})


def message(kind: str | None = None) -> st.SearchStrategy[dict[str, Any]]:
    kinds = st.just(kind) if kind else st.sampled_from(["user", "user", "gemini", "gemini", "gemini", "info", "error"])
    return st.builds(
        lambda ident, k, content, extra: {"id": ident, "timestamp": "2026-01-01T00:00:00Z", "type": k,
                                          "content": content, **extra},
        ids, kinds, contents_field,
        st.fixed_dictionaries({}, optional={"toolCalls": tool_calls, "thoughts": thoughts, "tokens": tokens,
                                            "model": st.sampled_from(["gemini-2.5-pro", "gemma-4-31b-it"]),
                                            "displayContent": text, "extra": json_values}),
    )


# Made once: hypothesis checks a strategy the first time it draws from it, and a strategy made
# inside a draw is a new one each time (most of a generated file's time went to those checks).
any_message = message()
gemini_message = message("gemini")
messages = st.lists(any_message, max_size=8)

METADATA = {"sessionId": "s-1", "projectHash": "p" * 64, "startTime": "2026-01-01T00:00:00Z", "kind": "main"}
BROKEN_LINES = [
    '{"id": "a", "type": "user", "content": "trunc',
    "not json at all",
    '{"id": "n", "type": "user", "content": "x", "v": NaN}',
    '{"id": "i", "type": "user", "content": "x", "v": Infinity}',
    '{"id": "z", "type": "user", "content": "x",}',
    "[1, 2",
    "\ufeff{\"id\": \"bom\", \"type\": \"user\", \"content\": \"bom\"}",
]
BLANK_LINES = ["", " ", "\t", "\u00a0", "\u3000 ", "\ufeff"]
OTHER_LINES = ["[1,2]", '"a string"', "5", "null", "{}", '{"$set": null}', '{"$rewindTo": 5}', '{"$set": [1]}']


def _dump(value: Any, ascii_only: bool) -> bytes:
    text = json.dumps(value, ensure_ascii=ascii_only, separators=(",", ":"))
    return text.encode("utf-8", "surrogatepass")


@st.composite
def jsonl_files(draw: st.DrawFn) -> bytes:
    """A whole JSONL recording as bytes: metadata, records, updates, mess."""
    lines: list[bytes] = []
    if draw(st.integers(0, 9)):
        meta = dict(METADATA)
        if draw(st.booleans()):
            meta["summary"] = draw(text)
        lines.append(_dump(meta, True))
    for _ in range(draw(st.integers(0, 10))):
        choice = draw(st.integers(0, 19))
        ascii_only = draw(st.booleans())
        if choice < 10:
            lines.append(_dump(draw(any_message), ascii_only))
        elif choice == 10:
            lines.append(_dump({"$set": {"messages": draw(messages), "lastUpdated": "x"}}, ascii_only))
        elif choice == 11:
            lines.append(_dump({"$rewindTo": draw(st.one_of(ids, st.just("unknown")))}, True))
        elif choice == 12:
            lines.append(_dump({"$set": draw(st.dictionaries(st.sampled_from(["summary", "kind", "lastUpdated"]),
                                                             text, max_size=2))}, ascii_only))
        elif choice == 13:
            lines.append(draw(st.sampled_from(BROKEN_LINES)).encode("utf-8"))
        elif choice == 14:
            lines.append(draw(st.sampled_from(BLANK_LINES)).encode("utf-8"))
        elif choice == 15:
            lines.append(draw(st.sampled_from(OTHER_LINES)).encode())
        elif choice == 16:
            raw = _dump(draw(any_message), False)
            cut = draw(st.integers(0, len(raw)))
            lines.append(raw[:cut] + draw(st.sampled_from([b"\xff", b"\xc3", b"\xed\xa0\x80", b""])) + raw[cut:])
        elif choice == 17:
            lines.append(_dump({**METADATA, "sessionId": "s-2"}, True))
        else:
            lines.append(_dump(draw(gemini_message), ascii_only))
    ending = draw(st.sampled_from([b"\n", b"\n", b"\r\n", b"\r"]))
    body = ending.join(lines)
    if draw(st.booleans()):
        body += ending
    return body
