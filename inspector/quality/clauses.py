"""A snapshot read as the fact check reads it: line by line, each line clause by clause (``; `` outside
backticks and quotes), with what each clause says happened (outcomes, operations) apart from the data it
quotes (backticked spans: commands, paths).  ``grade`` matches the clauses with the ground truth.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from inspector.quality.ground import squash


def _alternatives(classes: Sequence[tuple[str, str]]) -> re.Pattern[str]:
    """One pattern whose named groups are the classes: a text is scanned once for all of them."""
    return re.compile("|".join(f"(?P<{name}>{body})" for name, body in classes), re.I)


_OUTCOMES = _alternatives((
    ("ok", r"\b(?:ok|okay|succeed(?:ed|s)?|success(?:ful(?:ly)?)?|pass(?:ed|es|ing)?|worked|completed|"
           r"exit(?:ed)?(?: with)?(?: code| status)? 0)\b"),
    ("failed", r"\b(?:fail(?:ed|s|ing|ure)?|errors?|errored|crash(?:ed|es)?|non-?zero|"
               r"exit(?:ed)?(?: with)?(?: code| status)? [1-9]\d*)\b"),
    ("terminated", r"\b(?:terminated|signal(?:led|ed)?(?: \w+)?)\b"),
    ("cancelled", r"\b(?:cancell?ed|aborted|timed out|time-?out|interrupted|killed)\b"),
    ("background", r"\bbackground\b"),
))
_OPS = _alternatives((
    ("looked", r"\b(?:read|reads|reading|viewed|inspected|opened|examined|looked at|listed|listing|searched|"
               r"grepped|globbed|read_file|read_many_files|list_directory|glob|grep|grep_search|"
               r"search_file_content)\b"),
    ("changed", r"\b(?:created|creates|wrote|written|writes|overwrote|overwritten|saved|new file|edited|edits|"
                r"modified|modifies|updated|changed|patched|replaced|refactored|rewrote|write_file|replace|edit)\b"),
    ("deleted", r"\b(?:deleted|deletes|removed|removes)\b"),
))
FAMILY = {"read": "looked", "list": "looked", "search": "looked", "write": "changed", "edit": "changed"}
# A Markdown code span: a run of backticks to the next run of as many (a command holding a backtick
# is written in two, `` echo `date` ``); the spaces that part the text from its fence are not its text.
_CODE = r"(`+)(?:[^\n]*?(?<!`)\1(?!`))"
_SPANS = re.compile(_CODE + r"|\"[^\"\n]*\"")
PATHISH = re.compile(r"^[\w.~-]*(?:/[\w.@+-]+)+/?$|^[\w@+-]+\.[A-Za-z0-9]{1,6}$")


@dataclass(slots=True)
class Clause:
    section: str
    line: str  # the whole line
    text: str  # this clause, as written
    flat: str  # lower-case, spaces squashed, backticks dropped: for finding commands and paths
    outcomes: frozenset[str]  # what it says happened to a command
    ops: frozenset[str]  # what it says happened to a path
    spans: tuple[str, ...]  # its backticked spans


_SEPARATOR = re.compile(_CODE + r'|`[^`]*|"[^"]*"?|; ')  # a span (to its end, or the line's) or a clause separator
_TICKED = re.compile(_CODE)
_TOOL_NAME = re.compile(r"[a-z_]+")
_NOT_RECORDED = re.compile(r"\bnot recorded\b", re.I)


def _code_text(span: str) -> str:
    """The text of a code span, without its fence (and the space either side a longer fence takes)."""
    inner = span.strip("`")
    fence = len(span) - len(span.lstrip("`"))
    return inner[1:-1] if fence > 1 and len(inner) >= 2 and inner[0] == inner[-1] == " " else inner


def _split_outside_spans(line: str) -> list[str]:
    """The clauses of a line: split at ``; `` outside backticked and double-quoted spans."""
    if "; " not in line:
        return [line]
    pieces, start = [], 0
    for match in _SEPARATOR.finditer(line):
        if match.group() == "; ":
            pieces.append(line[start:match.start()])
            start = match.end()
    pieces.append(line[start:])
    return [p for p in pieces if p.strip()]


def _classes(pattern: re.Pattern[str], text: str) -> set[str]:
    return {m.lastgroup for m in pattern.finditer(text) if m.lastgroup}


def snapshot_lines(text: str) -> list[tuple[str, str]]:
    """(section, line) of every non-blank line of a snapshot (section "" outside any)."""
    out: list[tuple[str, str]] = []
    body = text[text.find("<state_snapshot>"):] if "<state_snapshot>" in text else text
    body = re.sub(r"<!--(?:(?!</?[A-Za-z_][\w.-]*\s*>).)*?-->", "", body, flags=re.S)  # none over a tag
    section = ""
    for raw in body.split("\n"):
        line = raw.strip()
        tag = re.fullmatch(r"<(/?)([A-Za-z_][\w.-]*)\s*>(.*?)(?:</\2\s*>)?", line) if line[:1] == "<" else None
        if tag:
            if tag.group(1):
                section = ""
                continue
            section = tag.group(2) if tag.group(2) != "state_snapshot" else ""
            line = tag.group(3).strip()
            if line.endswith(f"</{section}>"):
                line = line[: -len(f"</{section}>")].strip()
        line = line.lstrip("-*•").strip()
        if line and line.lower() not in ("none", "(none)"):
            out.append((section, line))
    return out


def clauses(text: str, lines: Sequence[tuple[str, str]] | None = None) -> list[Clause]:
    """Every clause of a snapshot (``lines``: its ``snapshot_lines``, when read already)."""
    out = []
    said: dict[str, tuple[frozenset[str], frozenset[str]]] = {}  # the words outside spans -> outcomes, ops
    for section, line in snapshot_lines(text) if lines is None else lines:
        plain_line = _SPANS.sub(" ", line)
        head = plain_line.split(":", 1)[0] if ":" in plain_line[:48] else ""
        for piece in _split_outside_spans(line):
            plain = _SPANS.sub(" ", piece) + " " + head
            ticks = tuple(_code_text(m.group()) for m in _TICKED.finditer(piece))
            tools = " ".join(t for t in ticks if _TOOL_NAME.fullmatch(t))  # a tool's name says what it did
            key = f"{plain}\n{tools}"
            known = said.get(key)
            if known is None:
                ops = _classes(_OPS, plain) | _classes(_OPS, tools) if tools else _classes(_OPS, plain)
                known = said[key] = (frozenset(_outcomes(plain)), frozenset(ops))
            out.append(Clause(section, line, piece, squash(piece.replace("`", "")), known[0], known[1], ticks))
    return out


def _outcomes(text: str) -> set[str]:
    found = _classes(_OUTCOMES, text)
    if _NOT_RECORDED.search(text):
        found.discard("ok")
    return found
