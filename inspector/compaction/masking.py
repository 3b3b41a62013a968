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
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from inspector.compaction.budget import TOOL_OUTPUTS_DIR
from inspector.jsjson import js_stringify, js_to_string, js_trim, truthy, utf16_len
from inspector.session.figures import (
    MASKED_OUTPUT,
    MASKING_TAG,
    NULL_PART,
    PLAIN_OUTPUT,
    OutputFigures,
    content_figures,
)
from inspector.session.history import message_contents
from inspector.session.records import peek
from inspector.session.turn_index import TurnIndex
from inspector.tokens import content_parts, estimate_tokens

if TYPE_CHECKING:
    from inspector.session import Session, Turn

DEFAULT_PROTECTION_THRESHOLD = 50_000
DEFAULT_MIN_PRUNABLE_THRESHOLD = 30_000
DEFAULT_PROTECT_LATEST_TURN = True
SHELL_TOOL = "run_shell_command"
EXEMPT_TOOLS = frozenset({"activate_skill", "ask_user", "enter_plan_mode", "exit_plan_mode"})
RANDOM_TAIL = "xxxxxx"  # stands for the reference's random file-name tail (same length)
NOW_MS = "1" * 13  # stands for Date.now() where a response has no id (13 digits until 2286)

_UNSAFE_FILENAME = re.compile(r"[^a-zA-Z0-9_-]")
# A section of the shell tool's output starts a line (``^`` with the m flag in JavaScript: the start,
# or after any line terminator).  Found as a line terminator and the name, which the regex engine
# seeks by its first character, several times faster than a lookbehind tried at every position.
_SECTION_NAMES = "(Output|Error|Exit Code|Signal|Background PIDs|Process Group PGID): "
_SECTION_AT_START = re.compile(_SECTION_NAMES)
_SECTION_AFTER_BREAK = re.compile("[\n\r\u2028\u2029]" + _SECTION_NAMES)


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


def _units(text: str) -> bytes:
    return text.encode("utf-16-le", "surrogatepass")


_WHOLE_PREVIEW_UNITS = 500  # content up to this many UTF-16 units is its own preview


def _head_tail(content: str) -> str:
    """The general preview: the first and last 250 UTF-16 units of long content."""
    if utf16_len(content) <= _WHOLE_PREVIEW_UNITS:
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


def shell_sections(content: str) -> list[str]:
    """``content.split(/^(Output|Error|...): /m)``: the text before the first section, then each
    section's name and its text."""
    pieces: list[str] = []
    pos = 0
    first = _SECTION_AT_START.match(content)
    if first is not None:
        pieces += ["", first.group(1)]
        pos = first.end()
    for found in _SECTION_AFTER_BREAK.finditer(content, pos):
        pieces += [content[pos:found.start() + 1], found.group(1)]  # the line terminator ends the text before
        pos = found.end()
    pieces.append(content[pos:])
    return pieces


def _shell_preview(response: Any) -> str:
    """``formatShellPreview``: the shell tool's sections, its output cut to head and tail."""
    fields = response if isinstance(response, dict) else {}
    output = fields.get("output")
    content = output if truthy(output) else fields.get("stdout")
    if not truthy(content):
        content = ""
    if not isinstance(content, str):
        return js_stringify(content) if isinstance(content, (dict, list)) else js_to_string(content)
    pieces = shell_sections(content)
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


def _output_file(folder: str, tool: str, call: str, tail: str) -> str:
    """Where the reference saves an output: ``<folder>/<tool>_<call id>_<random>.txt``."""
    return f"{folder}/{sanitize_filename_part(tool).lower()}_{sanitize_filename_part(call).lower()}_{tail}.txt"


# The masked part's fixed text: the marker's wrapper, ``{"output":""}``, and the file name's separators.
_WRAPPER = utf16_len(f"<{MASKING_TAG}>\n\n\nOutput too large. Full output available at: \n</{MASKING_TAG}>")
_FIXED_QUARTERS = 12 + _WRAPPER + len("/__.txt")


def plan_outputs(
    outputs: Sequence[tuple[OutputFigures, ...]],
    part_of: Callable[[int, int], dict[str, Any]],
    settings: MaskingSettings | None = None,
    *,
    folder: str = TOOL_OUTPUTS_DIR,
    random_tail: str = RANDOM_TAIL,
    now_ms: str = NOW_MS,
) -> MaskingPlan:
    """What ``ToolOutputMaskingService.mask`` would do to a history whose tool outputs are
    ``outputs`` (``TurnIndex.outputs``: each turn's, as the reader measured them).

    The walk needs only these figures.  ``part_of(turn, part)`` gives a part
    itself, asked only for an output that may save tokens once masked (its
    marker's preview is made from the output): most outputs are too small
    for that, and are never read again."""
    settings = settings or MaskingSettings()
    protection = settings.protection_threshold_tokens
    cumulative = 0
    boundary = False
    prunable_tokens = 0
    # (turn, part, tokens, tool, call id) of each prunable output whose marker may be smaller, newest first
    candidates: list[tuple[int, int, int, str, str]] = []
    throws: str | None = None  # the first prunable output whose file the reference cannot name (it throws)
    markers: list[MaskedMarker] = []  # newest first, reversed at the end
    failure: str | None = None
    fixed = _FIXED_QUARTERS + utf16_len(folder) + utf16_len(random_tail)
    lengths: dict[str, int] = {}  # utf16_len of each tool name (they repeat)
    start = len(outputs) - 2 if settings.protect_latest_turn else len(outputs) - 1
    i = len(outputs)
    for entries in reversed(outputs):  # (a packed column read backwards a chunk at a time, not turn by turn)
        i -= 1
        if not entries:
            continue
        scanned = i <= start and failure is None
        for k in range(len(entries) - 1, -1, -1):
            j, state, quarters, name, call_id, saved = entries[k]
            if state == NULL_PART:
                if scanned:
                    failure = "TypeError: a part that is null"  # the reference throws here and masks nothing
                    scanned = False
                continue
            if state == MASKED_OUTPUT:
                markers.append(MaskedMarker(i, j, name if isinstance(name, str) else "unknown_tool", saved))
                continue
            if not scanned or (isinstance(name, str) and name in EXEMPT_TOOLS):
                continue
            tokens = quarters // 4
            if not boundary:
                cumulative += tokens
                if cumulative <= protection:
                    continue
                boundary = True
            prunable_tokens += tokens
            if 4 * tokens <= fixed and type(name) is str and type(call_id) is str:
                continue  # can neither throw nor shrink: its marker is at least the fixed text (most outputs)
            tool = name if truthy(name) else "unknown_tool"
            call = call_id if truthy(call_id) else now_ms
            if not isinstance(tool, str) or not isinstance(call, str):
                if throws is None:
                    throws = f"TypeError: a tool name or call id that is not a string ({js_to_string(tool)!r})"
                continue
            tool_units = lengths.get(tool)
            if tool_units is None:
                tool_units = lengths[tool] = utf16_len(tool)
            # A floor under the masked part's estimate: its name, the fixed text, the file name (a
            # sanitized name is as long as the name) and the least its preview can be.  Skips most
            # small outputs.
            name_units = tool_units if name is tool else 0
            floor = name_units + fixed + tool_units + utf16_len(call)
            if state == PLAIN_OUTPUT and tool != SHELL_TOOL:
                # The preview (_head_tail) of an {"output": text} response: its pretty JSON, at least
                # as long as its JSON (the estimate less the name), kept whole up to the limit, else
                # cut to 521 units (more than the limit).
                floor += min(quarters - name_units, _WHOLE_PREVIEW_UNITS + 1)
            if floor // 4 < tokens:
                candidates.append((i, j, tokens, tool, call))
    found = tuple(reversed(markers))
    if failure is not None:
        return MaskingPlan(settings, markers=found, failure=failure)
    if prunable_tokens < settings.min_prunable_threshold_tokens:
        return MaskingPlan(settings, prunable_tokens=prunable_tokens, markers=found)
    if throws is not None:
        return MaskingPlan(settings, prunable_tokens=prunable_tokens, markers=found, failure=throws)
    masked: list[MaskedPart] = []
    for i, j, tokens, tool, call in candidates:
        output_file = _output_file(folder, tool, call, random_tail)
        part = part_of(i, j)
        fr = part["functionResponse"]
        response = fr["response"]
        snippet = masked_snippet(tool, response, js_stringify(response, indent=2), output_file)
        new_tokens = estimate_tokens([{**part, "functionResponse": {**fr, "response": {"output": snippet}}}])
        if tokens - new_tokens > 0:
            masked.append(MaskedPart(i, j, tool, tokens, new_tokens, output_file, snippet))
    return MaskingPlan(settings, parts=tuple(masked), prunable_tokens=prunable_tokens, markers=found)


def _outputs_of(contents: Sequence[dict[str, Any]]) -> Sequence[tuple[OutputFigures, ...]]:
    """The tool outputs of ``contents``, measured as the reader measures a recording's."""
    return TurnIndex.from_rows([content_figures(content) for content in contents]).outputs


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
    (see ``outputs_folder``)."""
    return plan_outputs(_outputs_of(contents), lambda i, j: content_parts(contents[i])[j], settings,
                        folder=folder, random_tail=random_tail, now_ms=now_ms)


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


def session_masking(session: Session, turns: Sequence[Turn], settings: MaskingSettings | None = None,
                    ) -> MaskingPlan:
    """The plan for a loaded session's history (``turns``), its outputs saved where Gemini CLI
    would put them.  A recording's figures come from the reader (``TurnIndex.outputs``), and only
    the outputs the plan may mask are read again from their lines."""
    from inspector.analysis import project_temp_dir

    folder = outputs_folder(str(project_temp_dir(session.path)), session.session_id)
    index = session.turn_index
    if index is None or session.contents is not None or len(index) != len(turns):
        return plan_masking([t.content for t in turns], settings, folder=folder)
    messages = session.messages
    read: dict[int, list[Any]] = {}  # the parts of the turn read last (a turn's outputs come together)

    def part_of(i: int, j: int) -> dict[str, Any]:
        parts = read.get(i)
        if parts is None:
            turn = turns[i]
            assert turn.message_index is not None
            built = message_contents(peek(messages, turn.message_index))[1 if turn.is_tool_result else 0][0]
            read.clear()
            parts = read[i] = content_parts(built)
        part: dict[str, Any] = parts[j]
        return part

    return plan_outputs(index.outputs, part_of, settings, folder=folder)


def masking_of(session: Session, turns: Sequence[Turn], project_dir: Path | None = None) -> MaskingPlan:
    """What masking does to a loaded session's history next turn, with the settings
    Gemini CLI would read: the one function both the CLI and the app call."""
    return session_masking(session, turns, masking_settings(project_dir))
