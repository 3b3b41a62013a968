"""Per-message figures, computed once while a recording is read.

A 100 MB recording holds ~170,000 turns; keeping every parsed message alive
costs several times the file's size in memory.  So the loader computes, for
each message record as it parses it, the figures every later step needs
(estimate, JSON length, split flags, kind, recorded usage, the sizes of its
tool outputs) with the same functions the rest of the core uses, then keeps
only these figures and the line's place in the file.  Contents are rebuilt
from the line when someone asks for them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, overload

from inspector.jsjson import js_json_len, js_string_json_len, truthy, utf16_len
from inspector.session.history import message_contents
from inspector.tokens import function_response_quarters, media_quarters, text_quarters

USAGE_KEYS = ("input", "output", "cached", "thoughts", "tool", "total")


# Figures are plain tuples (not NamedTuples): marshal carries them between the
# two processes that read a big file, and nothing has to be rebuilt.  Fields:
#
# ResponseFigures, one functionResponse part as the tool-output budget sees it:
R_PART = 0  # its index in the turn's parts
R_HAS_RESPONSE = 1  # the part has a ``response`` (else the budget counts nothing)
R_NAME = 2  # the tool name, or "unknown_tool"
R_TOKENS = 3  # estimate of the text the budget measures
R_LENGTH = 4  # that text's length in UTF-16 units
R_PLAIN = 5  # the part is exactly {functionResponse: {..., response: {output: text}}}
ResponseFigures = tuple[int, bool, str, int, int, bool]

# TurnFigures, one turn:
F_RECORD_ID = 0
F_ROLE = 1
F_IS_TOOL_RESULT = 2
F_QUARTERS = 3  # the estimate in quarter tokens
F_JSON_LEN = 4  # JSON.stringify(content).length
F_CANDIDATE = 5  # a user turn without a function response: the split may start here
F_SAFE_END = 6  # a model turn without a function call: may end a fully summarised history
F_KIND = 7  # turn_kind(content)
F_RESPONSES = 8  # tuple of ResponseFigures
F_USAGE = 9  # the recorded usage (model turns) as PackedUsage, or None
F_CALLS = 10  # (id, name) of each function call, for pairing calls with responses
F_ANSWERS = 11  # (id, name) of each function response
TurnFigures = tuple[Any, ...]


def _key(value: Any) -> tuple[Any, Any]:
    if type(value) is not dict:
        return (None, None)
    name = value.get("name")
    return (value.get("id"), shared(name) if type(name) is str else name)


def _part_label(part: dict[str, Any]) -> str:
    if part.get("thought"):
        return "thought"
    if type(part.get("text")) is str:
        return "text"
    if part.get("functionCall"):
        return "tool call"
    if part.get("functionResponse"):
        return "tool result"
    if "inlineData" in part or "fileData" in part:
        data = part.get("inlineData") or part.get("fileData") or {}
        mime = data.get("mimeType", "") if isinstance(data, dict) else ""
        return "image" if isinstance(mime, str) and mime.startswith("image/") else "file"
    return "other"


def turn_kind(content: dict[str, Any]) -> str:
    """A short label for what a turn holds: text, thought, tool call, ..."""
    seen: list[str] = []
    parts = content.get("parts")
    for part in parts if isinstance(parts, list) else ():
        label = _part_label(part) if type(part) is dict else "other"
        if label not in seen:
            seen.append(label)
    return "+".join(seen) if seen else "empty"


def _plain_response(fr: Any) -> tuple[int, int] | None:
    """(JSON length, quarters) of the part ``{"functionResponse": fr}`` when ``fr`` is
    ``{…, "response": {"output": text}}``.

    The shape every string tool result takes; measured without serialising
    the output twice.  None for any other shape (measured the general way).
    """
    if type(fr) is not dict or not fr:
        return None
    response = fr.get("response")
    if type(response) is not dict or len(response) != 1:
        return None
    output = response.get("output")
    if type(output) is not str:
        return None
    response_json = 11 + js_string_json_len(output)  # {"output":…}
    fr_json = 1 + 2 * len(fr)
    for key, value in fr.items():
        if key == "response":
            fr_json += 10 + response_json  # "response":
        elif type(value) is str:
            fr_json += js_string_json_len(key) + js_string_json_len(value)
        else:
            return None  # nested parts, ids that are numbers, ...
    name = fr.get("name")
    quarters = (utf16_len(name) if type(name) is str else 0) + response_json
    return 21 + fr_json, quarters  # {"functionResponse":…}


def response_text(response: Any) -> str:
    """The text the budget measures: ``output``, else ``content``, else pretty JSON."""
    from inspector.jsjson import js_stringify

    if isinstance(response, str):
        return response
    if isinstance(response, dict):
        for key in ("output", "content"):
            value = response.get(key)
            if isinstance(value, str):
                return value
    return js_stringify(response, indent=2)


def response_figures(parts: list[Any]) -> tuple[ResponseFigures, ...]:
    found: list[ResponseFigures] = []
    for j, part in enumerate(parts):
        if type(part) is not dict:
            continue
        fr = part.get("functionResponse")
        if not isinstance(fr, dict):
            continue
        name = fr.get("name")
        tool = shared(name) if isinstance(name, str) else "unknown_tool"
        if "response" not in fr:
            found.append((j, False, tool, 0, 0, False))
            continue
        response = fr["response"]
        text = response_text(response)
        plain = (
            len(part) == 1 and type(response) is dict and len(response) == 1 and type(response.get("output")) is str
        )
        found.append((j, True, tool, text_quarters(text) // 4, utf16_len(text), plain))
    return tuple(found)


# Usage as kept per turn: the six values when the record has exactly USAGE_KEYS in
# that order (what Gemini CLI writes; a tuple is a third of a dict's size), else a copy.
PackedUsage = tuple[Any, ...] | dict[str, Any] | None


def usage_of(message: dict[str, Any]) -> PackedUsage:
    tokens = message.get("tokens")
    if not isinstance(tokens, dict):
        return None
    if tuple(tokens) == USAGE_KEYS:
        return tuple(tokens.values())
    return {k: tokens[k] for k in USAGE_KEYS if k in tokens}


def usage_dict(packed: PackedUsage) -> dict[str, Any] | None:
    """The usage object as recorded (``PackedUsage`` unpacked)."""
    if type(packed) is tuple:
        return dict(zip(USAGE_KEYS, packed, strict=True))
    return packed  # type: ignore[return-value]


class UsageColumn(Sequence[dict[str, Any] | None]):
    """Every turn's recorded usage, kept packed and handed out as objects."""

    __slots__ = ("_packed",)

    def __init__(self, packed: list[PackedUsage]) -> None:
        self._packed = packed

    def __len__(self) -> int:
        return len(self._packed)

    @overload
    def __getitem__(self, index: int) -> dict[str, Any] | None: ...

    @overload
    def __getitem__(self, index: slice) -> list[dict[str, Any] | None]: ...

    def __getitem__(self, index: int | slice) -> dict[str, Any] | list[dict[str, Any] | None] | None:
        if isinstance(index, slice):
            return [usage_dict(p) for p in self._packed[index]]
        return usage_dict(self._packed[index])

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (list, UsageColumn)):
            return list(self) == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"UsageColumn({list(self)!r})"

    def packed(self) -> list[PackedUsage]:
        """Every turn's usage as kept (see ``usage_dict``), for a fast pass over all of them."""
        return self._packed

    def input_tokens(self, index: int) -> int | None:
        """The ``input`` figure of turn ``index``, when it is a number."""
        packed = self._packed[index]
        value = packed[0] if type(packed) is tuple else (packed.get("input") if type(packed) is dict else None)
        return int(value) if isinstance(value, (int, float)) else None


_SHARED: dict[str, str] = {}


def shared(text: str) -> str:
    """One object for each distinct role and tool name (they repeat on every turn)."""
    return _SHARED.setdefault(text, text)


ContentMeasure = Callable[[dict[str, Any], str | None, bool, PackedUsage], TurnFigures | None]
MessageMeasure = Callable[[dict[str, Any]], tuple[TurnFigures, ...] | None]


def _c_measure() -> tuple[ContentMeasure | None, MessageMeasure | None]:
    """``_measure.measure`` and ``measure_message`` (C, built at install), or None where they could not be built."""
    try:
        from inspector.session._measure import bind, measure, measure_message
    except ImportError:
        return None, None
    bind(_SHARED)
    return measure, measure_message


_C_MEASURE, _C_MEASURE_MESSAGE = _c_measure()


def content_figures(
    content: dict[str, Any], record_id: str | None = None, is_tool_result: bool = False,
    usage: PackedUsage = None,
) -> TurnFigures:
    """Every figure of one Content (see ``measured_content``).

    The common shapes are measured by ``_measure.c``, which returns the same
    tuple or None for a shape it leaves to the Python definition.
    """
    if _C_MEASURE is not None:
        found = _C_MEASURE(content, record_id, is_tool_result, usage)
        if found is not None:
            return found
    return measured_content(content, record_id, is_tool_result, usage)


def measured_content(
    content: dict[str, Any], record_id: str | None = None, is_tool_result: bool = False,
    usage: PackedUsage = None,
) -> TurnFigures:
    """Every figure of one Content, in one pass over its parts: the definition.

    The estimate is ``tokens.parts_quarters`` and the JSON length
    ``jsjson.js_json_len``; a part's JSON length is measured once and serves
    both (the estimate of a part that is neither text, tool result nor media
    is its JSON length).
    """
    parts = content.get("parts")
    if not isinstance(parts, list):
        parts = []
    role = content.get("role")
    quarters = 0
    parts_json = 1 + len(parts) if parts else 2  # brackets and commas
    has_response = has_call = False
    calls: list[tuple[Any, Any]] = []
    answers: list[tuple[Any, Any]] = []
    labels: list[str] = []  # turn_kind, built in the same pass
    for part in parts:
        if type(part) is not dict:
            size = js_json_len(part)
            quarters += size
            parts_json += size
            label = "other"
        else:
            get = part.get
            text = get("text")
            response = get("functionResponse")
            call = get("functionCall")
            if type(text) is str:
                quarters += text_quarters(text)
                if len(part) == 1:  # {"text":…}
                    parts_json += 9 + js_string_json_len(text)
                    label = "text"
                elif len(part) == 2 and get("thought") is True and next(iter(part)) == "text":
                    parts_json += 24 + js_string_json_len(text)  # {"text":…,"thought":true}
                    label = "thought"
                else:
                    parts_json += js_json_len(part)
                    label = _part_label(part)
            elif response is not None and len(part) == 1 and (plain := _plain_response(response)) is not None:
                part_json, part_quarters = plain
                parts_json += part_json
                quarters += part_quarters
                label = "tool result"
            else:
                size = js_json_len(part)
                parts_json += size
                if response is not None and truthy(response):
                    quarters += function_response_quarters(response, 0)
                else:
                    media = media_quarters(part)
                    quarters += size if media is None else media
                label = _part_label(part)
            if response is not None and truthy(response):
                has_response = True
                answers.append(_key(response))
            if call is not None and truthy(call):
                has_call = True
                calls.append(_key(call))
        if label not in labels:
            labels.append(label)
    if type(role) is str and len(content) == 2 and next(iter(content)) == "role" and "parts" in content \
            and isinstance(content["parts"], list):
        json_len = 18 + js_string_json_len(role) + parts_json  # {"role":…,"parts":[…]}
    else:
        json_len = js_json_len(content)
    return (
        record_id,
        shared(role) if type(role) is str else (str(role) if role is not None else ""),
        is_tool_result,
        quarters,
        json_len,
        role == "user" and not has_response,
        role == "model" and not has_call,
        "+".join(labels) if labels else "empty",
        response_figures(parts) if has_response else (),
        usage,
        tuple(calls),
        tuple(answers),
    )


def message_figures(message: dict[str, Any]) -> tuple[TurnFigures, ...]:
    """The figures of every turn one message becomes (see ``measured_message``).

    ``_measure.c`` measures the messages Gemini CLI writes without building
    their turns; it returns None for a shape it leaves to the Python definition.
    """
    if _C_MEASURE_MESSAGE is not None:
        found = _C_MEASURE_MESSAGE(message)
        if found is not None:
            return found
    return measured_message(message)


def measured_message(message: dict[str, Any]) -> tuple[TurnFigures, ...]:
    """The figures of every turn one message becomes (usage on its model turn): the definition."""
    built = message_contents(message)
    if not built:
        return ()
    ident = message.get("id")
    usage = usage_of(message) if message.get("type") == "gemini" else None
    return tuple(
        content_figures(content, ident, is_result, None if is_result else usage) for content, is_result in built
    )
