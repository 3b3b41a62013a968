"""Session messages -> the curated history Gemini CLI resumes with.

This is ``convertSessionToClientHistory`` (REFERENCE.md section 2), written
against the parsed JSON so that every field, known or not, reaches the history
untouched.  Each turn remembers the message it came from.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from inspector.jsjson import JS_WHITESPACE, js_to_string, truthy
from inspector.session.loader import Session

_IGNORED_PREFIXES = ("/", "?", "<session_context>", "<hook_context>")
_LONGEST_PREFIX = max(len(p) for p in _IGNORED_PREFIXES)


@dataclass(slots=True)
class Turn:
    """One Content of the history, with where it came from."""

    index: int
    content: dict[str, Any]
    record_id: str | None = None  # the message record this turn came from
    message_index: int | None = None  # position of that record in Session.messages
    is_tool_result: bool = False  # the functionResponse turn built from toolCalls

    @property
    def role(self) -> str:
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
    if value.get("videoMetadata") is not None or "videoMetadata" in value and value["videoMetadata"] is None:
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


def is_ignored_user_content(content: Any) -> bool:
    """Whether a user message stays out of the history (empty, a command, context)."""
    seen = ""
    for piece in _part_text_pieces(content):
        seen = (seen + piece).lstrip(JS_WHITESPACE)
        if len(seen) >= _LONGEST_PREFIX:
            break
    return not seen or seen.startswith(_IGNORED_PREFIXES)


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


def messages_to_turns(messages: list[dict[str, Any]]) -> list[Turn]:
    turns: list[Turn] = []
    for position, message in enumerate(messages):
        kind = message.get("type")
        ident = message.get("id")
        if kind == "user":
            content = message.get("content")
            if is_ignored_user_content(content):
                continue
            turns.append(
                Turn(len(turns), {"role": "user", "parts": part_array(content)}, ident, position)
            )
        elif kind == "gemini":
            content = message.get("content")
            content_parts = part_array(content) if truthy(content) else []
            calls = message.get("toolCalls")
            has_calls = isinstance(calls, list) and len(calls) > 0
            if any(isinstance(p, dict) and (truthy(p.get("functionCall")) or truthy(p.get("thought")))
                   for p in content_parts):
                model_parts = list(content_parts)
            else:
                model_parts = _thought_parts(message.get("thoughts"))
                model_parts.extend(content_parts)
                if has_calls:
                    model_parts.extend(_call_part(call) for call in calls)
            if not model_parts:
                continue
            turns.append(Turn(len(turns), {"role": "model", "parts": model_parts}, ident, position))
            if has_calls:
                responses = _response_parts(calls)
                if responses:
                    turns.append(
                        Turn(len(turns), {"role": "user", "parts": responses}, ident, position, True)
                    )
    return turns


def contents_to_turns(contents: list[dict[str, Any]]) -> list[Turn]:
    return [Turn(i, content) for i, content in enumerate(contents)]


def history(session: Session) -> list[Turn]:
    """The curated history of a session: what Gemini CLI would resume with."""
    if session.contents is not None:
        return contents_to_turns(session.contents)
    return messages_to_turns(session.messages)
