"""``format.visible``: the one gate session text passes before it reaches a terminal."""

from __future__ import annotations

import unicodedata

from hypothesis import given
from hypothesis import strategies as st

from inspector.format import visible


def _is_control(char: str) -> bool:
    code = ord(char)
    return (
        unicodedata.category(char) in ("Cc", "Cs")
        or code in (0x200E, 0x200F)
        or 0x202A <= code <= 0x202E
        or 0x2066 <= code <= 0x2069
    )


def test_escape_sequences_are_shown_not_sent() -> None:
    assert visible("a\x1b]2;pwned\x07b") == "a\\e]2;pwned\\x07b"
    assert visible("\x1b]52;c;aGk=\x07") == "\\e]52;c;aGk=\\x07"
    assert visible("\x1b[2J") == "\\e[2J"
    assert visible("\x9b31m") == "\\x9b31m"
    assert visible("over\rwrite") == "over\\rwrite"
    assert visible("lone \ud800") == "lone \\ud800"
    assert visible("abc\u202edef") == "abc\\u202edef"


def test_newlines_and_tabs_stay_unless_one_line() -> None:
    assert visible("a\nb\tc") == "a\nb\tc"
    assert visible("a\nb\tc", one_line=True) == "a\\nb\\tc"


def test_plain_text_is_returned_as_is() -> None:
    text = "héllo 世界 🎉 [bold]not markup[/]"
    assert visible(text) is text


@given(st.text(alphabet=st.characters(codec=None, exclude_categories=())))
def test_nothing_unsafe_survives(text: str) -> None:
    shown = visible(text, one_line=True)
    assert not any(_is_control(ch) for ch in shown)
    shown.encode("utf-8")  # no lone surrogate left: a terminal write cannot fail
    kept = visible(text)
    assert not any(_is_control(ch) for ch in kept if ch not in "\n\t")


def test_the_utf8_pattern_matches_exactly_the_characters_that_drive_a_terminal() -> None:
    """The byte pattern JSON output is escaped with on a terminal, built from ``TERMINAL_DRIVERS``,
    matches the encoding of each of those characters whole, and nothing in any other character."""
    from inspector.format import TERMINAL_DRIVERS, drivers_in_utf8

    pattern = drivers_in_utf8()
    drivers = {code for low, high in TERMINAL_DRIVERS for code in range(low, high + 1)}
    wrong = []
    for code in range(0x110000):
        if 0xD800 <= code <= 0xDFFF:
            continue  # no UTF-8 form
        encoded = chr(code).encode()
        if (pattern.fullmatch(encoded) is not None) != (code in drivers) or (
                code not in drivers and pattern.search(encoded) is not None):
            wrong.append(code)
    assert wrong == []
    assert visible("".join(map(chr, sorted(drivers)))).count("\\") == len(drivers)
