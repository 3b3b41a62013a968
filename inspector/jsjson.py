"""JavaScript's view of strings and JSON, for figures that must match Gemini CLI.

Gemini CLI measures text with JavaScript: ``str.length`` counts UTF-16 code
units (an emoji is two), and ``JSON.stringify`` writes numbers, escapes and
lone surrogates its own way.  Python's ``len`` and ``json.dumps`` differ on all
of these, so every length the reference computes goes through this module.
"""

from __future__ import annotations

import codecs
import json
import math
import re
from collections.abc import Callable, Sequence
from decimal import Decimal
from typing import Any, Final

import orjson

# ECMAScript WhiteSpace + LineTerminator: what String.prototype.trim removes.
JS_WHITESPACE = (
    "\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006"
    "\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
)

_encode_string = json.encoder.encode_basestring  # C-accelerated, no ASCII escaping
_SURROGATE = re.compile(f"[{chr(0xD800)}-{chr(0xDFFF)}]")  # chr(): compiled modules refuse surrogate literals


def _fffd(error: UnicodeError) -> tuple[bytes, int]:
    assert isinstance(error, UnicodeEncodeError)
    return "\ufffd".encode() * (error.end - error.start), error.end


codecs.register_error("replace_with_fffd", _fffd)


def js_trim(text: str) -> str:
    """``String.prototype.trim``."""
    return text.strip(JS_WHITESPACE)


def utf16_len(text: str) -> int:
    """``text.length`` in JavaScript: UTF-16 code units."""
    if text.isascii():
        return len(text)
    return string_measures(text)[0]


def js_utf8(text: str) -> bytes:
    """The bytes Node writes for ``text`` (a lone surrogate becomes U+FFFD)."""
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return _join_pairs(text).encode("utf-8", "replace_with_fffd")



def js_number(value: float | int) -> str:
    """``JSON.stringify`` of a number (``Number.prototype.toString`` for finite values)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        if -(2**53) <= value <= 2**53:
            return str(value)
        try:
            value = float(value)
        except OverflowError:
            return "null"
    if not math.isfinite(value):
        return "null"
    if value == 0:
        return "0"
    sign = "-" if value < 0 else ""
    _, digits_tuple, exponent = Decimal(repr(abs(value))).as_tuple()
    digits = "".join(map(str, digits_tuple)).rstrip("0") or "0"
    assert isinstance(exponent, int)
    # value = 0.digits * 10**point
    point = len("".join(map(str, digits_tuple))) + exponent
    k = len(digits)
    if k <= point <= 21:
        body = digits + "0" * (point - k)
    elif 0 < point <= 21:
        body = digits[:point] + "." + digits[point:]
    elif -6 < point <= 0:
        body = "0." + "0" * (-point) + digits
    else:
        e = point - 1
        mantissa = digits[0] + ("." + digits[1:] if k > 1 else "")
        body = f"{mantissa}e{'+' if e >= 0 else '-'}{abs(e)}"
    return sign + body


def _join_pairs(text: str) -> str:
    """A high + low surrogate written as two code points is one character in JavaScript."""
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")


def _js_string(text: str) -> str:
    if not text.isascii() and _SURROGATE.search(text):
        # JavaScript escapes lone surrogates; Python would keep them raw.
        text = _join_pairs(text)
        return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", _encode_string(text))
    return _encode_string(text)


def js_stringify(value: Any, indent: int | None = None) -> str:
    """The exact text of ``JSON.stringify(value, null, indent)``."""
    parts: list[str] = []
    _write(value, parts, indent, "")
    return "".join(parts)


def _write(value: Any, out: list[str], indent: int | None, pad: str) -> None:
    if isinstance(value, str):
        out.append(_js_string(value))
    elif value is None:
        out.append("null")
    elif isinstance(value, (bool, int, float)):
        out.append(js_number(value))
    elif isinstance(value, dict):
        if not value:
            out.append("{}")
            return
        inner = pad + " " * indent if indent else ""
        out.append("{")
        first = True
        for key, item in _js_key_order(value):
            if not first:
                out.append(",")
            first = False
            if indent:
                out.append("\n" + inner)
            out.append(_js_string(key))
            out.append(": " if indent else ":")
            _write(item, out, indent, inner)
        if indent:
            out.append("\n" + pad)
        out.append("}")
    elif isinstance(value, (list, tuple)):
        if not value:
            out.append("[]")
            return
        inner = pad + " " * indent if indent else ""
        out.append("[")
        for i, item in enumerate(value):
            if i:
                out.append(",")
            if indent:
                out.append("\n" + inner)
            _write(item, out, indent, inner)
        if indent:
            out.append("\n" + pad)
        out.append("]")
    elif isinstance(value, Sequence):  # a lazy list of records (session.records.MessageList)
        _write(list(value), out, indent, pad)
    else:
        raise TypeError(f"not a JSON value: {type(value).__name__}")


def _js_key_order(obj: dict[str, Any]) -> list[tuple[str, Any]]:
    """Object keys in JavaScript's order: array-index keys ascending, then insertion order."""
    items = list(obj.items())
    index_keys = [(k, v) for k, v in items if _is_array_index(k)]
    if not index_keys:
        return items
    index_keys.sort(key=lambda kv: int(kv[0]))
    return index_keys + [(k, v) for k, v in items if not _is_array_index(k)]


def _is_array_index(key: str) -> bool:
    return key.isdigit() and key.isascii() and (key == "0" or key[0] != "0") and int(key) < 2**32 - 1


_CONTINUATION = bytes(range(0x80, 0xC0))
_FOUR_BYTE_LEADS = (b"\xf0", b"\xf1", b"\xf2", b"\xf3", b"\xf4")
_dumps = orjson.dumps
_SAFE_INT = 2**53


def utf16_len_of_utf8(data: bytes) -> int:
    """UTF-16 code units of valid UTF-8 ``data`` (an astral character is two)."""
    if data.isascii():
        return len(data)
    return len(data.translate(None, _CONTINUATION)) + sum(data.count(b) for b in _FOUR_BYTE_LEADS)


def js_string_json_len(text: str) -> int:
    """``JSON.stringify(text).length`` for a string."""
    return string_measures(text)[2]


# -- one string, measured in one pass -------------------------------------------------------------------
#
# The token estimate and the JSON length of every text a turn holds are taken
# from one pass over it: ``inspector/_kernel.c`` (built at install, see
# setup.py) where it could be built, else ``py_string_measures``, the definition
# the C follows (tests/test_kernel.py compares them).

StringMeasures = Callable[[str], tuple[int, int, int]]


def py_string_measures(text: str) -> tuple[int, int, int]:
    """(UTF-16 units, ASCII units, ``JSON.stringify(text).length``) of ``text``, as JavaScript counts them."""
    if text.isascii():
        units = ascii_units = len(text)
    else:
        units = len(text.encode("utf-16-le", "surrogatepass")) // 2
        ascii_units = len(text.encode("ascii", "ignore"))
    try:
        data = _dumps(text)  # orjson escapes exactly as JavaScript does
    except TypeError:  # a lone surrogate
        return units, ascii_units, len(_js_string(text).encode("utf-16-le", "surrogatepass")) // 2
    return units, ascii_units, len(data) if text.isascii() else utf16_len_of_utf8(data)


def _kernel() -> StringMeasures:
    try:
        from inspector._kernel import measure_string
    except ImportError:  # installed without a C compiler
        return py_string_measures
    return measure_string


string_measures: Final[StringMeasures] = _kernel()


def js_json_len(value: Any) -> int:
    """``JSON.stringify(value).length``, fast for the common case.

    orjson writes the text in C (its escapes and separators are JavaScript's)
    and the length is counted in UTF-16 units; only a value holding a float
    or an integer beyond 2**53, which print differently, is corrected.  Lone
    surrogates and integers beyond 64 bits, which orjson refuses, take the
    exact slow path.
    """
    try:
        data = _dumps(value)
    except TypeError:
        return utf16_len(js_stringify(value))
    length = len(data) if data.isascii() else utf16_len_of_utf8(data)
    if _has_odd_number(value):  # a walk: a regex over the text is several times slower
        length += _number_correction(value)
    return length


def _has_odd_number(value: Any) -> bool:
    kind = type(value)
    if kind is str or value is None or kind is bool:
        return False
    if kind is dict:
        mapping: dict[Any, Any] = value  # typed, so that the compiled loop uses dict primitives
        for item in mapping.values():  # noqa: SIM110 - a plain loop is faster than any() here
            if type(item) is not str and _has_odd_number(item):
                return True
        return False
    if kind is list:
        items: list[Any] = value
        for item in items:  # noqa: SIM110
            if type(item) is not str and _has_odd_number(item):
                return True
        return False
    if kind is int:
        number: int = value
        return not -_SAFE_INT <= number <= _SAFE_INT
    return True  # a float, or a subclass: let the correction decide


def _number_correction(value: Any) -> int:
    """JavaScript's length minus orjson's for every number inside ``value``."""
    if isinstance(value, str) or value is None or isinstance(value, bool):
        return 0
    if isinstance(value, (int, float)):
        return len(js_number(value)) - len(_dumps(value))
    if isinstance(value, dict):
        return sum(_number_correction(v) for v in value.values())
    if isinstance(value, (list, tuple)):
        return sum(_number_correction(v) for v in value)
    return 0


def js_to_string(value: Any) -> str:
    """``String(value)`` for a JSON value (template literals, ``join``)."""
    if value is None:
        return "null"
    if isinstance(value, str):
        return value
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) > 2**53:
        try:  # JSON.parse made a double of it: past a double's range, that is Infinity
            value = float(value)
        except OverflowError:
            return "Infinity" if value > 0 else "-Infinity"
    if isinstance(value, (bool, int, float)):
        return js_number(value) if not (isinstance(value, float) and not math.isfinite(value)) else (
            "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
        )
    if isinstance(value, list):
        return ",".join("" if v is None else js_to_string(v) for v in value)
    return "[object Object]"


def truthy(value: Any) -> bool:
    """JavaScript truthiness of a JSON value (``{}`` and ``[]`` are true)."""
    if value is None or value is False:
        return False
    if isinstance(value, (dict, list)):
        return True
    if isinstance(value, float) and math.isnan(value):
        return False
    return bool(value)
