"""Session messages -> the curated history Gemini CLI resumes with.

This is ``convertSessionToClientHistory`` (REFERENCE.md section 2), written
against the parsed JSON so that every field, known or not, reaches the history
untouched.  Each turn remembers the message it came from.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any

from inspector.jsjson import JS_WHITESPACE, js_to_string, truthy

_IGNORED_PREFIXES = ("/", "?", "<session_context>", "<hook_context>")
_LONGEST_PREFIX = max(len(p) for p in _IGNORED_PREFIXES)


class Turn:
    """One Content of the history, with where it came from.

    ``content`` is either held or, for turns of a recording, built from the
    message's line each time it is asked for (``source``, which may keep the
    few read last), so that a pass over 170,000 turns does not leave 170,000
    parsed contents alive.
    """

    __slots__ = ("_content", "_role", "_source", "index", "is_tool_result", "message_index", "record_id")

    def __init__(
        self,
        index: int,
        content: dict[str, Any] | None = None,
        record_id: str | None = None,
        message_index: int | None = None,
        is_tool_result: bool = False,
        *,
        role: str | None = None,
        source: Callable[[Turn], dict[str, Any]] | None = None,
    ) -> None:
        self.index = index
        self._content = content
        self.record_id = record_id  # the message record this turn came from
        self.message_index = message_index  # position of that record in Session.messages
        self.is_tool_result = is_tool_result  # the functionResponse turn built from toolCalls
        self._role = role
        self._source = source

    @property
    def content(self) -> dict[str, Any]:
        if self._content is not None:
            return self._content
        if self._source is None:
            raise ValueError("a turn without content")
        return self._source(self)  # not kept on the turn (see the class's notes)

    @content.setter
    def content(self, value: dict[str, Any]) -> None:
        self._content = value

    @property
    def has_content(self) -> bool:
        """Whether the content is held (given), not rebuilt from its record when asked for."""
        return self._content is not None

    @property
    def role(self) -> str:
        if self._role is not None:
            return self._role
        return str(self.content.get("role", ""))

    @property
    def parts(self) -> list[Any]:
        parts = self.content.get("parts")
        return parts if isinstance(parts, list) else []

    @property
    def turn_id(self) -> str | None:
        """The id Gemini CLI gives this turn in its own history."""
        if self.record_id is None:
            return None
        return f"{self.record_id}_response" if self.is_tool_result else self.record_id

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Turn):
            return NotImplemented
        return (self.index, self.record_id, self.message_index, self.is_tool_result, self.content) == (
            other.index, other.record_id, other.message_index, other.is_tool_result, other.content
        )

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return (
            f"Turn(index={self.index}, role={self.role!r}, record_id={self.record_id!r}, "
            f"message_index={self.message_index}, is_tool_result={self.is_tool_result})"
        )


def part_array(content: Any) -> list[Any]:
    """``ensurePartArray``: text becomes a text part; one part becomes a list."""
    if isinstance(content, list):
        return [{"text": p} if isinstance(p, str) else p for p in content]
    if isinstance(content, str):
        return [{"text": content}]
    return [content]


def _part_text_pieces(value: Any) -> Iterator[str]:
    """``partListUnionToString`` (verbose), lazily, one piece per part."""
    if not truthy(value):
        return
    if isinstance(value, str):
        yield value
        return
    if isinstance(value, list):
        for part in value:
            yield from _part_text_pieces(part)
        return
    if not isinstance(value, dict):
        return
    if value.get("videoMetadata") is not None or ("videoMetadata" in value and value["videoMetadata"] is None):
        yield "[Video Metadata]"
    elif "thought" in value:
        yield f"[Thought: {js_to_string(value['thought'])}]"
    elif "codeExecutionResult" in value:
        yield "[Code Execution Result]"
    elif "executableCode" in value:
        yield "[Executable Code]"
    elif "fileData" in value:
        yield "[File Data]"
    elif "functionCall" in value:
        yield "[Function Call: ...]"
    elif "functionResponse" in value:
        yield "[Function Response: ...]"
    elif "inlineData" in value:
        yield "[Media]"
    else:
        text = value.get("text")
        if text is not None:
            yield js_to_string(text)


def _leading_text(content: Any) -> str:
    """The start of a user message's text as Gemini CLI reads it (leading whitespace dropped),
    at least as long as the longest prefix that keeps a message out of the history."""
    if type(content) is list and content:
        first = content[0]
        if type(first) is dict and len(first) == 1:
            text = first.get("text")
            if type(text) is str:
                head = text.lstrip(JS_WHITESPACE)
                if len(head) >= _LONGEST_PREFIX:  # decided by the first part alone
                    return head
    seen = ""
    for piece in _part_text_pieces(content):
        seen = (seen + piece).lstrip(JS_WHITESPACE)
        if len(seen) >= _LONGEST_PREFIX:
            break
    return seen


def is_ignored_user_content(content: Any) -> bool:
    """Whether a user message stays out of the history (empty, a command, context)."""
    head = _leading_text(content)
    return not head or head.startswith(_IGNORED_PREFIXES)


def is_environment_content(content: Any) -> bool:
    """Whether a user message is the environment context (``<session_context>``): out of the
    history, and what Gemini CLI sends in front of it."""
    return _leading_text(content).startswith("<session_context>")


def _thought_parts(thoughts: Any) -> list[dict[str, Any]]:
    parts: list[dict[str, Any]] = []
    if not isinstance(thoughts, list):
        return parts
    for thought in thoughts:
        if not isinstance(thought, dict):
            continue
        subject = thought.get("subject")
        if truthy(subject):
            text: Any = f"**{js_to_string(subject)}** {_template(thought, 'description')}"
        else:
            text = thought.get("description")
        part: dict[str, Any] = {} if text is None and "description" not in thought else {"text": text}
        part["thought"] = True
        parts.append(part)
    return parts


def _template(obj: dict[str, Any], key: str) -> str:
    """``${obj.key}`` in a JavaScript template literal."""
    return js_to_string(obj[key]) if key in obj else "undefined"


def _call_part(call: dict[str, Any]) -> dict[str, Any]:
    inner = {key: call[key] for key in ("id", "name", "args") if key in call}
    return {"functionCall": inner}


def _response_parts(calls: list[Any]) -> list[Any]:
    parts: list[Any] = []
    for call in calls:
        result = call.get("result")
        if not truthy(result):
            continue
        if isinstance(result, str):
            inner = {key: call[key] for key in ("id", "name") if key in call}
            inner["response"] = {"output": result}
            parts.append({"functionResponse": inner})
        elif isinstance(result, list):
            parts.extend(part_array(result))
        else:
            parts.append(result)
    return parts


def _holds_call_or_thought(parts: list[Any]) -> bool:
    """Whether the message's own content already holds its calls or thoughts (then taken as it is)."""
    for part in parts:
        if isinstance(part, dict) and (truthy(part.get("functionCall")) or truthy(part.get("thought"))):
            return True
    return False


def message_contents(message: dict[str, Any]) -> list[tuple[dict[str, Any], bool]]:
    """The turns one message becomes: ``(content, is_tool_result)``, none to two."""
    kind = message.get("type")
    if kind == "user":
        content = message.get("content")
        if is_ignored_user_content(content):
            return []
        return [({"role": "user", "parts": part_array(content)}, False)]
    if kind != "gemini":
        return []
    content = message.get("content")
    content_parts = part_array(content) if truthy(content) else []
    listed = message.get("toolCalls")
    calls: list[Any] = listed if isinstance(listed, list) else []
    has_calls = len(calls) > 0
    if _holds_call_or_thought(content_parts):
        model_parts = list(content_parts)
    else:
        model_parts = _thought_parts(message.get("thoughts"))
        model_parts.extend(content_parts)
        for call in calls:
            model_parts.append(_call_part(call))
    if not model_parts:
        return []
    out = [({"role": "model", "parts": model_parts}, False)]
    if has_calls:
        responses = _response_parts(calls)
        if responses:
            out.append(({"role": "user", "parts": responses}, True))
    return out


def message_id(message: dict[str, Any]) -> str | None:
    """A message's id, or None when it has none that is text.  A JSONL line whose id is not text
    is no message at all, but a legacy file's message keeps its place whatever its id holds:
    Gemini CLI never reads the id to build the history."""
    ident = message.get("id")
    return ident if type(ident) is str else None


def messages_to_turns(messages: Sequence[dict[str, Any]]) -> list[Turn]:
    turns: list[Turn] = []
    for position, message in enumerate(messages):
        ident = message_id(message)
        for content, is_result in message_contents(message):
            turns.append(Turn(len(turns), content, ident, position, is_result))
    return turns


def contents_to_turns(contents: list[dict[str, Any]]) -> list[Turn]:
    return [Turn(i, content) for i, content in enumerate(contents)]


# -- the history as Gemini CLI's compression reads it (GeminiChat.getHistory(true)) -------------------

# What stripThoughts puts on the first function call of a model turn whose thoughts it removed.
SYNTHETIC_THOUGHT_SIGNATURE = "skip_thought_signature_validator"


def is_valid_model_content(content: dict[str, Any]) -> bool:
    """``isValidContent`` for a model turn: a run of model turns holding one that is not valid is
    left out of the curated history (``extractCuratedHistory``).  Not valid: a part that is an
    object with no keys, or a non-object that has none (a number, true, ""), or one that is only
    ``{"text": ""}`` and no thought.  Missing or empty parts are valid on a model turn.  A null
    part makes the reference throw; it is taken as valid here."""
    parts = content.get("parts")
    if not isinstance(parts, list):
        return True
    for part in parts:
        if part is None:
            continue
        if isinstance(part, dict):
            if not part:
                return False
            if not truthy(part.get("thought")) and part.get("text") == "" \
                    and all(key in ("text", "thought", "callIndex") for key in part):
                return False
        elif isinstance(part, (bool, int, float)) or part == "" or part == []:
            return False  # Object.keys of these is empty
    return True


def strip_thoughts(content: dict[str, Any]) -> dict[str, Any] | None:
    """``stripThoughts`` for one turn: its thought parts (and with them any part that is not
    truthy) removed, and on a model turn the first function call given the synthetic thought
    signature when it has none; None when the turn is left with no parts (dropped)."""
    parts = content.get("parts")
    if not truthy(parts):
        return content
    if not isinstance(parts, list):
        return content
    if not any(isinstance(p, dict) and truthy(p.get("thought")) for p in parts):
        return content if parts else None
    kept = [p for p in parts if truthy(p) and not (isinstance(p, dict) and truthy(p.get("thought")))]
    if not kept:
        return None
    if content.get("role") == "model":
        for k, part in enumerate(kept):
            if isinstance(part, dict) and truthy(part.get("functionCall")):
                if not truthy(part.get("thoughtSignature")):
                    kept[k] = {**part, "thoughtSignature": SYNTHETIC_THOUGHT_SIGNATURE}
                break
    return {**content, "parts": kept}


def joined(first: dict[str, Any], then: dict[str, Any]) -> dict[str, Any]:
    """``coalesceConsecutiveRoles`` joining ``then`` onto ``first`` (two turns of one role)."""
    a, b = first.get("parts"), then.get("parts")
    if truthy(a) or truthy(b):
        return {**first, "parts": [*(a if isinstance(a, list) else []), *(b if isinstance(b, list) else [])]}
    return {key: value for key, value in first.items() if key != "parts"}
