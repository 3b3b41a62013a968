"""JavaScript's strings and JSON, checked against Node itself."""

from __future__ import annotations

import pytest

from inspector.jsjson import js_json_len, js_stringify, js_to_string, js_trim, js_utf8, truthy, utf16_len
from tests.reference.client import RefServer

VALUES = [
    1.0, -0.0, 1e21, 1e20, 1e-7, 1e-6, 0.1, 5e-324, 1.7976931348623157e308, 2**53, 2**53 + 1, 2**64 + 1,
    12345678901234567890123, -(2**70), 123456789.125, 0, True, False, None,
    "plain", "é中😀", "\ud800", "a\udfffb", "\ud83d\ude00", "\x00\x1f\x7f\b\f\n\r\t\"\\/", "\u2028\u2029",
    [], {}, [[], {}], {"b": 1, "a": [1.5, None, {"10": 1, "2": 2, "x": 3, "01": 4, "4294967295": 5}]},
]


@pytest.mark.differential
@pytest.mark.parametrize("indent", [None, 2])
def test_stringify_matches_node(reference: RefServer, indent: int | None) -> None:
    for value in VALUES:
        answer = reference.call("stringify", value=value, indent=indent)
        assert js_stringify(value, indent=indent) == answer["text"], value
        if indent is None:
            assert js_json_len(value) == answer["length"], value


def test_utf16_length_counts_astral_characters_twice() -> None:
    assert utf16_len("a😀") == 3
    assert utf16_len("\ud800") == 1
    assert utf16_len("é") == 1


def test_a_surrogate_pair_held_as_two_code_points_is_one_character() -> None:
    assert js_stringify("\ud83d\ude00") == js_stringify("😀") == '"😀"'
    assert js_json_len("\ud83d\ude00") == 4


def test_trim_is_javascripts() -> None:
    assert js_trim("\ufeff\u00a0 x \u3000\u2028") == "x"
    assert js_trim("\u180ex") == "\u180ex"  # not whitespace since ES2016
    assert js_trim("\x85x") == "\x85x"  # NEL neither


def test_node_writes_lone_surrogates_as_replacement_characters() -> None:
    assert js_utf8("a\ud800b") == b"a\xef\xbf\xbdb"
    assert js_utf8("\ud83d\ude00") == "😀".encode()


def test_truthiness_and_string_conversion() -> None:
    assert [truthy(v) for v in ({}, [], "", 0, 0.0, None, "0", float("nan"))] == [
        True, True, False, False, False, False, True, False]
    assert [js_to_string(v) for v in (None, True, 1.0, [1, None, "a"], {})] == [
        "null", "true", "1", "1,,a", "[object Object]"]


def test_to_string_of_parsed_numbers_matches_node() -> None:
    """``String(JSON.parse(text))``: a number past a double's range parses to Infinity in JavaScript, so
    a recorded ``exitCode`` of 401 digits reads "Infinity" (JSON.stringify writes it "null")."""
    import json
    import shutil
    import subprocess

    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed: String() is checked against Node itself")
    texts = ["1" + "0" * 400, "-" + "9" * 400, "[[1" + "0" * 400 + "]]", str(2**60), "12345678901234567890123",
             "1e400", "[1,[2,null],3]", "-0", "0.1"]
    script = "for (const t of JSON.parse(process.argv[1])) console.log(String(JSON.parse(t)))"
    done = subprocess.run([node, "-e", script, json.dumps(texts)], capture_output=True, text=True, check=True)
    assert [js_to_string(json.loads(t)) for t in texts] == done.stdout.splitlines()
