"""Antigravity steps as Gemini CLI's message records (``session_messages``): what the reader hands the
rest of the project, so that everything that shows a session (the app's table, search, export) shows a
transcript, each step's own words and tool names kept as recorded.

One walk over the steps (``exchanges``) pairs each tool call of a ``PLANNER_RESPONSE`` with the steps after
it that answer it, in order (Antigravity writes one result step per call, right after the call); the fact
check's view of the same steps (``history.checker_history``) walks them the same way.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from inspector.antigravity.transcript import (
    ERROR_MESSAGE,
    MODEL_SOURCE,
    PLANNER_RESPONSE,
    USER_INPUT,
    Step,
)


@dataclass(frozen=True)
class Exchange:
    """One unit of the conversation: a step on its own, or a planner step with its calls' answers."""

    step: Step
    answers: tuple[Step | None, ...] = ()  # per tool call of ``step``: the step that answered it


def exchanges(steps: Sequence[Step]) -> Iterator[Exchange]:
    """The steps grouped: a planner step takes the result steps after it, one per call, in order;
    a SYSTEM error step answers a call still waiting (a call Antigravity could not run)."""
    pending: Step | None = None
    answers: list[Step | None] = []

    def flush() -> Iterator[Exchange]:
        nonlocal pending, answers
        if pending is not None:
            yield Exchange(pending, tuple(answers) + (None,) * (len(pending.tool_calls) - len(answers)))
        pending, answers = None, []

    for step in steps:
        waiting = pending is not None and len(answers) < len(pending.tool_calls)
        if step.kind == PLANNER_RESPONSE:
            yield from flush()
            pending = step
            continue
        if waiting and (step.source == MODEL_SOURCE or step.kind == ERROR_MESSAGE):
            answers.append(step)
            continue
        yield from flush()
        yield Exchange(step)
    yield from flush()


def message_id(step: Step) -> str:
    """The record id a step becomes (its line: step indexes repeat after a restart)."""
    return f"line-{step.line}"


def session_messages(steps: Sequence[Step]) -> tuple[list[dict[str, Any]], list[tuple[int, ...]]]:
    """Gemini CLI message records for ``steps``, and for each record the lines of the steps it holds."""
    messages: list[dict[str, Any]] = []
    lines: list[tuple[int, ...]] = []
    for exchange in exchanges(steps):
        step = exchange.step
        if step.kind != PLANNER_RESPONSE:
            if not step.text:
                continue  # an empty CONVERSATION_HISTORY marker: nothing to show
            kind = "user" if step.source != MODEL_SOURCE or step.kind == USER_INPUT else "gemini"
            messages.append({"id": message_id(step), "type": kind, "timestamp": step.created_at,
                             "content": [{"text": step.text}]})
            lines.append((step.line,))
            continue
        record: dict[str, Any] = {"id": message_id(step), "type": "gemini", "timestamp": step.created_at,
                                  "content": step.content}
        if step.thinking:
            record["thoughts"] = [{"subject": "", "description": step.thinking}]
        calls = []
        for number, (call, answer) in enumerate(zip(step.tool_calls, exchange.answers, strict=True)):
            entry: dict[str, Any] = {"id": f"{message_id(step)}-{number}", "name": call.name, "args": call.args}
            if answer is not None:
                entry["result"] = answer.text or f"({answer.kind.lower()}, no text)"
                entry["status"] = "error" if answer.kind == ERROR_MESSAGE else "success"
            calls.append(entry)
        if calls:
            record["toolCalls"] = calls
        messages.append(record)
        lines.append((step.line, *(a.line for a in exchange.answers if a is not None)))
    return messages, lines
