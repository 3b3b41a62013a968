"""Antigravity steps in the shapes the rest of the project reads.

Two shapes, from one walk over the steps (``exchanges``), which pairs each
tool call of a ``PLANNER_RESPONSE`` with the steps after it that answer it, in
order (Antigravity writes one result step per call, right after the call):

* ``records.session_messages``: Gemini CLI's message records (``user`` / ``gemini``
  with ``toolCalls``), so that everything that shows a session (the app's
  table, search, export) shows a transcript, the step's own words and tool
  names kept as recorded;
* ``checker_history``: the curated history (``Content[]``) and recorded
  statuses the independent fact check (``inspector.quality``) reads.  Here the
  user's words are only what they typed (the ``<USER_REQUEST>``; Antigravity's
  metadata and system messages are not the user's), Antigravity's tools take
  the Gemini CLI names and arguments the checker knows (``view_file`` ->
  ``read_file`` with ``file_path``, ``run_command`` -> ``run_shell_command``
  with ``command``, ...), and a command's outcome is the exit code Antigravity
  recorded (its ``exit_code`` field, else the fixed sentence its tool writes
  at the head of the result: "The command exited with code N.", "The command
  completed successfully.", "The command failed with exit code: N", "Tool is
  running as a background task"), written as the fields of Gemini CLI's shell
  result that the checker reads.  No outcome is guessed from the output.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from inspector.antigravity.records import exchanges, message_id
from inspector.antigravity.transcript import (
    ERROR_MESSAGE,
    PLANNER_RESPONSE,
    RUN_COMMAND,
    USER_INPUT,
    USER_SOURCE,
    Step,
    ToolCall,
)
from inspector.compaction.statuses import ToolStatuses

# -- the fact check's input ------------------------------------------------------------------------

# Antigravity's tool -> (Gemini CLI's name, {its argument -> Gemini CLI's}) for the tools the checker reads.
_TOOLS: dict[str, tuple[str, dict[str, str]]] = {
    "view_file": ("read_file", {"AbsolutePath": "file_path"}),
    "write_to_file": ("write_file", {"TargetFile": "file_path"}),
    "replace_file_content": ("replace", {"TargetFile": "file_path"}),
    "multi_replace_file_content": ("replace", {"TargetFile": "file_path"}),
    "list_dir": ("list_directory", {"DirectoryPath": "dir_path"}),
    "grep_search": ("grep_search", {"SearchPath": "path", "Query": "pattern"}),
    "run_command": ("run_shell_command", {"CommandLine": "command", "Cwd": "dir_path"}),
}
_SHELL = "run_shell_command"
_HEADER = re.compile(r"\A(?:(?:Created|Completed) At:[^\n]*\n)*\s*")
_EXITED = re.compile(r"The command exited with code (-?\d+)\.")
_FAILED = re.compile(r"The command failed with exit code: (-?\d+)")
_SUCCEEDED = "The command completed successfully."
_BACKGROUND = "Tool is running as a background task"
_OUTPUT = re.compile(r"^\s*(?:Output|Stdout):[ \t]*\n?", re.M)


def _checker_call(call: ToolCall) -> tuple[str, dict[str, Any]]:
    known = _TOOLS.get(call.name)
    if known is None:
        return call.name, dict(call.args)
    name, renames = known
    return name, {renames.get(key, key): value for key, value in call.args.items()}


def command_exit(step: Step) -> int | str | None:
    """The exit code Antigravity recorded for a RUN_COMMAND step; "background" for one still running;
    None when it recorded none."""
    if step.exit_code is not None:
        return step.exit_code
    head = _HEADER.sub("", step.content, count=1)[:400]
    if head.startswith(_BACKGROUND) or step.status == "RUNNING":
        return "background"
    if head.startswith(_SUCCEEDED):
        return 0
    found = _EXITED.match(head) or _FAILED.match(head)
    return int(found.group(1)) if found else None


def _shell_result(step: Step) -> str:
    """A RUN_COMMAND step as the fields of Gemini CLI's shell result (what ``outcomes.shell_outcome`` reads)."""
    code = command_exit(step)
    if code == "background":
        return "Command moved to background. " + step.content
    if code is None:
        return step.content  # no recorded exit: its outcome stays unknown
    body = _HEADER.sub("", step.content, count=1)
    found = _OUTPUT.search(body)
    output = "\n".join(line.strip("\t") for line in body[found.end():].split("\n")) if found else ""
    tail = f"\nExit Code: {code}" if code != 0 else ""
    return f"Output: {output.strip() or '(empty)'}{tail}"


@dataclass(frozen=True)
class CheckerHistory:
    contents: list[dict[str, Any]]
    statuses: ToolStatuses
    lines: tuple[int, ...]  # per turn of ``contents``: the file line of the step it came from

    def step_lines(self, turns: Sequence[int]) -> list[int]:
        return sorted({self.lines[t] for t in turns if 0 <= t < len(self.lines)})


def checker_history(steps: Sequence[Step]) -> CheckerHistory:
    """``steps`` as the history and recorded statuses ``inspector.quality.extract`` reads."""
    contents: list[dict[str, Any]] = []
    lines: list[int] = []
    by_part: dict[tuple[int, int], str] = {}
    by_call: dict[tuple[int, str], str] = {}
    for exchange in exchanges(steps):
        step = exchange.step
        if step.kind == USER_INPUT and step.source == USER_SOURCE:
            if step.request:
                contents.append({"role": "user", "parts": [{"text": step.request}]})
                lines.append(step.line)
            continue
        if step.kind != PLANNER_RESPONSE:
            continue  # system text, a checkpoint, a result with no call: not the user's, no call of its own
        parts: list[dict[str, Any]] = []
        if step.thinking:
            parts.append({"text": step.thinking, "thought": True})
        if step.content:
            parts.append({"text": step.content})
        responses: list[dict[str, Any]] = []
        statuses: list[str | None] = []
        for number, (call, answer) in enumerate(zip(step.tool_calls, exchange.answers, strict=True)):
            name, args = _checker_call(call)
            ident = f"{message_id(step)}-{number}"
            parts.append({"functionCall": {"id": ident, "name": name, "args": args}})
            if answer is None:
                continue
            if answer.kind == ERROR_MESSAGE or answer.error:
                response: dict[str, Any] = {"error": _HEADER.sub("", answer.text, count=1)}
                statuses.append("error")
            elif answer.kind == RUN_COMMAND and name == _SHELL:
                response = {"output": _shell_result(answer)}
                statuses.append("success")  # a shell's "success" is the tool running; its exit is in the fields
            else:
                response = {"output": _HEADER.sub("", answer.content, count=1)}
                statuses.append("success" if answer.status == "DONE" else None)
            responses.append({"functionResponse": {"id": ident, "name": name, "response": response}})
        if not parts:
            continue
        contents.append({"role": "model", "parts": parts})
        lines.append(step.line)
        if responses:
            turn = len(contents)
            for part, status in enumerate(statuses):
                if status is not None:
                    by_part[(turn, part)] = status
            contents.append({"role": "user", "parts": responses})
            lines.append(next(a.line for a in exchange.answers if a is not None))
    return CheckerHistory(contents, ToolStatuses(by_part, by_call), tuple(lines))
