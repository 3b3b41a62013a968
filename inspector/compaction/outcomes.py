"""How a tool call ended, read the way Gemini CLI wrote it down (for the offline summariser and the
independent quality check).

In order:

1. the status the record kept (``statuses.ToolStatuses``): "error" is a
   failure, "cancelled" a cancellation;
2. the ``error`` field of the result: Gemini CLI writes every failed or
   cancelled call as ``{"error": message}`` (a cancellation starts
   ``[Operation Cancelled]``); a null one is no error;
3. the fields of the result text, where each version of the shell tool puts
   them (``shell_fields``; from 0.27, where the call's record kept its
   display, only after the command's own output, which that display is:
   ``fields_after_display``), its fixed sentences for a cancelled, timed-out
   or backgrounded command, and the fixed success forms of the file, search,
   web, memory and todo tools.

An exit code 1 whose documented meaning is its program's answer (grep's "no
match", diff's "files differ", test's "false") keeps the state "failed" the
fact check reads, with that meaning beside it (``with_exit_meaning``): it is
said so and not listed as something that went wrong.

The text is read through the envelopes Gemini CLI puts around it
(``kept_text``): its ``<untrusted_context>`` wrapper, the preview it keeps
of an output it masked, and the start and end it keeps of an output it cut
to a size limit when recording it.  An outcome is never guessed from words
inside a tool's output: a result with no status, no error field and no form
this module knows is "unknown".
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, replace
from typing import Any

from inspector.compaction.envelopes import EDGE, Kept, kept_text
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



@dataclass(frozen=True)
class Outcome:
    """How one call ended: ``state`` is ok / failed / cancelled / background / unknown."""

    state: str
    detail: str = ""  # "exit code 1", the error's first line, "timed out", ...
    tail: str = ""  # a failed command's last line of output (where it usually says why)
    created: bool | None = None  # write_file / replace: a new file (True) or an existing one (False)
    meaning: str = ""  # what the exit code means for its program where that is no error ("no match")

    @property
    def went_wrong(self) -> bool:
        """Whether a summary states it as something that went wrong (an exit code whose documented
        meaning is an answer, grep's 1 for "no match", is not)."""
        return self.state in NOT_AS_ASKED and not self.meaning

    def text(self) -> str:
        """The outcome in the snapshot's words (error text quoted, so it reads as data)."""
        if self.meaning:
            return f"{self.detail} ({self.meaning})"
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


def result_text(response: object) -> Kept | None:
    """What is read of the ``output`` (else ``content``) string of a function response's body."""
    if isinstance(response, str):
        return kept_text(response)
    if not isinstance(response, dict):
        return None
    for key in ("output", "content"):
        value = response.get(key)
        if isinstance(value, str):
            return kept_text(value)
    return None


def error_field(response: object) -> str | None:
    """The result's ``error`` message; None when it has none (absent, or null)."""
    if not isinstance(response, dict):
        return None
    err = response.get("error")
    if err is None:
        return None
    if isinstance(err, dict):
        message = err.get("message")
        return message if isinstance(message, str) else ""
    return err if isinstance(err, str) else str(err)


_FIELD = re.compile(r"^(Command|Directory|Stdout|Stderr|Output|Error|Exit Code|Signal|Background PIDs|"
                    r"Process Group PGID): ?(.*)$")
# The shell tool's lines after the output (tools/shell.js).  Up to 0.26 (the form that starts
# "Command: ... Directory:") "Error", "Exit Code" and "Signal" are always written, "(none)" when
# empty, then "Background PIDs" and (in all but the first versions) "Process Group PGID".  From 0.27
# (the form that starts "Output:") a line is written only when it has a value, an exit code only when
# it is not 0; "Error" is never among them in a record, since a command that could not run makes the
# whole result ``{"error": message}`` (the tool returns an error, the scheduler records only it).
_EARLIER_LINES = ("Error", "Exit Code", "Signal", "Background PIDs", "Process Group PGID")
_EARLIER_REQUIRED = ("Error", "Exit Code", "Signal")
_LATER_LINES = ("Exit Code", "Signal", "Background PIDs", "Process Group PGID")
_VALUES = {
    "Exit Code": re.compile(r"-?\d+"),
    "Signal": re.compile(r"\d+|SIG[A-Z0-9]+"),
    "Background PIDs": re.compile(r"\d+(?:, \d+)*"),
    "Process Group PGID": re.compile(r"\d+"),
}
_NONE = ("(none)", "")


def _fits(label: str, value: str, earlier: bool) -> bool:
    """Whether ``value`` is what the form writes in the line ``label``."""
    if label == "Error":
        return earlier
    if earlier and value == "(none)":
        return True
    if not earlier and label == "Exit Code" and value == "0":
        return False
    return _VALUES[label].fullmatch(value) is not None


def _trailing(lines: list[str], earlier: bool) -> tuple[dict[str, str], int] | None:
    """The form's lines at the end of ``lines`` and where they begin; None: not where the form puts them.

    They are read from the last line up, each label only before the ones
    already read, stopping at the first line that does not fit.
    """
    labels = list(_EARLIER_LINES if earlier else _LATER_LINES)
    fields: dict[str, str] = {}
    end = len(lines)
    while end > 0 and labels:
        match = _FIELD.match(lines[end - 1])
        value = match.group(2).strip() if match else ""
        if not match or match.group(1) not in labels or not _fits(match.group(1), value, earlier):
            break
        labels = labels[: labels.index(match.group(1))]
        fields[match.group(1)] = value
        end -= 1
    if earlier and not all(label in fields for label in _EARLIER_REQUIRED):
        return None
    return fields, end


def _last_output_line(lines: list[str]) -> str:
    """The output's last non-blank line (where a failure usually says why); "" for none."""
    for line in reversed(lines):
        line = line.strip()
        match = _FIELD.match(line)
        if not line or (match and match.group(1) == "Stderr" and match.group(2).strip() == "(empty)"):
            continue
        if match and match.group(1) in ("Command", "Directory"):
            return ""
        if match and match.group(1) in ("Output", "Stdout", "Stderr"):
            line = match.group(2).strip()
        return "" if line == "(empty)" else line
    return ""


def shell_fields(text: str | Kept) -> dict[str, str]:
    """The labelled fields of a shell result, each read only where its form puts it: the
    ``Command`` and ``Directory`` header, the lines after the output, and ``Output`` (only its
    last non-blank line).  Empty when the text is not in a form of the shell tool.

    The form is told by the text's start; when Gemini CLI kept only the end
    of a long output, by the lines there.  Only those lines are read, so an
    output line that looks like a field (``Error: ...`` printed by the
    command) stays output, except in the one case the form cannot tell
    apart: a 0.27+ output whose own last lines are such lines with a
    valid value (``Exit Code: 1`` printed by ``cat``).
    """
    kept = text if isinstance(text, Kept) else kept_text(text)
    head = kept.head
    fields: dict[str, str] = {}
    earlier: bool | None = None
    if head.startswith("Command: "):  # the command itself may span lines: Directory ends it
        directory = head.find("\nDirectory: ")
        line_end = head.find("\n", directory + 1)
        if directory < 0 or line_end < 0:
            return {}
        fields["Command"] = head[len("Command: "): directory]
        fields["Directory"] = head[directory + len("\nDirectory: "): line_end]
        head, earlier = head[line_end + 1:], True
    if head or earlier:
        match = _FIELD.match(head.split("\n", 1)[0])
        if not (match and match.group(1) in ("Output", "Stdout")):
            return {}
        earlier = bool(earlier)
    lines = kept.tail.rstrip().split("\n")
    if earlier is None:  # only the end was kept: its lines say which form it is, or nothing is read
        found = _trailing(lines, True) or _trailing(lines, False)
        if found is None or not found[0]:
            return {}
    else:
        found = _trailing(lines, earlier)
        if found is None:
            return {}
    trailing, end = found
    fields.update(trailing)
    fields["Output"] = _last_output_line(lines[:end])
    return fields


_SHELL_CANCELLED = "Command was cancelled by user"
_SHELL_TIMEOUT = "Command was automatically cancelled because it exceeded the timeout"
_SHELL_BACKGROUND = ("Command moved to background", "Command is running in background")


_OUTPUT = "Output: "


def _all_fields(lines: list[str]) -> dict[str, str] | None:
    """The 0.27+ form's own lines, when ``lines`` (after any blank ones) are those and nothing else."""
    at = 0
    while at < len(lines) and not lines[at].strip():
        at += 1
    found = _trailing(lines[at:], False)
    if found is None or found[1] != 0:
        return None
    return found[0]


def _same_lines(text_lines_: list[str], display_lines: list[str]) -> bool:
    return all(a.rstrip() == b.rstrip() for a, b in zip(text_lines_, display_lines, strict=True))


def fields_after_display(kept: Kept, display: str) -> dict[str, str] | None:
    """The fields of a 0.27+ shell result read only from what follows the command's own output,
    which ``display`` (the call's recorded display: that output) tells; None where the text is not
    ``"Output: " + display`` and then the tool's own lines (a display that is not the output, a
    text cut where the display's lines cannot be told apart): then it is read as it always was.

    A whole text is matched line for line; of a text Gemini CLI kept only the end of, the
    display's last lines must end the output at exactly one place."""
    if not kept.head.startswith(_OUTPUT) and kept.head:
        return None
    if not display.strip():
        return None  # no output: the text says "(empty)", and its fields are read as they always were
    shown = display.split("\n")
    while len(shown) > 1 and not shown[-1].strip():
        shown.pop()
    last = next((ln.strip() for ln in reversed(shown) if ln.strip()), "")
    whole = kept.head == kept.tail
    lines = kept.tail.rstrip("\n").split("\n")
    if whole:
        lines[0] = lines[0][len(_OUTPUT):]
        if len(lines) < len(shown) or not _same_lines(lines[: len(shown)], shown):
            return None
        fields = _all_fields(lines[len(shown):])
        if fields is None:
            return None
        return {**fields, "Output": last}
    found: dict[str, str] | None = None
    for end in range(len(lines), 0, -1):
        fields = _all_fields(lines[end:])
        if fields is None:
            break
        size = min(end, len(shown))
        before = lines[end - size: end]
        if before and before[0].startswith(_OUTPUT) and end - size == 0:
            before = [before[0][len(_OUTPUT):], *before[1:]]
        if _same_lines(before, shown[len(shown) - size:]):
            if found is not None:
                return None  # the display's end fits more than one place: it does not tell
            found = {**fields, "Output": last}
    return found


def shell_outcome(text: str | Kept, display: str | None = None) -> Outcome:
    """A shell result's outcome, from its fixed sentences or its fields (``shell_fields``);
    ``display``: the text of the display its call recorded, the command's own output from 0.27
    (``fields_after_display``), so a line the command printed is never read as a field."""
    kept = text if isinstance(text, Kept) else kept_text(text)
    if kept.head.startswith(_SHELL_TIMEOUT):
        return Outcome(CANCELLED, "timed out")
    if kept.head.startswith(_SHELL_CANCELLED):
        return Outcome(CANCELLED)
    if kept.head.startswith(_SHELL_BACKGROUND):
        return Outcome(BACKGROUND)
    after = fields_after_display(kept, display) if display is not None else None
    fields = after if after is not None else shell_fields(kept)
    if "Output" not in fields:
        return Outcome(UNKNOWN)
    error = fields.get("Error", "")
    code = fields.get("Exit Code", "")
    signal = fields.get("Signal", "")
    tail = first_line(fields["Output"])
    if error not in _NONE:
        return Outcome(FAILED, first_line(error), tail=tail)
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


# Programs whose documented exit code 1 is an answer, not an error (2 and more are errors): grep and
# ripgrep "no line was selected", diff and cmp "the files differ", test "the expression is false".
_ANSWER_EXITS = {"grep": "no match", "egrep": "no match", "fgrep": "no match", "rg": "no match",
                 "diff": "files differ", "cmp": "files differ", "test": "false", "[": "false", "[[": "false"}
_ENV_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=\S*")
_CONTROL = re.compile(r"&&|\|\||[;\n`]|\$\(|\|&|(?<![<>])&(?!>)")  # not the & of 2>&1 or &>


def exit_meaning(command: str) -> str:
    """What exit code 1 of ``command`` means when that is no error ("no match" for grep), else "".

    Only for a command whose exit code is its program's: one simple command,
    or a pipeline's last (bash's default; not with ``pipefail``); no ``;``,
    ``&&``, ``||``, ``&``, command substitution or second line, whose exit
    code may be another command's."""
    if _CONTROL.search(command) or "pipefail" in command:
        return ""
    words = command.rsplit("|", 1)[-1].split()
    while words and _ENV_ASSIGNMENT.fullmatch(words[0]):
        words = words[1:]
    if words and words[0] in ("command", "exec"):
        words = words[1:]
    if not words:
        return ""
    return _ANSWER_EXITS.get(words[0].rsplit("/", 1)[-1], "")


_TIMEOUT = re.compile(r"(?:\S*/)?timeout(?:\s+-(?:-\w[\w-]*(?:=\S+)?|[ks]\s*\S+|v|\w+))*\s+\d")


def with_exit_meaning(outcome: Outcome, command: str | None) -> Outcome:
    """``outcome`` of ``command`` with what its exit code 1 means, where that is no error; and
    ``timeout``'s own 124 (the time limit stopped the command it ran), where the command is one
    ``timeout`` run (its exit code is then ``timeout``'s).  The 124 stays a failure: only said so."""
    if outcome.state == FAILED and outcome.detail == "exit code 124" and command and not _CONTROL.search(command) \
            and "|" not in command and _TIMEOUT.match(command.strip()):
        return replace(outcome, detail="exit code 124: timeout's own, the time limit stopped the command")
    if outcome.state != FAILED or outcome.detail != "exit code 1" or not command:
        return outcome
    meaning = exit_meaning(command)
    return replace(outcome, meaning=meaning) if meaning else outcome


_SUCCEEDED, _UNREAD = Outcome(OK), Outcome(UNKNOWN)
_READ_FURTHER = frozenset({"write", "edit", "shell"})  # kinds whose text says more than a "success" status


def read_outcome(kind: str, response: object, status: str | None, name: str | None = None,
                 display: str | None = None) -> Outcome:
    """The outcome of one call from its recorded status and its ``functionResponse.response``;
    ``name``: the tool's, where known (another tool that takes a ``command`` is read as a shell, but
    its recorded "success" says how it ended where its text is in no shell form); ``display``: the
    text of the display its record kept (``shell_outcome``)."""
    error = error_field(response)
    if status == "cancelled" or (error is not None and error.startswith("[Operation Cancelled]")):
        return Outcome(CANCELLED)
    if status == "error" or error is not None:
        if not error:  # recorded as failed, with no error message: the output is only that, never the reason
            kept = result_text(response)
            return Outcome(FAILED, tail=_last_output_line(kept.tail.split("\n")) if kept is not None else "")
        return Outcome(FAILED, first_line(error))
    if status == "success" and kind not in _READ_FURTHER:
        return _SUCCEEDED  # nothing in the text can say more
    text = result_text(response)
    created: bool | None = None
    if text is not None and kind in ("write", "edit"):
        created = text.head.startswith(("Successfully created", "Created new file")) or None
        if text.head.startswith(("Successfully overwrote", "Successfully modified")):
            created = False
    if kind == "shell":  # "success" says the tool ran, not how the command ended: only its fields say that
        outcome = shell_outcome(text, display) if text is not None else _UNREAD
        if (outcome.state == UNKNOWN and status == "success" and name is not None
                and name not in SHELL_TOOLS and name.lower() not in SHELL_TOOLS):
            return _SUCCEEDED  # not Gemini CLI's shell: it has no exit code, and it ended without an error
        return outcome
    if status == "success":
        return Outcome(OK, created=created) if created is not None else _SUCCEEDED
    if text is None:
        return _UNREAD
    if kind == "memory":
        return _memory_outcome(text.head)
    if text.head.startswith(_SUCCESS_FORMS.get(kind, ("\0",))):
        return Outcome(OK, created=created)
    return Outcome(UNKNOWN)
