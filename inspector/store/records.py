"""A new history (Content[]) -> the message records that say it on disk.

Kept turns keep their records (tool calls, thoughts, usage, model, ids);
records are made up only where the new history says something new.  The
rules follow how Gemini CLI reads records back (``convertSessionToClientHistory``):

* a user turn -> a ``user`` record with the parts as content;
* a model turn -> a ``gemini`` record whose content holds the parts (a
  content with functionCall or thought parts is taken as is on reading; a
  plain one is rebuilt from nothing else, since the record has no thoughts or
  tool calls);
* a model record that also produced a tool-result turn is reused only if
  that result turn follows it; when the result changed only in its
  functionResponse parts (the tool-output budget), the record's
  ``toolCalls[].result`` is rewritten to match.

Whatever is built, ``check_records`` proves it: the project's own history of
the records must be exactly the new history, or nothing is written.
"""

from __future__ import annotations

import json
import math
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from inspector.jsjson import truthy
from inspector.session.history import Turn, is_environment_content, messages_to_turns

Content = dict[str, Any]


@dataclass
class BuiltRecords:
    records: list[dict[str, Any]]
    reused: int = 0  # records taken over unchanged
    adapted: int = 0  # kept records whose content or tool results were rewritten
    created: int = 0  # records made up for new or changed turns


def js_number(value: int | float) -> float:
    """The number Gemini CLI (JavaScript) holds for a JSON number: the nearest double.

    ``9007199254740993`` is ``9007199254740992`` there, ``-0`` is written
    back as ``0``, and an integer past the double range is Infinity.
    """
    try:
        return float(value)
    except OverflowError:  # an integer: compared, not converted
        return math.inf if value > 0 else -math.inf


def same(a: Any, b: Any) -> bool:
    """Equality as Gemini CLI sees it: ``True`` is not ``1``, ``1`` equals ``1.0``, numbers are doubles,
    and a number past the doubles is the null it is written as."""
    return _difference(a, b, "") is None


def _difference(a: Any, b: Any, where: str) -> tuple[str, Any, Any] | None:
    """(path, a's value, b's value) of the first place ``a`` and ``b`` differ; None if they do not."""
    if isinstance(a, bool) or isinstance(b, bool):
        return None if isinstance(a, bool) and isinstance(b, bool) and a == b else (where, a, b)
    if isinstance(a, dict):
        if not isinstance(b, dict) or a.keys() != b.keys():
            return (where, a, b)
        for key in a:
            found = _difference(a[key], b[key], f"{where}.{key}")
            if found:
                return found
        return None
    if isinstance(a, list):
        if not isinstance(b, list) or len(a) != len(b):
            return (where, a, b)
        for index, (x, y) in enumerate(zip(a, b, strict=True)):
            found = _difference(x, y, f"{where}[{index}]")
            if found:
                return found
        return None
    if isinstance(a, (int, float)) or isinstance(b, (int, float)):
        x, y = _as_written(a), _as_written(b)
        return None if type(x) is type(y) and x == y else (where, a, b)
    return None if type(a) is type(b) and a == b else (where, a, b)


def _as_written(value: Any) -> Any:
    """A number as Gemini CLI holds it and writes it: a double, and null for one past the doubles'
    range (JSON has no Infinity: ``JSON.stringify`` writes null, so that is what a file and the
    model get, whichever of the two a history holds)."""
    if not isinstance(value, (int, float)):
        return value
    number = js_number(value)
    return number if math.isfinite(number) else None


def first_difference(got: Sequence[Content], want: Sequence[Content]) -> str | None:
    """Where two histories first differ, phrased for a message: the turn, the path in it, both values."""
    for i, (a, b) in enumerate(zip(got, want, strict=False)):
        found = _difference(a, b, "")
        if found:
            where, value, wanted = found
            return f"turn {i}{' at ' + where.lstrip('.') if where else ''} would read back as " \
                   f"{_shown(value)} instead of {_shown(wanted)}"
    if len(got) != len(want):
        return f"it would read back as {len(got)} turns instead of {len(want)}"
    return None


def _shown(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=True) if not isinstance(value, float) or math.isfinite(value) else repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _result_slots(calls: list[Any]) -> list[tuple[int, str, int]]:
    """Which tool call (and how) each part of the tool-result turn came from."""
    slots: list[tuple[int, str, int]] = []
    for index, call in enumerate(calls):
        if not isinstance(call, dict):
            continue
        result = call.get("result")
        if not truthy(result):
            continue
        if isinstance(result, str):
            slots.append((index, "text", 0))
        elif isinstance(result, list):
            slots.extend((index, "list", k) for k in range(len(result)))
        else:
            slots.append((index, "part", 0))
    return slots


def _rewrite_results(record: dict[str, Any], old: Content, new: Content) -> dict[str, Any] | None:
    """The record with its tool results changed so they read back as ``new``."""
    old_parts, new_parts = old.get("parts") or [], new.get("parts") or []
    calls = record.get("toolCalls")
    if new.get("role") != "user" or set(new) != {"role", "parts"} or not isinstance(calls, list):
        return None
    slots = _result_slots(calls)
    if not (len(slots) == len(old_parts) == len(new_parts)):
        return None
    new_calls: list[Any] = list(calls)
    for (index, how, k), before, after in zip(slots, old_parts, new_parts, strict=True):
        if same(before, after):
            continue
        if not (isinstance(before, dict) and isinstance(after, dict)):
            return None
        if "functionResponse" not in before or "functionResponse" not in after:
            return None
        call = dict(new_calls[index])
        if how == "text":
            fr = after["functionResponse"]
            plain = {key: call[key] for key in ("id", "name") if key in call}
            response = fr.get("response") if isinstance(fr, dict) else None
            if (
                set(after) == {"functionResponse"}
                and isinstance(response, dict)
                and set(response) == {"output"}
                and isinstance(response["output"], str)
                and response["output"]
                and same({k: v for k, v in fr.items() if k != "response"}, plain)
            ):
                call["result"] = response["output"]
            else:
                call["result"] = after
        elif how == "list":
            items = list(call["result"])
            items[k] = after
            call["result"] = items
        else:
            call["result"] = after
        new_calls[index] = call
    return {**record, "toolCalls": new_calls}


def build_records(
    messages: Sequence[dict[str, Any]],
    turns: Sequence[Turn],
    new_history: Sequence[Content],
    sources: Sequence[Turn | None],
    *,
    now: Callable[[], str],
    new_id: Callable[[], str] = lambda: str(uuid.uuid4()),
) -> BuiltRecords:
    """Records for ``new_history``; ``sources[i]`` is the turn it came from, or None.

    A source may differ from its new turn (then its record is adapted where
    the change allows, else a new record is made).
    """
    if len(sources) != len(new_history):
        raise ValueError("sources and new_history differ in length")
    result_turn: dict[int, Turn] = {}
    for turn in turns:
        if turn.is_tool_result and turn.message_index is not None:
            result_turn[turn.message_index] = turn
    built = BuiltRecords([])
    used: set[int] = set()
    i = 0
    while i < len(new_history):
        content, source = new_history[i], sources[i]
        record = _reuse(messages, source, content, used)
        if record is not None and source is not None and source.message_index is not None:
            index = source.message_index
            pair = result_turn.get(index)
            if pair is None:
                built.records.append(record)
                used.add(index)
                if record is messages[index]:
                    built.reused += 1
                else:
                    built.adapted += 1
                i += 1
                continue
            if i + 1 < len(new_history):
                following = new_history[i + 1]
                if same(pair.content, following):
                    built.records.append(record)
                    built.reused += 1
                    used.add(index)
                    i += 2
                    continue
                rewritten = _rewrite_results(record, pair.content, following)
                if rewritten is not None:
                    built.records.append(rewritten)
                    built.adapted += 1
                    used.add(index)
                    i += 2
                    continue
        built.records.append(_new_record(content, now(), new_id()))
        built.created += 1
        i += 1
    return built


def _reuse(
    messages: Sequence[dict[str, Any]], source: Turn | None, content: Content, used: set[int]
) -> dict[str, Any] | None:
    if source is None or source.message_index is None or source.is_tool_result:
        return None
    index = source.message_index
    if index in used or not 0 <= index < len(messages):
        return None
    record = messages[index]
    if same(source.content, content):
        return record
    if record.get("type") == "user" and content.get("role") == "user" and set(content) == {"role", "parts"}:
        adapted = {k: v for k, v in record.items() if k != "displayContent"}
        adapted["content"] = content.get("parts")
        return adapted
    return None


def _new_record(content: Content, timestamp: str, ident: str) -> dict[str, Any]:
    kind = "user" if content.get("role") == "user" else "gemini"
    return {"id": ident, "timestamp": timestamp, "type": kind, "content": content.get("parts")}


def check_records(records: Sequence[dict[str, Any]], new_history: Sequence[Content]) -> str | None:
    """None if the records read back exactly as ``new_history``, else why not."""
    got = [turn.content for turn in messages_to_turns(list(records))]
    return first_difference(got, new_history)


def context_records(messages: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The session's environment-context record (``<session_context>``), if any: the record the
    history reader keeps out of the history, by the reader's own rule."""
    for record in messages:
        if record.get("type") == "user" and is_environment_content(record.get("content")):
            return [record]
    return []
