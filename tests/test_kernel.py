"""The C kernel (``inspector/_kernel.c``) against its Python definitions.

``jsjson.string_measures`` is the kernel's ``measure_string`` where it was
built and ``jsjson.py_string_measures`` where not; both must give the same
(UTF-16 units, ASCII units, JSON.stringify length) for every string, including
the ones where Python and JavaScript disagree: lone surrogates, a surrogate
pair held as two code points, characters beyond U+FFFF, control characters
and the characters JSON escapes.  The differential tests check the figures
built on them against Node.
"""

from __future__ import annotations

from array import array

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from inspector.jsjson import js_stringify, py_string_measures, string_measures, utf16_len
from inspector.session.figures import pack
from inspector.session.packed import py_unpack_sized
from inspector.tokens import MAX_CHARS_FOR_FULL_HEURISTIC, quarters_of, text_quarters
from tests.reference import strategies as gen

kernel = pytest.importorskip("inspector._kernel", reason="the C kernel is not built here (pure-Python install)")

EXAMPLES = settings(max_examples=1000, deadline=None, suppress_health_check=list(HealthCheck))

# Every character class the kernel treats apart, and long runs of them (Latin-1 and wider storage).
SPECIAL = [chr(c) for c in range(0x20)] + ['"', "\\", "/", "\x7f", "\x80", "\xff", "é", "\u2028", "\ufeff",
                                            "中", "\ud800", "\udbff", "\udc00", "\udfff", "😀", "𝄞", "\U0010ffff"]
strings = st.one_of(
    gen.text,
    st.text(),
    st.lists(st.sampled_from(SPECIAL), max_size=40).map("".join),
    st.lists(st.one_of(st.sampled_from(SPECIAL), st.characters()), max_size=200).map("".join),
)


@EXAMPLES
@given(text=strings)
def test_kernel_measures_a_string_as_its_python_definition(text: str) -> None:
    assert kernel.measure_string(text) == py_string_measures(text)


@EXAMPLES
@given(text=strings)
def test_the_definition_is_javascripts_length_and_json_text(text: str) -> None:
    units, ascii_units, json_len = py_string_measures(text)
    assert units == len(text.encode("utf-16-le", "surrogatepass")) // 2
    assert ascii_units == sum(1 for c in text if c < "\x80")
    assert json_len == utf16_len(js_stringify(text))


def test_pairs_lone_surrogates_and_escapes() -> None:
    cases = [
        ("", (0, 0, 2)),
        ("ab", (2, 2, 4)),
        ('"\\', (2, 2, 6)),  # "\"\\"
        ("\n\t\b\f\r", (5, 5, 12)),
        ("\x00\x1f", (2, 2, 14)),  # \u0000\u001f
        ("\x7f\x80é", (3, 1, 5)),  # written as they are
        ("😀", (2, 0, 4)),  # one character, two UTF-16 units
        ("\ud83d\ude00", (2, 0, 4)),  # the same pair held as two code points: one character in JavaScript
        ("\ud800", (1, 0, 8)),  # a lone surrogate: "\ud800"
        ("\ude00\ud83d", (2, 0, 14)),  # low then high: two lone surrogates
        ("\u2028", (1, 0, 3)),  # JSON.stringify leaves line separators as they are
    ]
    for text, expected in cases:
        assert py_string_measures(text) == expected, repr(text)
        assert kernel.measure_string(text) == expected, repr(text)
        assert string_measures(text) == expected, repr(text)


def test_quarters_from_the_measures() -> None:
    long_text = "é" * (MAX_CHARS_FOR_FULL_HEURISTIC + 1)  # beyond the full heuristic: length / 4
    for text in ("abcd", "é", "😀", "a😀é\ud800", long_text, "é" * MAX_CHARS_FOR_FULL_HEURISTIC):
        units, ascii_units, _ = kernel.measure_string(text)
        assert quarters_of(units, ascii_units) == text_quarters(text)
    assert text_quarters(long_text) == MAX_CHARS_FOR_FULL_HEURISTIC + 1


def test_only_strings() -> None:
    with pytest.raises(TypeError):
        kernel.measure_string(b"bytes")


@EXAMPLES
@given(data=st.binary(max_size=300).map(lambda b: b.replace(b"\x01", b"\n")), cut=st.tuples(
    st.integers(0, 300), st.integers(0, 300)))
def test_count_newlines_is_bytes_count(data: bytes, cut: tuple[int, int]) -> None:
    start, stop = min(cut), max(cut)
    start = min(start, len(data))
    assert kernel.count_newlines(data, start, stop) == data.count(b"\n", start, stop)


def test_count_newlines_refuses_a_backward_range() -> None:
    with pytest.raises(ValueError):
        kernel.count_newlines(b"a\nb", 2, 1)


# The values a packed column holds: JSON's values and tuples of them (session/packed.py).
packed_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: st.tuples(inner, inner) | st.lists(inner, max_size=4).map(tuple), max_leaves=12)


@EXAMPLES
@given(values=st.lists(packed_values, max_size=40), growing=st.booleans())
def test_unpack_sized_is_its_python_definition(values: list[object], growing: bool) -> None:
    raws = [pack(value) for value in values]
    data: bytes | bytearray = b"".join(raws)
    if growing:  # a partial chunk: a version's own bytearray
        data = bytearray(data)
    lengths = array("I", map(len, raws))
    expected = [value if raw else () for value, raw in zip(values, raws, strict=True)]  # (an empty tuple: no bytes)
    assert kernel.unpack_sized(data, lengths) == py_unpack_sized(data, lengths) == expected


def test_unpack_sized_refuses_lengths_past_the_data() -> None:
    raws = b"".join([pack(5), pack("x")])
    for lengths in (array("I", [5, 99]), array("I", [len(raws) + 1]), array("I", [4294967295, 1])):
        with pytest.raises(ValueError):
            kernel.unpack_sized(raws, lengths)
    with pytest.raises(TypeError):
        kernel.unpack_sized(raws, array("q", [5]))
