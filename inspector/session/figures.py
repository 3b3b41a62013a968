"""Per-turn figures, computed once while a recording is read.

A 100 MB recording holds ~170,000 turns; keeping every parsed message alive costs several times the
file's size.  So the reader computes, for each message record as it parses it, the figures every later
step needs (estimate, JSON length, split flags, kind, usage, tool outputs' sizes, where its estimate goes)
with the rest of the core's functions, and keeps only these and the line's place (rebuilt on demand).

The turns are built by ``history.message_contents`` (the only definition of how a message becomes turns)
and measured here, a string at a time (``jsjson.string_measures``).  A turn's figures are a plain tuple, a
*row* (marshal carries rows between the reader's processes), read as columns (``turn_index.TurnIndex``;
``session.rows`` makes a message's rows and the columns).
"""

from __future__ import annotations

import re
import sys
from collections.abc import Sequence
from typing import Any, Final, overload

from inspector.jsjson import js_json_len, js_string_json_len, js_stringify, string_measures, truthy, utf16_len
from inspector.session.history import is_valid_model_content, strip_thoughts
from inspector.session.spread import turn_spread
from inspector.session.usage_store import PackedUsage, PackedUsages
from inspector.tokens import function_response_quarters, media_quarters, quarters_of

USAGE_KEYS = ("input", "output", "cached", "thoughts", "tool", "total")


# ResponseFigures, one functionResponse part as the tool-output budget sees it:
# (its index in the turn's parts, whether it has a ``response`` (else the budget
# counts nothing), the tool name or "unknown_tool", the estimate of the text the
# budget measures, that text's length in UTF-16 units, whether the part is exactly
# {functionResponse: {..., response: {output: text}}}).
ResponseFigures = tuple[int, bool, str, int, int, bool]

# OutputFigures, one part of a turn as tool-output masking sees it (compaction/masking.py): a
# functionResponse part whose response is truthy, or a part that is null (the reference throws on it).
# (its index in the turn's parts, its state (below), its estimate in quarter tokens
# (``estimateTokenCountSync([part])`` times 4), the response's ``name`` and ``id`` as recorded,
# and for an output already masked the file its marker names, else None).
OutputFigures = tuple[int, int, int, Any, Any, "str | None"]
OUTPUT = 0  # a tool output masking may count
PLAIN_OUTPUT = 1  # the same, exactly {"functionResponse": {..., "response": {"output": text}}} (no nested parts)
MASKED_OUTPUT = 2  # already masked: its response holds a <tool_output_masked> marker
NULL_PART = 3  # a part that is null

MASKING_TAG = "tool_output_masked"
_TAG_OPEN = "<" + MASKING_TAG
_SAVED_AT = re.compile(r"Output too large\. Full output available at: ([^\n]*)\n</" + MASKING_TAG + ">")

# One turn's row: ``turn_index.ROW_FIELDS`` in their order (a plain tuple: marshal carries it between processes).
TurnRow = tuple[Any, ...]
ROW_LENGTH = 17  # len(ROW_FIELDS): turn_index imports this module, so the count is checked there

# A turn's shape, as the view of the history compression reads needs it (compaction/view.py):
PLAIN_TURN = 0  # {"role": text, "parts": [...]}: joined to its neighbours by arithmetic on its lengths
OTHER_TURN = 1  # any other shape, or thoughts that carry a call or response: joined by building it
INVALID_MODEL_TURN = 2  # a model turn isValidContent rejects: its run of model turns is left out


# (id, name) by which a function call and its response are paired: text, or None for none.  Typed as a tuple
CallKey = tuple[str | None, ...]  # object, not a pair mypyc unboxes, so that one key serves a call and its response


def _key_text(value: Any) -> str | None:
    if value is None or type(value) is str:
        return value
    return js_stringify(value)


def pair_key(value: Any) -> CallKey | None:
    """The ``(id, name)`` by which a ``functionCall`` or ``functionResponse`` object is paired
    with its other half (the agentic split, ``compaction.pairs``), or None for one that is no
    object.  The id counts only when it is truthy.  A value that is not text (a number, a list, an
    object) stands as its JSON text, so that it pairs like any other and is never an unhashable
    key."""
    if type(value) is not dict:
        return None
    ident = value.get("id")
    name = value.get("name")
    return (_key_text(ident) if truthy(ident) else None, shared(name) if type(name) is str else _key_text(name))


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


def _plain_response(fr: dict[str, Any]) -> tuple[int, int, int, int] | None:
    """The part ``{"functionResponse": fr}`` when ``fr`` is ``{…, "response": {"output": text}}``
    (string values only): (its JSON length, its quarters, the output's UTF-16 units and ASCII units).

    The shape every string tool result takes; measured without serialising
    the output.  None for any other shape (measured the general way).
    """
    if not fr:
        return None
    response = fr.get("response")
    if type(response) is not dict or len(response) != 1:
        return None
    output = response.get("output")
    if type(output) is not str:
        return None
    units, ascii_units, output_json = string_measures(output)
    response_json = 11 + output_json  # {"output":…}
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
    return 21 + fr_json, quarters, units, ascii_units  # {"functionResponse":…}


def response_text(response: Any) -> str:
    """The text the budget measures: ``output``, else ``content``, else pretty JSON."""
    if isinstance(response, str):
        return response
    if isinstance(response, dict):
        for key in ("output", "content"):
            value = response.get(key)
            if isinstance(value, str):
                return value
    return js_stringify(response, indent=2)


def response_figures(parts: list[Any]) -> tuple[ResponseFigures, ...]:
    """Every function response of a turn's parts as the tool-output budget sees it."""
    found: list[ResponseFigures] = []
    for j, part in enumerate(parts):
        if type(part) is dict:
            fr = part.get("functionResponse")
            if isinstance(fr, dict):
                found.append(_response_entry(j, part, fr))
    return tuple(found)


def _response_entry(j: int, part: dict[str, Any], fr: dict[str, Any]) -> ResponseFigures:
    name = fr.get("name")
    tool = shared(name) if isinstance(name, str) else "unknown_tool"
    if "response" not in fr:
        return (j, False, tool, 0, 0, False)
    response = fr["response"]
    text = response_text(response)
    plain = len(part) == 1 and type(response) is dict and len(response) == 1 and type(response.get("output")) is str
    if text.isascii():
        return (j, True, tool, len(text) // 4, len(text), plain)
    units, ascii_units, _ = string_measures(text)
    return (j, True, tool, quarters_of(units, ascii_units) // 4, units, plain)


def _plain_entry(j: int, fr: dict[str, Any], units: int, ascii_units: int) -> ResponseFigures:
    """``_response_entry`` of a part ``_plain_response`` measured (its output's units given)."""
    name = fr.get("name")
    tool = shared(name) if isinstance(name, str) else "unknown_tool"
    return (j, True, tool, quarters_of(units, ascii_units) // 4, units, True)


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
    """Every turn's recorded usage, kept packed in machine integers (``usage_store.PackedUsages``)
    and handed out as objects."""

    __slots__ = ("_packed",)

    def __init__(self, packed: Sequence[bytes | PackedUsage]) -> None:
        self._packed = packed if type(packed) is PackedUsages else PackedUsages(packed)

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

    def packed(self) -> PackedUsages:
        """Every turn's usage as kept (see ``usage_dict``), for a fast pass over all of them."""
        return self._packed

    def input_tokens(self, index: int) -> int | None:
        """The ``input`` figure of turn ``index``, when it is a number."""
        packed = self._packed[index]
        value = packed[0] if type(packed) is tuple else (packed.get("input") if type(packed) is dict else None)
        return int(value) if isinstance(value, (int, float)) else None


def holds_masking_tag(value: Any) -> bool:
    """Whether ``JSON.stringify(value, null, 2)`` contains ``<tool_output_masked``.

    The tag holds no character JSON escapes, so it is in the text exactly when
    it is inside one of the value's strings (a key or a value).
    """
    if type(value) is str:
        text: str = value
        return _TAG_OPEN in text
    if type(value) is dict:
        mapping: dict[Any, Any] = value
        for key, item in mapping.items():  # noqa: SIM110 - a plain loop is faster than any() compiled
            if (type(key) is str and _TAG_OPEN in key) or holds_masking_tag(item):
                return True
        return False
    if type(value) is list:
        items: list[Any] = value
        for item in items:  # noqa: SIM110 - a plain loop is faster than any() compiled
            if holds_masking_tag(item):
                return True
        return False
    return False


def marker_path(response: Any) -> str | None:
    """The file a ``<tool_output_masked>`` marker names (its last mention), else None."""
    text = response.get("output") if isinstance(response, dict) else response
    hits = _SAVED_AT.findall(text) if isinstance(text, str) else []
    return str(hits[-1]) if hits else None


def _output_entry(j: int, part: dict[str, Any], fr: dict[str, Any], quarters: int,
                  key_id: str | None = None) -> OutputFigures:
    """The ``OutputFigures`` of a part ``{..., "functionResponse": fr}`` whose response is truthy:
    its tool name and call id as written (masking names its file from them, or throws as the
    reference does on one that is not text); ``key_id``: its pairing key's id, kept once when equal."""
    response = fr.get("response")
    name = fr.get("name")
    if type(name) is str:
        name = shared(name)
    ident = key_id if type(fr.get("id")) is str and fr.get("id") == key_id else fr.get("id")
    if holds_masking_tag(response):
        return (j, MASKED_OUTPUT, quarters, name, ident, marker_path(response))
    plain = (len(part) == 1 and "parts" not in fr and type(response) is dict and len(response) == 1
             and type(response.get("output")) is str)
    return (j, PLAIN_OUTPUT if plain else OUTPUT, quarters, name, ident, None)


_SHARED: dict[str, str] = {}


# The JSON.stringify length of the shapes the reader measures piece by piece, less their strings and
# arrays, taken from ``js_json_len`` itself so that no length is written out by hand:
# {"text":…} is 9 + the text's JSON, {"text":…,"thought":true} 24 + it, {"role":…,"parts":[…]} 18 + both.
TEXT_PART_JSON: Final = js_json_len({"text": ""}) - js_json_len("")
THOUGHT_PART_JSON: Final = js_json_len({"text": "", "thought": True}) - js_json_len("")
_EMPTY_ARRAY_JSON: Final = js_json_len([])
TURN_JSON: Final = js_json_len({"role": "", "parts": []}) - js_json_len("") - _EMPTY_ARRAY_JSON


def parts_array_json(count: int) -> int:
    """The JSON length of an array of ``count`` parts less the parts themselves: brackets and commas."""
    return _EMPTY_ARRAY_JSON + max(count - 1, 0)


def may_start_kept_part(role: object, has_response: bool) -> bool:
    """``findCompressSplitPoint``'s candidate: a user turn with no function response may begin the
    kept history.  The one statement of the rule (``split.is_split_candidate`` and every row's
    ``is_candidate`` apply it)."""
    return role == "user" and not has_response


def may_end_summary(role: object, has_call: bool) -> bool:
    """A model turn with no function call may end a fully summarised history (the reference then
    splits after the last turn).  The one statement of the rule (``split.ends_safely``, ``is_safe_end``)."""
    return role == "model" and not has_call


def holds_part(content: dict[str, Any], field: str) -> bool:
    """Whether a Content has a part whose ``field`` (functionCall, functionResponse) is set (truthy, as
    the reference tests it); parts that are not a list hold none."""
    parts = content.get("parts")
    return isinstance(parts, list) and any(isinstance(p, dict) and truthy(p.get(field)) for p in parts)


def shared(text: str) -> str:
    """One object for each distinct role, tool name and kind (they repeat on every turn): interned, so
    that a value a ``packed.PackedColumn`` makes again holds this same object (``marshal`` interns again
    what it wrote interned), not a copy."""
    found = _SHARED.get(text)
    if found is None:
        found = _SHARED[text] = sys.intern(text)
    return found


def content_figures(
    content: dict[str, Any], record_id: str | None = None, is_tool_result: bool = False,
    usage: bytes | PackedUsage = None, model: str | None = None, keys: dict[CallKey, CallKey] | None = None,
) -> TurnRow:
    """Every figure of one Content, in one pass over its parts: its row.

    The estimate is ``tokens.parts_quarters``, the JSON length
    ``jsjson.js_json_len`` and the responses ``response_figures``; a part's
    JSON length is measured once and serves both (the estimate of a part that
    is neither text, tool result nor media is its JSON length), and each tool
    output's estimate serves masking (``outputs``).  ``model``: the model the
    turn's record names.  ``keys``: the call keys met so far in one message's
    turns; a response that answers one shares its key (and id text), no copy.
    """
    found = content.get("parts")
    parts: list[Any] = found if isinstance(found, list) else []
    role = content.get("role")
    quarters = 0
    parts_json = parts_array_json(len(parts))
    has_response = has_call = False
    calls: list[CallKey] = []
    answers: list[CallKey] = []
    responses: list[ResponseFigures] = []
    outputs: list[OutputFigures] = []
    labels: list[str] = []  # turn_kind, built in the same pass
    sizes: list[int] = []  # each part's quarters, for its spread
    thoughts = carried = False
    for j in range(len(parts)):
        item = parts[j]
        before = quarters
        if type(item) is not dict:
            size = js_json_len(item)
            quarters += size
            parts_json += size
            label = "other"
            if item is None:
                outputs.append((j, NULL_PART, 0, None, None, None))
        else:
            part: dict[str, Any] = item
            text = part.get("text")
            response = part.get("functionResponse")
            call = part.get("functionCall")
            plain = None
            if type(text) is str:
                units, ascii_units, text_json = string_measures(text)
                quarters += quarters_of(units, ascii_units)
                if len(part) == 1:  # {"text":…}
                    parts_json += TEXT_PART_JSON + text_json
                    label = "text"
                elif len(part) == 2 and part.get("thought") is True and next(iter(part)) == "text":
                    parts_json += THOUGHT_PART_JSON + text_json
                    label = "thought"
                    thoughts = True
                else:
                    parts_json += js_json_len(part)
                    label = _part_label(part)
            elif type(response) is dict and len(part) == 1 and (plain := _plain_response(response)) is not None:
                parts_json += plain[0]
                quarters += plain[1]
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
            if isinstance(response, dict):
                fr: dict[str, Any] = response
                responses.append(_plain_entry(j, fr, plain[2], plain[3]) if plain is not None
                                 else _response_entry(j, part, fr))
            if response is not None and truthy(response):
                has_response = True
                key = pair_key(response)
                if key is not None:
                    if keys is not None:
                        key = keys.setdefault(key, key)
                    answers.append(key)
                    if truthy(response.get("response")):
                        outputs.append(_output_entry(j, part, response, quarters - before, key[0]))
            if call is not None and truthy(call):
                has_call = True
                key = pair_key(call)
                if key is not None:
                    if keys is not None:
                        key = keys.setdefault(key, key)
                    calls.append(key)
            if "thought" in part and truthy(part["thought"]):
                thoughts = True
                if (call is not None and truthy(call)) or (response is not None and truthy(response)):
                    carried = True  # a call or response that stripping the thoughts removes
        if label not in labels:
            labels.append(label)
        sizes.append(quarters - before)
    role_json = js_string_json_len(role) if type(role) is str else -1
    standard = role_json >= 0 and len(content) == 2 and next(iter(content)) == "role" and "parts" in content \
        and isinstance(content["parts"], list)
    # {"role":…,"parts":[…]} from its pieces, any other shape as a whole
    json_len = TURN_JSON + role_json + parts_json if standard else js_json_len(content)
    shape = PLAIN_TURN if standard and role else OTHER_TURN
    thought_json = 0
    if thoughts:
        stripped = strip_thoughts(content)
        thought_json = json_len - js_json_len(stripped if stripped is not None else {**content, "parts": []})
        if carried:
            shape = OTHER_TURN  # its figures without the thoughts are measured on the turn itself
    if role == "model" and not is_valid_model_content(content):
        shape = INVALID_MODEL_TURN
    return (
        record_id,
        shared(role) if type(role) is str else (str(role) if role is not None else ""),
        is_tool_result,
        quarters,
        json_len,
        may_start_kept_part(role, has_response),
        may_end_summary(role, has_call),
        shared("+".join(labels)) if labels else "empty",
        tuple(responses) if has_response else (),
        usage,
        tuple(calls),
        tuple(answers),
        model,
        tuple(outputs) if outputs else (),
        thought_json,
        shape,
        turn_spread(parts, role, sizes, calls, answers, len(outputs)),
    )


def recorded_model(message: dict[str, Any]) -> str | None:
    """The model a message record names (None: it names none)."""
    model = message.get("model")
    return shared(model) if type(model) is str and model else None
