"""The envelopes Gemini CLI puts around a recorded tool result, and the text inside them.

``kept_text`` reads a result's start and end out of the ``<untrusted_context>``
wrapper, the preview masking keeps of an old output, and the start and end
kept of an output cut to a size limit when it was recorded (one form per
version).  ``outcomes`` reads how a call ended from what this returns.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

EDGE = 4000  # characters read at each end of a result: every form ``outcomes`` reads sits there


# Gemini CLI's envelopes around a result text.
_WRAPPER_OPEN, _WRAPPER_CLOSE = "<untrusted_context>\n", "\n</untrusted_context>"
# Masking (toolOutputMaskingService) keeps a preview of an old output: for the shell tool its fields
# whole and the output's first and last lines; for others the text's two ends.
_MASKED_OPEN, _MASKED_CLOSE = "<tool_output_masked>\n", "\n</tool_output_masked>"
_MASKED_SAVED = "\n\nOutput too large. Full output available at: "
# An output over the size limit is cut when it is recorded (utils/fileUtils.js), in one form per
# version; its numbers are JavaScript's toLocaleString, grouped as the user's locale groups them.
_N = r"(\d[\d.,'\u00a0\u202f ]*)"
_CUT_ENDS = re.compile(  # 0.29 on: its first 20 % and last 80 % of the limit, in characters
    rf"Output too large\. Showing first {_N} and last {_N} characters\. For full output see: [^\n]*\n")
_CUT_OMITTED = re.compile(rf"\n\n\.\.\. \[{_N} characters omitted\] \.\.\.\n\n")
_CUT_END = re.compile(  # 0.26 to 0.28: its last lines (or characters) only
    rf"Output too large\. Showing the last {_N} (?:of {_N} lines(?: \(some long lines truncated\))?"
    r"|characters of the output)\. For full output see: [^\n]*\n\.\.\.\n?")
_CUT_LINES = "Tool output was too large and has been truncated.\n"  # 0.6 to 0.25: its first and last lines
_CUT_LINES_BODY = "\nTruncated part of the output:\n"
_CUT_LINES_MARK = "\n... [CONTENT TRUNCATED] ...\n"
_CUT_LINES_UNSAVED = "\n[Note: Could not save full output to file]"


@dataclass(frozen=True)
class Kept:
    """What is read of a result's text, out of Gemini CLI's envelopes: its start and its end.

    ``head`` runs from the text's first character ("" when Gemini CLI kept
    only its end), ``tail`` to its last character, from the start of a whole
    line (a line cut in two is left out).  A short text is both.
    """

    head: str
    tail: str


def _number(digits: str) -> int:
    return int(re.sub(r"\D", "", digits))


def _js_index(text: str, units: int) -> int:
    """The index in ``text`` after its first ``units`` UTF-16 code units (JavaScript's string length)."""
    if text.isascii():
        return min(units, len(text))
    count = 0
    for index, char in enumerate(text):
        if count >= units:
            return index
        count += 2 if ord(char) > 0xFFFF else 1
    return len(text)


def _uncut(text: str) -> tuple[str, str, bool] | None:
    """(start, end, whether the end begins mid-line) of a text Gemini CLI cut; None: not cut."""
    found = _CUT_ENDS.match(text)
    if found:
        body = text[found.end():]
        split = _js_index(body, _number(found.group(1)))
        omitted = _CUT_OMITTED.match(body, split)
        if omitted:  # the end was cut at a character count, anywhere in a line
            return body[:split], body[omitted.end():], True
        return body, body, False  # the preview masking kept of it: one text, from its start to its end
    found = _CUT_END.match(text)
    if found:
        return "", text[found.end():], False
    if text.startswith(_CUT_LINES):
        at = text.find(_CUT_LINES_BODY)
        if at < 0:
            return None
        body = text[at + len(_CUT_LINES_BODY):]
    elif text.endswith(_CUT_LINES_UNSAVED) and _CUT_LINES_MARK in text:
        body = text[: -len(_CUT_LINES_UNSAVED)]
    else:
        return None
    first, last = body.find(_CUT_LINES_MARK), body.rfind(_CUT_LINES_MARK)
    if first < 0:
        return body, body, False
    return body[:first], body[last + len(_CUT_LINES_MARK):], False


def kept_text(text: str) -> Kept:
    """A recorded result text's start and end, out of the masked preview, the cut and the wrapper."""
    if text.startswith(_MASKED_OPEN) and text.endswith(_MASKED_CLOSE):
        saved = text.rfind(_MASKED_SAVED)
        text = text[len(_MASKED_OPEN): saved if saved >= len(_MASKED_OPEN) else -len(_MASKED_CLOSE)]
    cut = _uncut(text)
    if cut is None:
        if text.startswith(_WRAPPER_OPEN) and text.endswith(_WRAPPER_CLOSE):
            text = text[len(_WRAPPER_OPEN): -len(_WRAPPER_CLOSE)]
        head, tail, mid_line = text, text, False
    else:  # the wrapper was cut with the text: its opening starts the head, its close ends the tail
        head, tail, mid_line = cut
        head = head[len(_WRAPPER_OPEN):] if head.startswith(_WRAPPER_OPEN) else head
        tail = tail[: -len(_WRAPPER_CLOSE)] if tail.endswith(_WRAPPER_CLOSE) else tail
    if len(tail) > EDGE:
        tail, mid_line = tail[-EDGE:], True
    if mid_line:
        tail = tail[tail.find("\n") + 1:] if "\n" in tail else ""
    return Kept(head[:EDGE], tail)
