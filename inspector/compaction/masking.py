"""Tool-output masking as Gemini CLI 0.61 runs it before every turn.

``ToolOutputMaskingService.mask`` (``context/toolOutputMaskingService.js``)
walks the history newest to oldest, skipping the latest turn (by default),
a few exempt tools and outputs already masked.  The newest
``protectionThresholdTokens`` of ``functionResponse`` parts are protected; the
part that crosses that line and every older one are *prunable*.  Only when
the prunable parts add up to ``minPrunableThresholdTokens`` are they masked:
each full output is saved under the project's ``tool-outputs/`` folder and the
part's response becomes ``{"output": "<tool_output_masked>…"}`` with a
preview.  A mask is kept only where it saves tokens.

This module *plans* that, in memory: which parts the next turn would mask and
the tokens it frees, plus the outputs already masked and where their full text
was saved.  Nothing here writes to disk.

The reference names each saved file ``<tool>_<call id>_<random>.txt``; the
random tail's length changes the masked part's estimate by a fraction of a
token.  The plan assumes a tail of ``RANDOM_TAIL`` characters, the most common
length ``Math.random().toString(36).substring(7)`` gives.
"""

from __future__ import annotations

import math
import re
import stat
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, overload

from inspector.jsjson import js_string_json_len, js_stringify, js_to_string, js_trim, truthy, utf16_len
from inspector.session.history import message_contents
from inspector.session.records import peek
from inspector.tokens import content_parts, estimate_tokens

if TYPE_CHECKING:
    from inspector.session import Session, Turn

DEFAULT_PROTECTION_THRESHOLD = 50_000
DEFAULT_MIN_PRUNABLE_THRESHOLD = 30_000
DEFAULT_PROTECT_LATEST_TURN = True
MASKING_TAG = "tool_output_masked"
TOOL_OUTPUTS_DIR = "tool-outputs"
SHELL_TOOL = "run_shell_command"
EXEMPT_TOOLS = frozenset({"activate_skill", "ask_user", "enter_plan_mode", "exit_plan_mode"})
RANDOM_TAIL = "xxxxxx"  # stands for the reference's random file-name tail (same length)
NOW_MS = "1" * 13  # stands for Date.now() where a response has no id (13 digits until 2286)

_UNSAFE_FILENAME = re.compile(r"[^a-zA-Z0-9_-]")
# ``^`` with the m flag in JavaScript: the start, or after any line terminator.
_SHELL_SECTION = re.compile(
    "(?:^|(?<=[\n\r\u2028\u2029]))(Output|Error|Exit Code|Signal|Background PIDs|Process Group PGID): "
)
_SAVED_AT = re.compile(r"Output too large\. Full output available at: ([^\n]*)\n</" + MASKING_TAG + ">")


@dataclass(frozen=True)
class MaskingSettings:
    """``contextManagement.tools.outputMasking``, with Gemini CLI's defaults."""

    protection_threshold_tokens: float = DEFAULT_PROTECTION_THRESHOLD
    min_prunable_threshold_tokens: float = DEFAULT_MIN_PRUNABLE_THRESHOLD
    protect_latest_turn: bool = DEFAULT_PROTECT_LATEST_TURN
    source: str = "default"  # "default" or the settings file(s) a value came from

    def to_json(self) -> dict[str, Any]:
        return {
            "protection_threshold_tokens": self.protection_threshold_tokens,
            "min_prunable_threshold_tokens": self.min_prunable_threshold_tokens,
            "protect_latest_turn": self.protect_latest_turn,
            "source": self.source,
        }


@dataclass(frozen=True)
class MaskedPart:
    """One tool output the next turn would mask."""

    turn: int
    part: int
    tool: str
    tokens: int  # the part's estimate now
    new_tokens: int  # the estimate of the masked part
    output_file: str  # where the reference would save the full output (its random tail stands in)
    snippet: str = field(repr=False, default="")  # the masked response's ``output``

    @property
    def saved(self) -> int:
        return self.tokens - self.new_tokens


@dataclass(frozen=True)
class MaskedMarker:
    """A tool output already masked: a ``<tool_output_masked>`` marker in the history."""

    turn: int
    part: int
    tool: str
    saved_path: str | None  # the file the marker names, as written (None if it names none)


@dataclass(frozen=True)
class MaskingPlan:
    """What masking would do on the next turn, and what it did before."""

    settings: MaskingSettings
    parts: tuple[MaskedPart, ...] = ()
    prunable_tokens: int = 0  # what the scan found past the protection window
    markers: tuple[MaskedMarker, ...] = ()
    failure: str | None = None  # the reference would throw (and mask nothing): why
    _by_turn: dict[int, list[MaskedPart]] = field(default_factory=dict, repr=False, compare=False)

    def __post_init__(self) -> None:
        for item in self.parts:
            self._by_turn.setdefault(item.turn, []).append(item)

    @property
    def masked_count(self) -> int:
        return len(self.parts)

    @property
    def tokens_saved(self) -> int:
        return sum(p.saved for p in self.parts)

    def parts_of(self, turn: int) -> list[MaskedPart]:
        """The parts of ``turn`` the next turn would mask."""
        return self._by_turn.get(turn, [])

    def markers_of(self, turn: int) -> list[MaskedMarker]:
        return [m for m in self.markers if m.turn == turn]

    def to_json(self) -> dict[str, Any]:
        return {
            "masked_count": self.masked_count,
            "tokens_saved": self.tokens_saved,
            "parts": [[p.turn, p.part] for p in self.parts],
            "prunable_tokens": self.prunable_tokens,
            "already_masked": [[m.turn, m.part] for m in self.markers],
            "failure": self.failure,
            "settings": self.settings.to_json(),
        }


def sanitize_filename_part(text: str) -> str:
    """``sanitizeFilenamePart``: every UTF-16 unit outside ``[a-zA-Z0-9_-]`` becomes ``_``."""
    return _UNSAFE_FILENAME.sub(lambda m: "__" if ord(m.group()) > 0xFFFF else "_", text)


def outputs_folder(project_temp_dir: str, session_id: str | None) -> str:
    """``<project temp>/tool-outputs[/session-<id>]``, where masked outputs are saved."""
    folder = f"{project_temp_dir.rstrip('/')}/{TOOL_OUTPUTS_DIR}"
    return f"{folder}/session-{sanitize_filename_part(session_id)}" if session_id else folder


def _contains_tag(value: Any) -> bool:
    """Whether ``JSON.stringify(value, null, 2)`` contains ``<tool_output_masked``.

    The tag holds no character JSON escapes, so it is in the text exactly when
    it is inside one of the value's strings (a key or a value).
    """
    needle = "<" + MASKING_TAG
    if isinstance(value, str):
        return needle in value
    if isinstance(value, dict):
        return any(needle in k or _contains_tag(v) for k, v in value.items())
    if isinstance(value, list):
        return any(_contains_tag(v) for v in value)
    return False


def _units(text: str) -> bytes:
    return text.encode("utf-16-le", "surrogatepass")


def _head_tail(content: str) -> str:
    """The general preview: the first and last 250 UTF-16 units of long content."""
    if utf16_len(content) <= 500:
        return content
    units = _units(content)
    head = units[:500].decode("utf-16-le", "surrogatepass")
    tail = units[-500:].decode("utf-16-le", "surrogatepass")
    return f"{head}\n... [TRUNCATED] ...\n{tail}"


def _simple_preview(content: str) -> str:
    lines = content.split("\n")
    if len(lines) <= 20:
        return content
    omitted = len(lines) - 20
    return "\n".join(lines[:10]) + f"\n\n... [{omitted} lines omitted] ...\n\n" + "\n".join(lines[-10:])


def _shell_preview(response: Any) -> str:
    """``formatShellPreview``: the shell tool's sections, its output cut to head and tail."""
    fields = response if isinstance(response, dict) else {}
    output = fields.get("output")
    content = output if truthy(output) else fields.get("stdout")
    if not truthy(content):
        content = ""
    if not isinstance(content, str):
        return js_stringify(content) if isinstance(content, (dict, list)) else js_to_string(content)
    pieces = _SHELL_SECTION.split(content)
    if len(pieces) < 3:
        return _simple_preview(content)
    shown: list[str] = []
    if js_trim(pieces[0]):
        shown.append(_simple_preview(js_trim(pieces[0])))
    for i in range(1, len(pieces), 2):
        name = pieces[i]
        section = js_trim(pieces[i + 1]) if i + 1 < len(pieces) else ""
        shown.append(f"Output: {_simple_preview(section)}" if name == "Output" else f"{name}: {section}")
    preview = "\n".join(shown)
    exit_code = fields.get("exitCode")
    if exit_code is None:
        exit_code = fields.get("exit_code")
    zero = type(exit_code) in (int, float) and exit_code == 0
    if exit_code is not None and not zero and f"Exit Code: {js_to_string(exit_code)}" not in content:
        preview += f"\n[Exit Code: {js_to_string(exit_code)}]"
    error = fields.get("error")
    if truthy(error) and f"Error: {js_to_string(error)}" not in content:
        preview += f"\n[Error: {js_to_string(error)}]"
    return preview


def masked_snippet(tool: str, response: Any, content: str, output_file: str) -> str:
    """The text the masked part's response holds (``formatMaskedSnippet``)."""
    preview = _shell_preview(response if truthy(response) else {}) if tool == SHELL_TOOL else _head_tail(content)
    return (f"<{MASKING_TAG}>\n{preview}\n\nOutput too large. Full output available at: "
            f"{output_file}\n</{MASKING_TAG}>")


class _Throws(Exception):
    """The reference would throw here (sanitizeFilenamePart of a value that is not a string)."""


def _file_name(name: Any, call_id: Any, tail: str, now_ms: str) -> str:
    tool = name if truthy(name) else "unknown_tool"
    call = call_id if truthy(call_id) else now_ms
    if not isinstance(tool, str) or not isinstance(call, str):
        raise _Throws(f"TypeError: a tool name or call id that is not a string ({js_to_string(tool)!r})")
    return f"{sanitize_filename_part(tool).lower()}_{sanitize_filename_part(call).lower()}_{tail}.txt"


def _part_tokens(part: dict[str, Any], fr: dict[str, Any]) -> int:
    """``estimateTokenCountSync([part])``, measured without serialising the common shape
    ``{"functionResponse": {"id", "name", "response": {"output": text}}}``."""
    response = fr.get("response")
    if len(part) == 1 and "parts" not in fr and type(response) is dict and len(response) == 1:
        output = response.get("output")
        if type(output) is str:
            name = fr.get("name")
            return ((utf16_len(name) if isinstance(name, str) else 0) + 11 + js_string_json_len(output)) // 4
    return estimate_tokens([part])


_WRAPPER = utf16_len(f"<{MASKING_TAG}>\n\n\nOutput too large. Full output available at: \n</{MASKING_TAG}>")


def _least_masked_tokens(name: Any, output_file: str) -> int:
    """A floor under the masked part's estimate: its name, ``{"output":""}`` and the
    marker's fixed text and file name, with an empty preview."""
    quarters = (utf16_len(name) if isinstance(name, str) else 0) + 12 + _WRAPPER + utf16_len(output_file)
    return quarters // 4


def _marker(i: int, j: int, fr: dict[str, Any]) -> MaskedMarker:
    response = fr.get("response")
    text = response.get("output") if isinstance(response, dict) else response
    hits = _SAVED_AT.findall(text) if isinstance(text, str) else []
    name = fr.get("name")
    return MaskedMarker(i, j, name if isinstance(name, str) else "unknown_tool", hits[-1] if hits else None)


def find_markers(contents: Sequence[dict[str, Any]]) -> tuple[MaskedMarker, ...]:
    """Every tool output already masked, with the file its marker names."""
    found: list[MaskedMarker] = []
    for i, content in enumerate(contents):
        for j, part in enumerate(content_parts(content)):
            fr = part.get("functionResponse") if isinstance(part, dict) else None
            if isinstance(fr, dict) and _contains_tag(fr.get("response")):
                found.append(_marker(i, j, fr))
    return tuple(found)


def plan_masking(
    contents: Sequence[dict[str, Any]],
    settings: MaskingSettings | None = None,
    *,
    folder: str = TOOL_OUTPUTS_DIR,
    random_tail: str = RANDOM_TAIL,
    now_ms: str = NOW_MS,
) -> MaskingPlan:
    """What ``ToolOutputMaskingService.mask`` would do to ``contents`` (the history
    Gemini CLI holds before the next turn).  ``folder`` is where outputs are saved
    (see ``outputs_folder``).  Each content is read once, newest first (and again
    only for a part that may be masked), so ``contents`` may build them on demand."""
    settings = settings or MaskingSettings()
    cumulative = 0
    boundary = False
    prunable_tokens = 0
    prunable: list[tuple[int, int, int, Any, Any]] = []  # (turn, part, tokens, name, id), newest first
    markers: list[MaskedMarker] = []  # newest first, reversed at the end
    failure: str | None = None
    start = len(contents) - 2 if settings.protect_latest_turn else len(contents) - 1
    for i in range(len(contents) - 1, -1, -1):
        parts = content_parts(contents[i])
        scanned = i <= start and failure is None
        for j in range(len(parts) - 1, -1, -1):
            part = parts[j]
            if part is None and scanned:
                failure = "TypeError: a part that is null"  # the reference throws here and masks nothing
                scanned = False
            fr = part.get("functionResponse") if isinstance(part, dict) else None
            if not truthy(fr) or not isinstance(fr, dict):
                continue  # a truthy non-object has no name or response
            response = fr.get("response")
            if _contains_tag(response):
                markers.append(_marker(i, j, fr))
                continue
            name = fr.get("name")
            if not scanned or (isinstance(name, str) and name in EXEMPT_TOOLS) or not truthy(response):
                continue
            tokens = _part_tokens(part, fr)
            if not boundary:
                cumulative += tokens
                if cumulative > settings.protection_threshold_tokens:
                    boundary = True
                    prunable_tokens += tokens
                    prunable.append((i, j, tokens, name, fr.get("id")))
            else:
                prunable_tokens += tokens
                prunable.append((i, j, tokens, name, fr.get("id")))
    found = tuple(reversed(markers))
    if failure is not None:
        return MaskingPlan(settings, markers=found, failure=failure)
    if prunable_tokens < settings.min_prunable_threshold_tokens:
        return MaskingPlan(settings, prunable_tokens=prunable_tokens, markers=found)
    masked: list[MaskedPart] = []
    for i, j, tokens, name, call_id in prunable:
        try:
            output_file = f"{folder}/{_file_name(name, call_id, random_tail, now_ms)}"
        except _Throws as error:
            return MaskingPlan(settings, prunable_tokens=prunable_tokens, markers=found, failure=str(error))
        if _least_masked_tokens(name, output_file) >= tokens:
            continue  # the marker alone is as big as the output: no saving (skips most small outputs)
        part = content_parts(contents[i])[j]
        fr = part["functionResponse"]
        tool = name if truthy(name) else "unknown_tool"
        response = fr["response"]
        content = js_stringify(response, indent=2)
        snippet = masked_snippet(tool if isinstance(tool, str) else "", response, content, output_file)
        new_part = {**part, "functionResponse": {**fr, "response": {"output": snippet}}}
        new_tokens = estimate_tokens([new_part])
        if tokens - new_tokens > 0:
            masked.append(MaskedPart(i, j, tool if isinstance(tool, str) else "unknown_tool", tokens, new_tokens,
                                     output_file, snippet))
    return MaskingPlan(settings, parts=tuple(masked), prunable_tokens=prunable_tokens, markers=found)


_SETTING_KEYS = (
    ("protectionThresholdTokens", "protection_threshold_tokens"),
    ("minPrunableThresholdTokens", "min_prunable_threshold_tokens"),
    ("protectLatestTurn", "protect_latest_turn"),
)


def _valid(field_name: str, value: Any) -> bool:
    if field_name == "protect_latest_turn":
        return isinstance(value, bool)
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def masking_settings(project_dir: Path | None = None) -> MaskingSettings:
    """``contextManagement.tools.outputMasking`` from the project's and the user's
    settings (the project's value wins, key by key, as Gemini CLI merges them)."""
    from inspector.settings import settings_layers

    values: dict[str, Any] = {}
    sources: list[str] = []
    for path, settings in settings_layers(project_dir):
        node: Any = settings
        for key in ("contextManagement", "tools", "outputMasking"):
            node = node.get(key) if isinstance(node, dict) else None
        if not isinstance(node, dict):
            continue
        for key, field_name in _SETTING_KEYS:
            value = node.get(key)
            if field_name not in values and _valid(field_name, value):
                values[field_name] = value
                if str(path) not in sources:
                    sources.append(str(path))
    return MaskingSettings(
        protection_threshold_tokens=values.get("protection_threshold_tokens", DEFAULT_PROTECTION_THRESHOLD),
        min_prunable_threshold_tokens=values.get("min_prunable_threshold_tokens", DEFAULT_MIN_PRUNABLE_THRESHOLD),
        protect_latest_turn=values.get("protect_latest_turn", DEFAULT_PROTECT_LATEST_TURN),
        source=", ".join(sources) or "default",
    )


def session_masking(
    contents: Sequence[dict[str, Any]], project_temp_dir: Path, session_id: str | None,
    settings: MaskingSettings | None = None,
) -> MaskingPlan:
    """The plan for a session's history, its outputs saved where Gemini CLI would put them."""
    return plan_masking(contents, settings, folder=outputs_folder(str(project_temp_dir), session_id))


class TurnContents(Sequence[dict[str, Any]]):
    """A session's turn contents for one pass, built on demand and not kept.

    A big recording's turns are built from their message lines when read and
    then kept (``Turn.content``); a plan over 170,000 turns would keep them all.
    This view builds each one through the loader's own ``message_contents``
    and drops it, and gives an empty content for a turn the loader's figures
    show holds no function response and no part that is not an object.
    """

    _EMPTY: dict[str, Any] = {"parts": []}  # noqa: RUF012 - read only

    def __init__(self, session: Session, turns: Sequence[Turn]) -> None:
        self._messages = session.messages
        self._turns = turns
        index = session.turn_index
        self._holds: list[bool] | None = None
        if index is not None and session.contents is None:
            self._holds = [bool(responses) or "other" in kind.split("+")
                           for responses, kind in zip(index.responses, index.kinds, strict=True)]
            if len(self._holds) != len(turns):
                self._holds = None

    def __len__(self) -> int:
        return len(self._turns)

    @overload
    def __getitem__(self, index: int) -> dict[str, Any]: ...

    @overload
    def __getitem__(self, index: slice) -> list[dict[str, Any]]: ...

    def __getitem__(self, index: int | slice) -> dict[str, Any] | list[dict[str, Any]]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        if self._holds is None:
            return self._turns[index].content
        if not self._holds[index]:
            return self._EMPTY
        turn = self._turns[index]
        assert turn.message_index is not None
        return message_contents(peek(self._messages, turn.message_index))[1 if turn.is_tool_result else 0][0]


def masking_of(session: Session, turns: Sequence[Turn], project_dir: Path | None = None) -> MaskingPlan:
    """What masking does to a loaded session's history next turn, with the settings
    Gemini CLI would read: the one function both the CLI and the app call."""
    from inspector.analysis import project_temp_dir

    return session_masking(TurnContents(session, turns), project_temp_dir(session.path), session.session_id,
                           masking_settings(project_dir))


SAVED_SHOWN_BYTES = 1 << 20  # the most of a saved output read for showing


@dataclass(frozen=True)
class SavedOutput:
    """The full text behind a ``<tool_output_masked>`` marker, or why it cannot be shown."""

    path: str | None  # the file read, or the one the marker names
    text: str | None  # None: gone or unreadable (``note`` says which)
    size: int = 0  # the file's size in bytes
    note: str = ""  # one plain sentence for a person


def read_saved_output(marker: MaskedMarker, session_path: Path, session_id: str | None) -> SavedOutput:
    """Read the file a marker names; where it has moved with the project's temp
    folder, look for it by name in this session's ``tool-outputs`` folder."""
    from inspector.analysis import project_temp_dir

    if marker.saved_path is None:
        return SavedOutput(None, None, note="The marker does not name a file holding the full output.")
    name = marker.saved_path.replace("\\", "/").rsplit("/", 1)[-1]
    local = Path(outputs_folder(str(project_temp_dir(session_path)), session_id)) / name
    problems: list[str] = []
    for candidate in dict.fromkeys([Path(marker.saved_path), local]):
        try:
            info = candidate.stat()
        except FileNotFoundError:
            continue
        except OSError as error:
            problems.append(f"{candidate} cannot be read ({error.strerror or error}).")
            continue
        if not stat.S_ISREG(info.st_mode):
            problems.append(f"{candidate} is not a regular file.")
            continue
        try:
            with candidate.open("rb") as handle:
                data = handle.read(SAVED_SHOWN_BYTES)
        except OSError as error:
            problems.append(f"{candidate} cannot be read ({error.strerror or error}).")
            continue
        text = data.decode("utf-8", "replace")
        note = "" if info.st_size <= SAVED_SHOWN_BYTES else (
            f"The first {SAVED_SHOWN_BYTES:,} of {info.st_size:,} bytes are shown.")
        return SavedOutput(str(candidate), text, info.st_size, note)
    if problems:
        return SavedOutput(marker.saved_path, None, note=" ".join(problems))
    return SavedOutput(marker.saved_path, None, note=f"The full output was saved to {marker.saved_path}; "
                       "that file is gone.")
