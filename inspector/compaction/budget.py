"""The tool-output budget: ``truncateHistoryToBudget`` (REFERENCE.md section 5).

Walking newest to oldest, function responses are counted against a budget of
50,000 tokens; one that would overflow it is replaced by a head/tail excerpt
that names a file holding the whole output.  This module only *plans* that in
memory: the file names are chosen here, the files are written by the store
when a compaction is applied.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from inspector.jsjson import js_stringify, utf16_len
from inspector.tokens import DEFAULT_TOKEN_LIMIT, text_quarters

FUNCTION_RESPONSE_TOKEN_BUDGET = 50_000
DEFAULT_TRUNCATE_CHARS = 40_000
TOOL_OUTPUTS_DIR = "tool-outputs"

_UNSAFE_FILENAME = re.compile(r"[^a-zA-Z0-9_-]")


def _sanitize(text: str) -> str:
    """``replace(/[^a-zA-Z0-9_-]/g, "_")`` on UTF-16 units (an emoji becomes two)."""
    return _UNSAFE_FILENAME.sub(lambda m: "__" if ord(m.group()) > 0xFFFF else "_", text)


@dataclass(frozen=True)
class Truncation:
    """One tool output the budget replaces with an excerpt."""

    turn: int
    part: int
    tool: str
    output_file: str
    full_text: str
    original_tokens: int
    new_tokens: int


def truncate_chars(token_limit: int = DEFAULT_TOKEN_LIMIT, last_prompt_tokens: int = 0) -> int:
    """``getTruncateToolOutputThreshold``: 40,000 chars, less when the window is nearly full."""
    return min(4 * (token_limit - last_prompt_tokens), DEFAULT_TRUNCATE_CHARS)


def output_file_name(tool: str, seq: int) -> str:
    """The reference's file name for a saved output (``saveTruncatedToolOutput``)."""
    safe_tool = _sanitize(tool).lower()
    safe_id = _sanitize(str(seq)).lower()
    return f"{safe_id}.txt" if safe_id.startswith(safe_tool) else f"{safe_tool}_{safe_id}.txt"


def _slice16(text: str, start: int, end: int | None = None) -> str:
    """``text.slice(start, end)`` in UTF-16 code units."""
    if text.isascii():
        return text[start:end]
    units = text.encode("utf-16-le", "surrogatepass")
    length = len(units) // 2
    begin = start if start >= 0 else max(length + start, 0)
    stop = length if end is None else (end if end >= 0 else max(length + end, 0))
    return units[2 * begin : 2 * stop].decode("utf-16-le", "surrogatepass")


def format_truncated(content: str, output_file: str, max_chars: int) -> str:
    """``formatTruncatedToolOutput``: the first 20% and last 80% of ``max_chars``."""
    length = utf16_len(content)
    if length <= max_chars:
        return content
    head_chars = math.floor(max_chars * 0.2)
    tail_chars = max_chars - head_chars
    head = _slice16(content, 0, head_chars)
    tail = _slice16(content, -tail_chars) if tail_chars else _slice16(content, 0)
    omitted = length - head_chars - tail_chars
    return (
        f"Output too large. Showing first {head_chars:,} and last {tail_chars:,} characters. "
        f"For full output see: {output_file}\n{head}\n\n... [{omitted:,} characters omitted] ...\n\n{tail}"
    )


def response_text(response: Any) -> str:
    """The text the budget measures: ``output``, else ``content``, else pretty JSON."""
    if isinstance(response, str):
        return response
    if isinstance(response, dict):
        for key in ("output", "content"):
            if isinstance(response.get(key), str):
                return str(response[key])
    return js_stringify(response, indent=2)


def apply_budget(
    contents: Sequence[dict[str, Any]],
    output_path: Callable[[str, int], str],
    max_chars: int = DEFAULT_TRUNCATE_CHARS,
    budget: int = FUNCTION_RESPONSE_TOKEN_BUDGET,
) -> tuple[list[dict[str, Any]], list[Truncation]]:
    """The history after the budget, and what it truncated (newest first).

    ``output_path(tool, seq)`` names the file for the ``seq``-th truncation
    (1-based, numbered as the reference numbers them).  Untouched turns are
    the same objects as in ``contents``.
    """
    used = 0
    seq = 0  # the reference's truncation counter (it also counts failed saves)
    truncations: list[Truncation] = []
    result: list[dict[str, Any]] = list(contents)
    for i in range(len(contents) - 1, -1, -1):
        content = contents[i]
        parts = content.get("parts")
        if not isinstance(parts, list):
            if parts is None:  # the reference rebuilds every turn as {...content, parts: [...]}
                result[i] = {**content, "parts": []}
            continue
        new_parts: list[Any] | None = None
        for j in range(len(parts) - 1, -1, -1):
            part = parts[j]
            if not isinstance(part, dict):
                continue
            fr = part.get("functionResponse")
            if not isinstance(fr, dict):
                continue
            if "response" not in fr:
                # No response: the reference measures ``{text: undefined}`` (0
                # tokens); over budget it tries to save ``undefined``, which
                # fails after taking a number, and keeps the part as it is.
                if used > budget:
                    seq += 1
                continue
            text = response_text(fr["response"])
            tokens = text_quarters(text) // 4
            if used + tokens > budget:
                tool = fr.get("name") if isinstance(fr.get("name"), str) else "unknown_tool"
                seq += 1
                path = output_path(str(tool), seq)
                excerpt = format_truncated(text, path, max_chars)
                new_tokens = text_quarters(excerpt) // 4
                if new_parts is None:
                    new_parts = list(parts)
                # Only the function response survives: other keys of the part are dropped.
                new_parts[j] = {"functionResponse": {**fr, "response": {"output": excerpt}}}
                used += new_tokens
                truncations.append(Truncation(i, j, str(tool), path, text, tokens, new_tokens))
            else:
                used += tokens
        if new_parts is not None:
            result[i] = {**content, "parts": new_parts}
    return result, truncations
