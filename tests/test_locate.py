"""``session.locate.line_of``: the line a value of a JSON document starts on, for an error to name."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from inspector.session.locate import line_of

SENTINEL = "\u0000here\u0000"  # JSON writes it as "\\u0000here\\u0000": no other value holds that text

scalars = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False, allow_infinity=False),
                    st.text(st.characters(codec="utf-8"), max_size=12))
documents = st.recursive(
    scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=5),
                            st.dictionaries(st.text(st.characters(codec="utf-8"), max_size=6), inner, max_size=5)),
    max_leaves=30,
)


@st.composite
def a_document_and_a_path(draw: st.DrawFn) -> tuple[Any, list[str | int]]:
    doc = draw(documents.filter(lambda d: isinstance(d, (dict, list)) and d))
    path: list[str | int] = []
    node = doc
    while isinstance(node, (dict, list)) and node:
        step: str | int = draw(st.sampled_from(sorted(node))) if isinstance(node, dict) else \
            draw(st.integers(0, len(node) - 1))
        path.append(step)
        node = node[step]  # type: ignore[index]
        if not draw(st.booleans()):
            break
    return doc, path


def _with_sentinel(doc: Any, path: list[str | int]) -> Any:
    if not path:
        return SENTINEL
    copy = dict(doc) if isinstance(doc, dict) else list(doc)
    copy[path[0]] = _with_sentinel(doc[path[0]], path[1:])  # type: ignore[index]
    return copy


@settings(max_examples=300, deadline=None)
@given(case=a_document_and_a_path(), indent=st.sampled_from([None, 1, 2, 4, "\t"]),
       ascii_only=st.booleans())
def test_the_line_is_where_the_value_starts(case: tuple[Any, list[str | int]], indent: Any,
                                            ascii_only: bool) -> None:
    """The value at a path starts where a stand-in put there starts: nothing before it moves."""
    doc, path = case
    text = json.dumps(doc, indent=indent, ensure_ascii=ascii_only)
    marked = json.dumps(_with_sentinel(doc, path), indent=indent, ensure_ascii=ascii_only)
    expected = marked[:marked.index(json.dumps(SENTINEL))].count("\n") + 1
    assert line_of(text.encode("utf-8", "surrogatepass"), path) == expected


def test_a_key_written_twice_counts_where_it_is_written_last() -> None:
    data = b'{\n "history": 1,\n "x": [\n  2\n ],\n "history": [\n  {}\n ]\n}\n'
    assert json.loads(data)["history"] == [{}]
    assert line_of(data, ["history"]) == 6
    assert line_of(data, ["history", 0]) == 7
    assert line_of(data, ["x", 0]) == 4


def test_a_path_that_leads_nowhere_gives_no_line() -> None:
    data = b'\xef\xbb\xbf{"a": [1, {"b": "}]\\""}], "c": {}}'
    assert line_of(data, ["a", 1, "b"]) == 1
    assert line_of(data, ["c"]) == 1
    for nowhere in (["a", 2], ["b"], ["a", 0, "x"], ["c", "d"], ["a", "b"], [0]):
        assert line_of(data, nowhere) is None
    assert line_of(b"[1, 2", [5]) is None
    assert line_of(b"", ["a"]) is None
