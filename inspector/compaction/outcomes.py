"""How a tool call ended, read the way Gemini CLI wrote it down (for the offline summariser).

In order:

1. the status the record kept (``statuses.ToolStatuses``): "error" is a
   failure, "cancelled" a cancellation;
2. the ``error`` field of the result: Gemini CLI writes every failed or
   cancelled call as ``{"error": message}`` (a cancellation starts
   ``[Operation Cancelled]``);
3. the fields of the result text, as each version of each tool writes them:
   the shell tool's ``Command / Directory / Output / Error / Exit Code /
   Signal / ...`` lines of earlier versions, the ``Output / Error / Exit
   Code`` of 0.61 (``Error: (none)`` and ``Exit Code: 0`` mean no failure),
   its fixed sentences for a cancelled, timed-out or backgrounded command,
   and the fixed success forms of the file, search, web, memory and todo
   tools.

An outcome is never guessed from words inside a tool's output: a result
with no status, no error field and no form this module knows is "unknown".
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from inspector.compaction.snapshot import text_lines

SHELL_TOOLS = frozenset({"run_shell_command", "shell", "run_command", "bash"})
READ_TOOLS = frozenset({"read_file", "read_many_files", "view_file"})
WRITE_TOOLS = frozenset({"write_file", "create_file"})
EDIT_TOOLS = frozenset({"replace", "edit", "edit_file", "smart_edit"})
LIST_TOOLS = frozenset({"list_directory", "ls"})
GLOB_TOOLS = frozenset({"glob"})
SEARCH_TOOLS = frozenset({"search_file_content", "grep", "grep_search", "ripgrep"})
FETCH_TOOLS = frozenset({"web_fetch"})
WEB_SEARCH_TOOLS = frozenset({"google_web_search", "web_search"})
MEMORY_TOOLS = frozenset({"save_memory"})
TODO_TOOLS = frozenset({"write_todos"})

OK, FAILED, CANCELLED, BACKGROUND, UNKNOWN = "ok", "failed", "cancelled", "background", "unknown"
# A command a signal ended, with no error and no other exit code recorded: Gemini CLI says "Command
# terminated by signal: N" and marks no error (``pkill -f`` ends its own shell so, having worked).
TERMINATED = "terminated"
NOT_AS_ASKED = (FAILED, CANCELLED, TERMINATED)  # outcomes a summary states as something that went wrong

_FIELD = re.compile(r"^(Command|Directory|Stdout|Stderr|Output|Error|Exit Code|Signal|Background PIDs|"
                    r"Process Group PGID): ?(.*)$")
_TRAILING = ("Error", "Exit Code", "Signal", "Background PIDs", "Process Group PGID")
_NONE = ("(none)", "")
_WRAPPER_OPEN, _WRAPPER_CLOSE = "<untrusted_context>\n", "\n</untrusted_context>"
# Gemini CLI's masking (toolOutputMaskingService) keeps a preview of an old output: for the shell
# tool its fields whole and the output's first and last lines; for others the text's two ends.
_MASKED_OPEN, _MASKED_CLOSE = "<tool_output_masked>\n", "\n</tool_output_masked>"
_MASKED_SAVED = "\n\nOutput too large. Full output available at: "


@dataclass(frozen=True)
class Outcome:
    """How one call ended: ``state`` is ok / failed / cancelled / background / unknown."""

    state: str
    detail: str = ""  # "exit code 1", the error's first line, "timed out", ...
    tail: str = ""  # a failed command's last line of output (where it usually says why)
    created: bool | None = None  # write_file / replace: a new file (True) or an existing one (False)

    def text(self) -> str:
        """The outcome in the snapshot's words (error text quoted, so it reads as data)."""
        if self.state == OK:
            return "ok"
        if self.state == UNKNOWN:
            return "outcome not recorded"
        if self.state == BACKGROUND:
            return "left running in the background"
        if not self.detail:
            return self.state
        if self.state == TERMINATED:
            return f"terminated by {self.detail}"
        if self.detail.startswith(("exit code", "signal", "timed out")):
            return f"{self.state} ({self.detail})"
        return f'{self.state}: "{self.detail}"'


_KIND_OF = {name: kind for kind, names in (
    ("shell", SHELL_TOOLS), ("read", READ_TOOLS), ("write", WRITE_TOOLS), ("edit", EDIT_TOOLS), ("list", LIST_TOOLS),
    ("glob", GLOB_TOOLS), ("search", SEARCH_TOOLS), ("fetch", FETCH_TOOLS), ("web_search", WEB_SEARCH_TOOLS),
    ("memory", MEMORY_TOOLS), ("todos", TODO_TOOLS)) for name in names}


def tool_kind(name: str, args: dict[str, Any]) -> str:
    """shell, read, write, edit, list, glob, search, fetch, web_search, memory, todos or other."""
    kind = _KIND_OF.get(name) or _KIND_OF.get(name.lower())
    if kind is not None:
        return kind
    if isinstance(args.get("command"), str):
        return "shell"
    return "other"


def first_line(text: str, limit: int = 160) -> str:
    line = next((ln.strip() for ln in text_lines(text[:EDGE]) if ln.strip()), "")
    return line if len(line) <= limit else line[: limit - 1].rstrip() + "…"


EDGE = 4000  # characters read at each end of a result: every form this module reads sits there


def unwrap(text: str) -> str:
    """The text inside Gemini CLI's ``<untrusted_context>`` wrapper (0.61 shell and web results),
    and inside its ``<tool_output_masked>`` marker (the preview of an output it masked).

    A long one is cut to its two ends (with a marker between): nothing here
    reads its middle, and copying it whole would cost time on big sessions.
    """
    if text.startswith(_MASKED_OPEN) and text.endswith(_MASKED_CLOSE):
        saved = text.rfind(_MASKED_SAVED)
        text = text[len(_MASKED_OPEN): saved if saved >= len(_MASKED_OPEN) else -len(_MASKED_CLOSE)]
    if not (text.startswith(_WRAPPER_OPEN) and text.endswith(_WRAPPER_CLOSE)):
        return text
    start, stop = len(_WRAPPER_OPEN), len(text) - len(_WRAPPER_CLOSE)
    if stop - start <= 3 * EDGE:
        return text[start:stop]
    return text[start: start + EDGE] + "\n[…]\n" + text[stop - EDGE: stop]


def result_text(response: Any) -> str | None:
    """The ``output`` (else ``content``) string of a function response's body."""
    if isinstance(response, str):
        return response
    if not isinstance(response, dict):
        return None
    for key in ("output", "content"):
        value = response.get(key)
        if isinstance(value, str):
            return unwrap(value)
    return None


def error_field(response: Any) -> str | None:
    if not isinstance(response, dict) or "error" not in response:
        return None
    err = response["error"]
    if isinstance(err, dict):
        err = err.get("message")
    return err if isinstance(err, str) else str(err)


def shell_fields(text: str, status: str | None = None) -> dict[str, str]:
    """The labelled fields of a shell result: the header fields, the trailing block, and
    ``Output`` (only its last non-blank line, which is where a failure usually says why).

    ``Output`` may span many lines and may itself hold lines that look like
    fields, so the fields after it are read from the end, in the order the
    tool writes them, stopping at the first line that does not fit.  Only
    the first and the last 4,000 characters are looked at, however long the text.
    In the 0.61 form (no ``Command:`` header) Gemini CLI records a call whose
    command could not run with status "error", so under ``status`` "success"
    a last line ``Error: ...`` is the command's own output, not the field.
    """
    head = text[:EDGE]
    fields: dict[str, str] = {}
    if head.startswith("Command: "):  # the command itself may span lines: Directory ends it
        directory = head.find("\nDirectory: ")
        line_end = head.find("\n", directory + 1)
        if directory < 0 or line_end < 0:
            return fields
        fields["Command"] = head[len("Command: "): directory]
        fields["Directory"] = head[directory + len("\nDirectory: "): line_end]
        head = head[line_end + 1:]
    match = _FIELD.match(head.split("\n", 1)[0])
    if not (match and match.group(1) in ("Output", "Stdout")):
        return fields
    tail = text[-EDGE:].split("\n")
    end = len(tail)
    order = [label for label in _TRAILING
             if label != "Error" or "Command" in fields or status != "success"]
    while end > 0 and order:
        match = _FIELD.match(tail[end - 1])
        if not match or match.group(1) not in order:
            break
        order = order[: order.index(match.group(1))]  # earlier labels only from here on
        fields[match.group(1)] = match.group(2).strip()
        end -= 1
    last = next((ln.strip() for ln in reversed(tail[:end]) if ln.strip()), "")
    match = _FIELD.match(last)
    if match and match.group(1) in ("Command", "Directory", "Output", "Stdout"):
        last = match.group(2).strip() if match.group(1) in ("Output", "Stdout") else ""
    fields["Output"] = "" if last == "(empty)" else last
    return fields


_SHELL_CANCELLED = "Command was cancelled by user"
_SHELL_TIMEOUT = "Command was automatically cancelled because it exceeded the timeout"
_SHELL_BACKGROUND = ("Command moved to background", "Command is running in background")


def shell_outcome(text: str, status: str | None = None) -> Outcome:
    """A shell result's outcome, from its fields (``shell_fields``) and the recorded ``status``."""
    if text.startswith(_SHELL_TIMEOUT):
        return Outcome(CANCELLED, "timed out")
    if text.startswith(_SHELL_CANCELLED):
        return Outcome(CANCELLED)
    if text.startswith(_SHELL_BACKGROUND):
        return Outcome(BACKGROUND)
    fields = shell_fields(text, status)
    if "Output" not in fields:
        return Outcome(UNKNOWN)
    error = fields.get("Error", "")
    code = fields.get("Exit Code", "")
    signal = fields.get("Signal", "")
    if error not in _NONE:
        return Outcome(FAILED, first_line(error), tail=first_line(fields.get("Output", "")))
    tail = first_line(fields.get("Output", ""))
    if code not in _NONE and code != "0":
        return Outcome(FAILED, f"exit code {code}", tail=tail)
    if signal not in _NONE and signal != "0":
        return Outcome(TERMINATED, f"signal {signal}", tail=tail)
    return Outcome(OK)


# The fixed forms Gemini CLI's tools write when they succeed (tools/*.js).
_SUCCESS_FORMS: dict[str, tuple[str, ...]] = {
    "write": ("Successfully created and wrote to new file", "Successfully overwrote file", "Successfully wrote"),
    "edit": ("Successfully modified file", "Created new file"),
    "list": ("Directory listing for ", "Directory ", "Listed "),
    "glob": ("Found ", "No files found matching"),
    "search": ("Found ", "No matches found"),
    "web_search": ("Web search results for", "No search results or information found"),
    "todos": ("Successfully updated the todo list", "Successfully cleared the todo list"),
}


def _memory_outcome(text: str) -> Outcome:
    try:
        body = json.loads(text)
    except ValueError:
        return Outcome(OK) if text.startswith("Okay, I've remembered that") else Outcome(UNKNOWN)
    if isinstance(body, dict) and isinstance(body.get("success"), bool):
        return Outcome(OK) if body["success"] else Outcome(FAILED, first_line(str(body.get("error") or "")))
    return Outcome(UNKNOWN)


_SUCCEEDED, _UNREAD = Outcome(OK), Outcome(UNKNOWN)
_READ_FURTHER = frozenset({"write", "edit", "shell"})  # kinds whose text says more than a "success" status


def read_outcome(kind: str, response: Any, status: str | None) -> Outcome:
    """The outcome of one call from its recorded status and its ``functionResponse.response``."""
    error = error_field(response)
    if status == "cancelled" or (error is not None and error.startswith("[Operation Cancelled]")):
        return Outcome(CANCELLED)
    if status == "error" or error is not None:
        return Outcome(FAILED, first_line(error or result_text(response) or ""))
    if status == "success" and kind not in _READ_FURTHER:
        return _SUCCEEDED  # nothing in the text can say more
    text = result_text(response)
    created: bool | None = None
    if text is not None and kind in ("write", "edit"):
        created = text.startswith(("Successfully created", "Created new file")) or None
        if text.startswith(("Successfully overwrote", "Successfully modified")):
            created = False
    if kind == "shell":  # "success" says the tool ran, not how the command ended: only its fields say that
        return shell_outcome(text, status) if text is not None else _UNREAD
    if status == "success":
        return Outcome(OK, created=created) if created is not None else _SUCCEEDED
    if text is None:
        return _UNREAD
    if kind == "memory":
        return _memory_outcome(text)
    if text.startswith(_SUCCESS_FORMS.get(kind, ("\0",))):
        return Outcome(OK, created=created)
    return Outcome(UNKNOWN)
