"""Reading an Antigravity transcript: one step a line.

Antigravity (the ``agy`` CLI and the desktop app) keeps a readable log of
each conversation at ``<root>/brain/<id>/.system_generated/logs/
transcript_full.jsonl`` (and a shorter ``transcript.jsonl``).  Every line is
one step: ``step_index``, ``source`` (USER_EXPLICIT, MODEL, SYSTEM), ``type``
(USER_INPUT, PLANNER_RESPONSE, VIEW_FILE, RUN_COMMAND, CHECKPOINT, ...),
``status``, ``created_at``, and ``content`` / ``thinking`` / ``tool_calls`` /
``exit_code`` / ``error`` where present.  A line that does not parse, or is no
step, is named by its line number and skipped.

Antigravity records no token usage here, so each step's size is the estimate
Gemini CLI itself uses (``inspector.tokens``: a quarter token per ASCII
character, 1.5 per other, JSON length / 4 for a call's arguments), over the
step's text, thinking, error and tool calls.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from inspector.session.errors import LoadWarning
from inspector.session.records import loads_line
from inspector.tokens import estimate_tokens

STEP_KEYS = ("step_index", "source", "type")
CHECKPOINT = "CHECKPOINT"
USER_INPUT = "USER_INPUT"
PLANNER_RESPONSE = "PLANNER_RESPONSE"
RUN_COMMAND = "RUN_COMMAND"
ERROR_MESSAGE = "ERROR_MESSAGE"
USER_SOURCE = "USER_EXPLICIT"
MODEL_SOURCE = "MODEL"
SYSTEM_SOURCE = "SYSTEM"

_CHECKPOINT_HEAD = re.compile(r"\A\s*\{\{\s*CHECKPOINT\s+(\d+)\s*\}\}")
_REQUEST = re.compile(r"<USER_REQUEST>\s*(.*?)\s*(?:</USER_REQUEST>|\Z)", re.S)
PROBE_LINES = 20  # lines read from the start of a file to tell a transcript from a Gemini CLI session


@dataclass(frozen=True)
class ToolCall:
    name: str
    args: dict[str, Any]


@dataclass(frozen=True)
class Step:
    """One line of a transcript."""

    line: int  # 1-based line of the file
    step_index: int | None
    source: str
    kind: str  # the step's ``type``
    status: str
    created_at: str
    content: str
    thinking: str
    tool_calls: tuple[ToolCall, ...]
    exit_code: int | None
    error: str
    tokens: int  # the chars-based estimate (module docstring)

    @property
    def checkpoint_number(self) -> int | None:
        """N of a CHECKPOINT step whose content begins ``{{ CHECKPOINT N }}``; else None."""
        if self.kind != CHECKPOINT:
            return None
        found = _CHECKPOINT_HEAD.match(self.content)
        return int(found.group(1)) if found else None

    @property
    def request(self) -> str:
        """What the user asked: the ``<USER_REQUEST>`` of a user step (its whole text if it has none)."""
        found = _REQUEST.search(self.content)
        return found.group(1) if found else self.content.strip()

    @property
    def text(self) -> str:
        """The step's words: its content, else its error."""
        return self.content or self.error

    def to_json(self) -> dict[str, Any]:
        return {
            "line": self.line, "step_index": self.step_index, "source": self.source, "type": self.kind,
            "status": self.status, "created_at": self.created_at, "tokens": self.tokens,
            "tool_calls": [call.name for call in self.tool_calls], "exit_code": self.exit_code,
            "chars": len(self.content) + len(self.thinking) + len(self.error),
        }


@dataclass(frozen=True)
class Transcript:
    path: Path
    steps: tuple[Step, ...]
    warnings: tuple[LoadWarning, ...]
    line_count: int

    @property
    def total_tokens(self) -> int:
        return sum(step.tokens for step in self.steps)


def _step_object(line: bytes) -> dict[str, Any] | None:
    try:
        value = loads_line(line)
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


def is_step(value: object) -> bool:
    return isinstance(value, dict) and all(key in value for key in STEP_KEYS) and "sessionId" not in value


def looks_like_transcript(data: bytes) -> bool:
    """Whether the first readable line among the first lines of ``data`` (a file's head) is an
    Antigravity step (a committed transcript may begin with lines that do not parse).  A line the
    head cuts short is judged by its start: Antigravity writes ``step_index`` first."""
    start = 0
    for _ in range(PROBE_LINES):
        if start >= len(data):
            break
        end = data.find(b"\n", start)
        if end == -1:
            return _STEP_START.match(data, start) is not None
        line = data[start:end]
        start = end + 1
        if not line.strip():
            continue
        value = _step_object(line)
        if value is not None:
            return is_step(value)
    return False


_STEP_START = re.compile(rb'\s*\{\s*"step_index"\s*:\s*-?\d+\s*,\s*"source"\s*:')


def _text(value: object) -> str:
    return value if isinstance(value, str) else ""


def _calls(value: object) -> tuple[ToolCall, ...]:
    if not isinstance(value, list):
        return ()
    out = []
    for call in value:
        if isinstance(call, dict):
            args = call.get("args")
            out.append(ToolCall(_text(call.get("name")) or "?", args if isinstance(args, dict) else {}))
    return tuple(out)


def _estimate(content: str, thinking: str, error: str, calls: Sequence[ToolCall]) -> int:
    parts: list[dict[str, Any]] = [{"text": t} for t in (content, error) if t]
    if thinking:
        parts.append({"text": thinking, "thought": True})
    parts.extend({"functionCall": {"name": c.name, "args": c.args}} for c in calls)
    return estimate_tokens(parts)


def step_of(value: dict[str, Any], line: int) -> Step:
    index = value.get("step_index")
    code = value.get("exit_code")
    content, thinking, error = _text(value.get("content")), _text(value.get("thinking")), _text(value.get("error"))
    calls = _calls(value.get("tool_calls"))
    return Step(
        line=line,
        step_index=index if type(index) is int else None,
        source=_text(value.get("source")),
        kind=_text(value.get("type")) or "?",
        status=_text(value.get("status")),
        created_at=_text(value.get("created_at")),
        content=content,
        thinking=thinking,
        tool_calls=calls,
        exit_code=code if type(code) is int else None,
        error=error,
        tokens=_estimate(content, thinking, error, calls),
    )


def _problem(line: bytes) -> str:
    try:
        orjson.loads(line)
    except orjson.JSONDecodeError as exc:
        return f"not JSON ({exc.msg}); skipped"
    return "not a step (no step_index, source and type); skipped"


def parse_transcript(path: Path, data: bytes) -> Transcript:
    """Every step of ``data`` in file order; each line that is no step becomes a warning."""
    steps: list[Step] = []
    warnings: list[LoadWarning] = []
    lines = data.split(b"\n")
    if lines and not lines[-1]:
        lines.pop()
    for number, raw in enumerate(lines, 1):
        if not raw.strip():
            continue
        value = _step_object(raw)
        if value is None or not is_step(value):
            warnings.append(LoadWarning(number, _problem(raw) if value is None else
                                        "not a step (no step_index, source and type); skipped"))
            continue
        steps.append(step_of(value, number))
    return Transcript(path, tuple(steps), tuple(warnings), len(lines))
