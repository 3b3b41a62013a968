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

import marshal
import sys
from array import array

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from inspector.jsjson import js_stringify, py_string_measures, string_measures, utf16_len
from inspector.session.packed import pack, py_pack_sized, py_sum_sized, py_unpack_sized
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


# The values a packed column holds: JSON's values and tuples of them (session/packed.py), with the text
# the kernel writes apart (ASCII or not, lone surrogates, long, interned as figures.shared makes tool names).
texts = st.one_of(st.text(max_size=20), strings, st.text(alphabet="ab", min_size=250, max_size=300),
                  st.sampled_from(["run_shell_command", "read_file"]).map(sys.intern))
packed_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.integers(-2**31, 2**31 - 1) | st.floats(allow_nan=False)
    | texts,
    lambda inner: st.tuples(inner, inner) | st.lists(inner, max_size=4).map(tuple) | st.lists(inner, max_size=3)
    | st.dictionaries(texts, inner, max_size=3)
    | st.integers(256, 258).map(lambda n: tuple(range(n))),  # (a tuple's 4-byte count)
    max_leaves=12)
PACKED = settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))


def shape(value: object) -> object:
    """``value`` with each part's type beside it: ``==`` holds True equal to 1 and 1.0, and 0.0 to -0.0."""
    if isinstance(value, (tuple, list)):
        return (type(value).__name__, [shape(item) for item in value])
    if isinstance(value, dict):
        return ("dict", [(shape(k), shape(v)) for k, v in value.items()])
    return (type(value).__name__, repr(value))


def pieces(data: bytes, lengths: array[int]) -> list[bytes]:
    found, start = [], 0
    for length in lengths:
        found.append(data[start:start + length])
        start += length
    return found


@PACKED
@given(values=st.lists(packed_values, max_size=12))
def test_pack_sized_writes_what_marshal_reads_back(values: list[object]) -> None:
    """Every value the kernel packs is read back as itself, part for part and type for type: by marshal
    (a packed column's single reads, a build without the kernel), by the kernel and by the Python
    definition; and the Python definition's bytes read back the same through the kernel."""
    expected = [value if value != () or type(value) is not tuple else () for value in values]
    data, raw_lengths = kernel.pack_sized(values)
    lengths = array("I", raw_lengths)
    assert len(lengths) == len(values) and sum(lengths) == len(data)
    assert [shape(marshal.loads(piece)) if piece else shape(()) for piece in pieces(data, lengths)] == \
        [shape(value) for value in expected]
    assert [shape(v) for v in kernel.unpack_sized(data, lengths)] == [shape(v) for v in expected]
    assert [shape(v) for v in py_unpack_sized(data, lengths)] == [shape(v) for v in expected]
    py_data, py_lengths = py_pack_sized(values)
    assert [shape(v) for v in kernel.unpack_sized(py_data, array("I", py_lengths))] == [shape(v) for v in expected]
    assert [len(piece) == 0 for piece in pieces(data, lengths)] == [value == () and type(value) is tuple
                                                                    for value in values]


def test_packed_interned_text_is_read_back_as_the_same_object() -> None:
    """A tool name (interned by figures.shared) made again from its packed bytes is the one object,
    not a copy a turn."""
    name = sys.intern("a_tool_of_its_own_" + "x" * 300)
    loose = "".join(["not", "_interned"])
    data, lengths = kernel.pack_sized([(name, "é" + loose, loose), (sys.intern("é_tool"),)])
    first, second = kernel.unpack_sized(data, array("I", lengths))
    assert first[0] is name and second[0] is sys.intern("é_tool")
    assert first[1:] == ("é" + loose, loose)


def test_pack_sized_leaves_to_marshal_what_it_does_not_write() -> None:
    """Ints past 32 bits, values nested deeper than the kernel goes, and a value marshal refuses: the
    same bytes' values, and the same refusal, as the Python definition."""
    deep: object = "bottom"
    for _ in range(200):
        deep = (deep, 1)
    values = [2**40, -2**63, 2**100, (2**31, -2**31 - 1), deep]
    data, lengths = kernel.pack_sized(values)
    assert kernel.unpack_sized(data, array("I", lengths)) == values
    for refused in ([object()], [(1, range(3))]):
        with pytest.raises(ValueError):
            kernel.pack_sized(refused)
        with pytest.raises(ValueError):
            py_pack_sized(refused)


@PACKED
@given(values=st.lists(packed_values, max_size=12), growing=st.booleans())
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


@EXAMPLES
@given(lengths=st.lists(st.integers(0, 2**32 - 1), max_size=60), data=st.data())
def test_sum_sized_is_its_python_definition(lengths: list[int], data: st.DataObject) -> None:
    """Where a run of packed values starts: any run, past the end too (as a slice is), and lengths near
    4 GiB whose sum does not fit 32 bits."""
    sized = array("I", lengths)
    start = data.draw(st.integers(0, len(lengths) + 2))
    stop = data.draw(st.integers(start, len(lengths) + 3))
    assert kernel.sum_sized(sized, start, stop) == py_sum_sized(sized, start, stop) == sum(lengths[start:stop])


def test_sum_sized_refuses_a_backward_run_and_other_arrays() -> None:
    with pytest.raises(ValueError):
        kernel.sum_sized(array("I", [1, 2, 3]), 2, 1)
    with pytest.raises(ValueError):
        kernel.sum_sized(array("I", [1, 2, 3]), -1, 2)
    with pytest.raises(TypeError):
        kernel.sum_sized(array("q", [1, 2, 3]), 0, 2)
