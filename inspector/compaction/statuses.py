"""The status Gemini CLI recorded for each tool call, carried beside the history.

A session record's ``toolCalls[].status`` ("success", "error", "cancelled")
says how a call ended, but the curated history (Content[]) that summarisers
read does not hold it.  ``tool_statuses`` reads it from the records once and
keys it by where the call's result sits in the history: the turn index and
the part index of each part the result became (REFERENCE.md section 2: a
string result is one ``functionResponse`` part, an array result is spliced in
part by part, any other value is one part).

The map is plain recorded data, with no reading of result text: the offline
summariser and the independent quality check both take it as input.  A
result recorded apart from its call (in a user message of its own) takes
the status its call's record kept (``ToolStatuses.result_status``).
Checkpoint files (``/chat save``) hold no records, so their map is empty and
readers fall back on the result text alone.

Beside each status it keeps the text of the display the call's record kept
(``resultDisplay``: a string, or the terminal's lines of an interactive
shell), where one was recorded: from Gemini CLI 0.27 the shell tool's
result text is ``"Output: " + output`` and then its own fields, and the
display is the command's own output, so it tells where the output ends
(``outcomes.shell_outcome``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

from inspector.jsjson import truthy

if TYPE_CHECKING:
    from inspector.session.history import Turn
    from inspector.session.loader import Session

STATUSES = ("success", "error", "cancelled")


@dataclass(frozen=True)
class ToolStatuses:
    """(turn index, part index) of a tool-result part -> the status its call recorded; and
    (turn index, call id) of each call in a model turn -> its status, which is all there is
    to say of a call recorded without a result (one cancelled before it ran)."""

    by_part: Mapping[tuple[int, int], str] = field(default_factory=dict)
    by_call: Mapping[tuple[int, str], str] = field(default_factory=dict)
    displays: Mapping[tuple[int, int], str] = field(default_factory=dict)  # (turn, part) -> its display's text
    workspace: str | None = None  # the one workspace directory the recorded <session_context> names

    def display(self, turn: int, part: int) -> str | None:
        """The text of the display the result at (``turn``, ``part``) recorded; None: none recorded."""
        return self.displays.get((turn, part))

    def status(self, turn: int, part: int) -> str | None:
        return self.by_part.get((turn, part))

    def call_status(self, turn: int, ident: str) -> str | None:
        return self.by_call.get((turn, ident))

    def result_status(self, turn: int, part: int, call_turn: int, ident: object) -> str | None:
        """The status of the result at (``turn``, ``part``), which answers the call ``ident`` of model
        turn ``call_turn``: its own record's, else (a result recorded apart from its call, in a user
        message of its own) the status the call's record kept, which no result text can overrule."""
        own = self.by_part.get((turn, part))
        if own is not None or not isinstance(ident, str) or not ident:
            return own
        return self.by_call.get((call_turn, ident))

    def __len__(self) -> int:
        return len(self.by_part)

    def remapped(self, origins: Sequence[int | None]) -> ToolStatuses:
        """The statuses of another history whose turn ``i`` is turn ``origins[i]`` of this one (None: none)."""
        return ToolStatuses(_moved(self.by_part, origins), _moved(self.by_call, origins),
                            _moved(self.displays, origins), self.workspace)


K = TypeVar("K")


def _moved(statuses: Mapping[tuple[int, K], str], origins: Sequence[int | None]) -> dict[tuple[int, K], str]:
    """``statuses`` keyed by (turn, part or call id), each turn moved to where ``origins`` puts it."""
    if not statuses:
        return {}
    by_turn: dict[int, list[tuple[K, str]]] = {}
    for (turn, key), status in statuses.items():
        by_turn.setdefault(turn, []).append((key, status))
    return {(new, key): status for new, old in enumerate(origins) if old is not None
            for key, status in by_turn.get(old, ())}


NO_STATUSES = ToolStatuses()


def _result_width(result: Any) -> int:
    """How many history parts one call's result becomes (0: none, it is left out)."""
    if not truthy(result):
        return 0
    if isinstance(result, list):
        return len(result)
    return 1


def _per_result_part(calls: Any, value_of: Callable[[dict[str, Any]], str | None]) -> list[str | None]:
    """``value_of(call)`` for each part a message's tool results become, in order (a call whose
    result is a list of parts counts once per part)."""
    out: list[str | None] = []
    if not isinstance(calls, list):
        return out
    for call in calls:
        if isinstance(call, dict):
            out.extend([value_of(call)] * _result_width(call.get("result")))
    return out


def _status(call: dict[str, Any]) -> str | None:
    status = call.get("status")
    return status if isinstance(status, str) else None


def call_statuses(calls: Any) -> list[str | None]:
    """The status of each part a message's tool results become, in order."""
    return _per_result_part(calls, _status)


def display_text(display: Any) -> str | None:
    """The text of a recorded ``resultDisplay``: a string as it is; the terminal's lines an
    interactive shell recorded (a list of lines, each a list of runs with a ``text``) each without
    the spaces that pad it to the terminal's width, without the blank rows after the last line
    written; None for any other display (a diff, a list of todos) or none."""
    if isinstance(display, str):
        return display
    if not isinstance(display, list) or not display:
        return None
    lines: list[str] = []
    for line in display:
        if not isinstance(line, list):
            return None
        texts: list[str] = []
        for run in line:
            text = run.get("text") if isinstance(run, dict) else None
            if not isinstance(text, str):
                return None
            texts.append(text)
        lines.append("".join(texts).rstrip())
    while lines and not lines[-1]:
        lines.pop()
    return "\n".join(lines)


def _shell_call(call: Mapping[str, Any]) -> bool:
    """A call whose result may be in a form of the shell tool (one that takes a ``command``)."""
    args = call.get("args")
    return isinstance(args, dict) and isinstance(args.get("command"), str)


# A line the shell tool writes after the output (or one the reading skips over at its end).
_FIELD_LIKE = re.compile(r"(?:Exit Code|Signal|Background PIDs|Process Group PGID|Error|Output|Stdout|Stderr):")


def telling(display: str) -> bool:
    """Whether a shell display can tell more than its result text: only an output whose own last
    line reads like one of the tool's lines can be taken for them (any other output ends where
    the reading of the fields stops), so only such a display is kept, and a big recording's
    outputs are not held twice."""
    for line in reversed(display.split("\n")):
        if line.strip():
            return _FIELD_LIKE.match(line.strip()) is not None
    return False


def call_displays(calls: Any) -> list[str | None]:
    """The display text of each part a message's tool results become, in order (shell calls only,
    and only a display that can tell something: ``telling``)."""
    return _per_result_part(calls, _telling_display)


def _telling_display(call: dict[str, Any]) -> str | None:
    text = display_text(call.get("resultDisplay")) if _shell_call(call) else None
    return text if text is not None and telling(text) else None


def note_statuses(record: Mapping[str, Any], turn: int, is_tool_result: bool,
                  by_part: dict[tuple[int, int], str], by_call: dict[tuple[int, str], str],
                  displays: dict[tuple[int, int], str] | None = None) -> None:
    """Add what a message record says of the calls in its turn ``turn``: the status of each part of
    its tool-result turn (and, into ``displays``, its display's text), or of each call (by id) of
    its model turn."""
    calls = record.get("toolCalls")
    if is_tool_result:
        for part, status in enumerate(call_statuses(calls)):
            if status is not None:
                by_part[(turn, part)] = status
        if displays is not None:
            for part, text in enumerate(call_displays(calls)):
                if text is not None:
                    displays[(turn, part)] = text
        return
    if not isinstance(calls, list):
        return
    for call in calls:
        if isinstance(call, dict):
            ident, status = call.get("id"), call.get("status")
            if isinstance(ident, str) and ident and isinstance(status, str):
                by_call[(turn, ident)] = status


CONTEXT_MESSAGES = 4  # the first records, where Gemini CLI records its <session_context>
_WORKSPACES = re.compile(r"^- \*\*Workspace Directories:\*\*\n((?:  - [^\n]+\n?)+)", re.M)


def workspace_of(text: str) -> str | None:
    """The workspace directory a ``<session_context>`` text names, where it names exactly one (the
    folder Gemini CLI's tools and shell resolve a relative path against)."""
    if not text.startswith("<session_context>"):
        return None
    found = _WORKSPACES.search(text[:20_000])
    if found is None:
        return None
    folders = [line[4:].strip() for line in found.group(1).split("\n") if line.startswith("  - ")]
    if len(folders) != 1 or not folders[0].startswith("/"):
        return None
    return folders[0].rstrip("/") or "/"


def session_workspace(session: Session) -> str | None:
    """The workspace the recording's ``<session_context>`` message names (None: none, or several)."""
    messages = session.messages
    for index in range(min(len(messages), CONTEXT_MESSAGES)):
        record = messages[index]
        content = record.get("content") if isinstance(record, dict) else None
        parts = content if isinstance(content, list) else [{"text": content}]
        for part in parts:
            text = part.get("text") if isinstance(part, dict) else None
            if isinstance(text, str) and text.startswith("<session_context>"):
                return workspace_of(text)
    return None


def tool_statuses(session: Session, turns: Sequence[Turn]) -> ToolStatuses:
    """The recorded status of every tool call and result in ``turns`` (the session's history)."""
    if session.contents is not None:
        return NO_STATUSES
    by_part: dict[tuple[int, int], str] = {}
    by_call: dict[tuple[int, str], str] = {}
    displays: dict[tuple[int, int], str] = {}
    messages = session.messages
    for turn in turns:
        if turn.message_index is not None:
            note_statuses(messages[turn.message_index], turn.index, turn.is_tool_result, by_part, by_call, displays)
    return ToolStatuses(by_part, by_call, displays, session_workspace(session))
