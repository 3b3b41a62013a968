"""Gemini CLI's token estimate, reproduced exactly, and the model's limits.

The reference adds 0.25 per ASCII code unit and 1.5 per other code unit, and
``length / 4`` for JSON text: every value is a multiple of a quarter token.  So
this module counts in integer *quarters*, which is exact where JavaScript's
floating-point sum is also exact (below 2**51 quarters), and floors at the end.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from inspector.jsjson import js_json_len, string_measures, truthy, utf16_len

IMAGE_QUARTERS = 3_000 * 4
PDF_QUARTERS = 25_800 * 4
MAX_CHARS_FOR_FULL_HEURISTIC = 100_000
MAX_RECURSION_DEPTH = 3

DEFAULT_TOKEN_LIMIT = 1_048_576
GEMMA_4_TOKEN_LIMIT = 256_000
_GEMMA_4_MODELS = frozenset({"gemma-4-31b-it", "gemma-4-26b-a4b-it"})
DEFAULT_THRESHOLD = 0.5


def token_limit(model: str | None) -> int:
    """The context window Gemini CLI assumes for ``model``."""
    if model in _GEMMA_4_MODELS:
        return GEMMA_4_TOKEN_LIMIT
    return DEFAULT_TOKEN_LIMIT


def text_quarters(text: str) -> int:
    """Quarter tokens of one text, as ``estimateTextTokens``."""
    if text.isascii():
        return len(text)  # 0.25 per char; also right for the length/4 branch
    units, ascii_units, _ = string_measures(text)
    return quarters_of(units, ascii_units)


def quarters_of(units: int, ascii_units: int) -> int:
    """Quarter tokens of a text of ``units`` UTF-16 units, ``ascii_units`` of them ASCII:
    a quarter per ASCII unit and six per other unit, or ``length / 4`` for a long text."""
    if units > MAX_CHARS_FOR_FULL_HEURISTIC:
        return units
    return ascii_units + 6 * (units - ascii_units)


def media_quarters(part: dict[str, Any]) -> int | None:
    inline = part.get("inlineData") if "inlineData" in part else None
    file_data = part.get("fileData") if "fileData" in part else None
    mime = (inline.get("mimeType") if isinstance(inline, dict) else None) or (
        file_data.get("mimeType") if isinstance(file_data, dict) else None
    )
    if not isinstance(mime, str):
        return None
    if mime.startswith("image/"):
        return IMAGE_QUARTERS
    if mime.startswith("application/pdf"):
        return PDF_QUARTERS
    return None


def part_quarters(part: Any, depth: int = 0) -> int:
    """Quarter tokens of one part (before the reference floors the sum)."""
    if not isinstance(part, dict):
        # A bare value where a part belongs: the reference stringifies it.
        return js_json_len(part)
    text = part.get("text")
    if isinstance(text, str):
        return text_quarters(text)
    response_part = part.get("functionResponse")
    if truthy(response_part):
        return function_response_quarters(response_part, depth)
    media = media_quarters(part)
    if media is not None:
        return media
    return js_json_len(part)


def function_response_quarters(fr: Any, depth: int) -> int:
    if not isinstance(fr, dict):
        return 0
    name = fr.get("name")
    total = utf16_len(name) if isinstance(name, str) else 0
    response = fr.get("response")
    if isinstance(response, str):
        total += utf16_len(response)
    elif response is not None:
        total += js_json_len(response)
    nested = fr.get("parts")
    if isinstance(nested, list) and nested:
        total += 4 * estimate_tokens(nested, depth + 1)
    return total


def parts_quarters(parts: Iterable[Any], depth: int = 0) -> int:
    if depth > MAX_RECURSION_DEPTH:
        return 0
    return sum(part_quarters(p, depth) for p in parts)


def estimate_tokens(parts: Iterable[Any], depth: int = 0) -> int:
    """``estimateTokenCountSync(parts)``: the floor of the summed estimate."""
    return parts_quarters(parts, depth) // 4


def estimate_contents(contents: Iterable[dict[str, Any]]) -> int:
    """The estimate over every part of a list of Content, summed then floored."""
    return sum(parts_quarters(content_parts(c)) for c in contents) // 4


def content_parts(content: dict[str, Any]) -> list[Any]:
    parts = content.get("parts")
    return parts if isinstance(parts, list) else []
