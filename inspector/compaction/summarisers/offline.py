"""A summariser that needs no network and no key: deterministic, extractive.

It reads the history the way a careful person skimming it would - what the
user asked, the rules they set, the files the agent read, wrote and edited,
the commands it ran, what failed - and writes the seven sections of a
``<state_snapshot>`` from that, merging an earlier snapshot found in the
history.  Every candidate line has a priority; lines are taken highest first
until the size budget is spent (15% of the estimated tokens of what is being
replaced, never less than a small floor that fits the seven sections).

Like the Gemini path it answers two calls: the first (the draft) uses 80% of
the budget; the second (verification) checks the draft against the facts of
``inspector.compaction.facts`` and adds what is missing, within the budget,
so the draft -> final diff shows what the check recovered.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from inspector.compaction import facts as fx
from inspector.compaction import snapshot as snap
from inspector.compaction.prompts import FOCUS_HEADING, SECTIONS, VERIFY_REQUEST, is_request_text
from inspector.tokens import estimate_contents, text_quarters

RATIO = 0.15
FLOOR_TOKENS = 200  # room for the seven sections and a few lines each
DRAFT_SHARE = 0.8
LINE_CHARS = 160
_TAGS = re.compile(r"</?\s*(state_snapshot|scratchpad|" + "|".join(SECTIONS) + r")\s*>", re.I)
_FIRST_SENTENCE = re.compile(r"^(.+?[.!?。！？])(\s|$)", re.S)


@dataclass(frozen=True)
class Line:
    section: str
    priority: int
    seq: int
    text: str


@dataclass
class _Call:
    turn: int
    name: str
    args: dict[str, Any]
    reason: str
    response: dict[str, Any] | None = None


def clean(text: str, limit: int = LINE_CHARS) -> str:
    """One line of history text, safe to place inside the snapshot."""
    text = _TAGS.sub(lambda m: m.group().replace("<", "(").replace(">", ")"), text)
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def first_sentence(text: str, limit: int = LINE_CHARS) -> str:
    text = " ".join(text.split())
    match = _FIRST_SENTENCE.match(text)
    return clean(match.group(1) if match else text, limit)


def _kind(name: str, args: dict[str, Any]) -> str:
    low = name.lower()
    if fx.call_command({"args": args}) is not None:
        return "shell"
    if "todo" in low:
        return "todo"
    if "memory" in low:
        return "memory"
    if "web" in low or "fetch" in low or "url" in low:
        return "web"
    if any(k in low for k in ("write", "create", "save")):
        return "write"
    if any(k in low for k in ("replace", "edit", "patch", "modify")):
        return "edit"
    if any(k in low for k in ("delete", "remove")):
        return "delete"
    if "read" in low or low in ("view", "cat"):
        return "read"
    if any(k in low for k in ("grep", "search", "find")):
        return "search"
    if any(k in low for k in ("list", "glob", "ls")):
        return "list"
    return "other"


def _result_text(response: dict[str, Any] | None) -> tuple[str, bool]:
    """A short account of a tool result, and whether it was an error."""
    if response is None:
        return "no result recorded", False
    err = fx.response_error(response)
    body = response.get("response")
    if isinstance(body, dict) and body.get("error"):
        return f"ERROR {clean(str(err or body.get('error')), 110)}", True
    text = body.get("output") if isinstance(body, dict) else body
    if not isinstance(text, str):
        text = str(body.get("content")) if isinstance(body, dict) and "content" in body else ""
    first = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
    if err:
        return f"failed: {clean(err, 110)}", True
    return (clean(first, 90) if first else "ok"), False


def _main_arg(args: dict[str, Any]) -> str:
    paths = fx.call_paths(args)
    if paths:
        return ", ".join(paths[:3])
    for key in ("command", "cmd", "pattern", "query", "url", "prompt", "fact"):
        if isinstance(args.get(key), str):
            return str(args[key])
    return ""


def _state(states: dict[str, tuple[list[str], int]], path: str, verb: str, priority: int) -> None:
    verbs, best = states.get(path, ([], 0))
    if verb == "READ" and verbs:
        return  # a file the agent already wrote or read: reading it again adds nothing
    if not verbs or verbs[-1] != verb:
        verbs.append(verb)
    states[path] = (verbs, max(best, priority))


def _focus_tokens(focus: str | None) -> set[str]:
    if not focus:
        return set()
    return {w.lower() for w in re.findall(r"[\w./-]{3,}", focus) if w.lower() not in fx.STOP_WORDS}


class _Builder:
    def __init__(self, focus: str | None) -> None:
        self.lines: list[Line] = []
        self.focus = _focus_tokens(focus)
        self._seen: set[tuple[str, str]] = set()

    def add(self, section: str, priority: int, text: str) -> None:
        text = text.strip()
        key = (section, snap.normalise_line(text))
        if not text or key in self._seen:
            return
        self._seen.add(key)
        if self.focus and any(tok in text.lower() for tok in self.focus):
            priority += 200  # the user asked for it: above recency, below the goal and the rules
        self.lines.append(Line(section, priority, len(self.lines), text))


def render(lines: Sequence[Line]) -> str:
    out = ["<state_snapshot>"]
    for name in SECTIONS:
        body = sorted((ln for ln in lines if ln.section == name), key=lambda ln: ln.seq)
        out.append(f"<{name}>")
        if name == "overall_goal" and body:
            out.append(body[0].text)
            out.extend(f"- {ln.text}" for ln in body[1:])
        else:
            out.extend(f"- {ln.text}" for ln in body) if body else out.append("- none")
        out.append(f"</{name}>")
    out.append("</state_snapshot>")
    return "\n".join(out)


def _cost(line: Line) -> int:
    return text_quarters(f"- {line.text}\n")


def fit(lines: Sequence[Line], budget_quarters: int) -> list[Line]:
    """The highest-priority lines whose rendering fits the budget."""
    used = text_quarters(render([]))
    chosen: list[Line] = []
    for line in sorted(lines, key=lambda ln: (-ln.priority, ln.seq)):
        cost = _cost(line) - (text_quarters("- none\n")
                              if not any(c.section == line.section for c in chosen) else 0)
        if used + cost <= budget_quarters:
            chosen.append(line)
            used += cost
    return chosen


def budget_quarters(history: Sequence[dict[str, Any]], ratio: float = RATIO, floor: int = FLOOR_TOKENS) -> int:
    return 4 * max(floor, int(estimate_contents(history) * ratio))


def split_request(contents: Sequence[dict[str, Any]]) -> tuple[list[dict[str, Any]], str | None, str | None, str]:
    """(history, draft or None, focus or None, mode) from a call's contents."""
    items = list(contents)
    if not items or items[-1].get("role") != "user":
        return items, None, None, "draft"
    texts: list[str] = [p["text"] for p in items[-1].get("parts") or []
                         if isinstance(p, dict) and isinstance(p.get("text"), str)]
    if not texts or not is_request_text(texts[0]):
        return items, None, None, "draft"
    focus = next((t[len(FOCUS_HEADING):].strip() for t in texts if t.startswith(FOCUS_HEADING)), None)
    if texts[0].startswith(VERIFY_REQUEST) and len(items) >= 2 and items[-2].get("role") == "model":
        draft = "".join(p.get("text", "") for p in items[-2].get("parts") or [] if isinstance(p, dict))
        return items[:-2], draft, focus, "verify"
    return items[:-1], None, focus, "draft"


class OfflineSummariser:
    """The deterministic summariser; the default when no Gemini key is set."""

    name = "offline"

    def __init__(self, model: str | None = None, ratio: float = RATIO, floor_tokens: int = FLOOR_TOKENS) -> None:
        self.model = model
        self.ratio = ratio
        self.floor_tokens = floor_tokens

    async def summarise(self, system_prompt: str, contents: list[dict[str, Any]]) -> str:
        return self.summarise_sync(contents)

    def summarise_sync(self, contents: Sequence[dict[str, Any]]) -> str:
        history, draft, focus, mode = split_request(contents)
        budget = budget_quarters(history, self.ratio, self.floor_tokens)
        if mode == "verify" and draft is not None:
            return verify(history, draft, budget, focus)
        return render(fit(draft_lines(history, focus), int(budget * DRAFT_SHARE)))


# -- the draft -------------------------------------------------------------------


def _collect_calls(history: Sequence[dict[str, Any]]) -> list[_Call]:
    calls: list[_Call] = []
    by_id: dict[str, _Call] = {}
    pending: list[_Call] = []
    for turn, content in enumerate(history):
        parts = [p for p in content.get("parts") or [] if isinstance(p, dict)]
        if content.get("role") == "model":
            reason = next((first_sentence(p["text"], 110) for p in parts
                           if isinstance(p.get("text"), str) and not p.get("thought") and p["text"].strip()), "")
            for part in parts:
                call = part.get("functionCall")
                if isinstance(call, dict):
                    args: dict[str, Any] = call["args"] if isinstance(call.get("args"), dict) else {}
                    item = _Call(turn, str(call.get("name") or "tool"), args, reason)
                    calls.append(item)
                    pending.append(item)
                    if isinstance(call.get("id"), str):
                        by_id[call["id"]] = item
        for part in parts:
            response = part.get("functionResponse")
            if not isinstance(response, dict):
                continue
            rid = response.get("id")
            target = by_id.get(rid) if isinstance(rid, str) else None
            if target is None:
                target = next((c for c in pending if c.response is None and c.name == response.get("name")), None)
            if target is not None:
                target.response = response
                if target in pending:
                    pending.remove(target)
    return calls


def _user_requests(history: Sequence[dict[str, Any]]) -> list[tuple[int, str]]:
    out = []
    for turn, content in enumerate(history):
        if content.get("role") != "user":
            continue
        text = "\n".join(t for t in fx._texts(content) if not is_request_text(t)).strip()
        if text and snap.OPEN not in text:
            out.append((turn, text))
    return out


def _previous(history: Sequence[dict[str, Any]]) -> snap.Snapshot | None:
    for content in reversed(history):
        for text in fx._texts(content):
            if snap.OPEN in text:
                return snap.parse(text)
    return None


def draft_lines(history: Sequence[dict[str, Any]], focus: str | None = None) -> list[Line]:
    b = _Builder(focus)
    requests = _user_requests(history)
    previous = _previous(history)
    calls = _collect_calls(history)

    # overall goal: an earlier snapshot's, else the first request
    prior_goal = previous.lines("overall_goal") if previous else []
    if prior_goal:
        b.add("overall_goal", 1000, clean(" ".join(prior_goal), 220))
    elif requests:
        b.add("overall_goal", 1000, first_sentence(requests[0][1], 220))
    if previous:
        for name in SECTIONS[1:]:
            base = {"active_constraints": 300, "key_knowledge": 85, "task_state": 35}.get(name, 50)
            for line in previous.lines(name):
                b.add(name, base, clean(line.lstrip("-*• "), 200))
        for section in previous.sections:  # sections the project does not know: keep as knowledge
            if section.name not in SECTIONS:
                for line in section.lines:
                    b.add("key_knowledge", 60, clean(f"{section.name}: {line.lstrip('-*• ')}", 200))

    for turn, text in requests:
        for sentence in fx.constraint_sentences(text):
            b.add("active_constraints", 300 + turn % 50, clean(sentence, 200))

    _call_lines(b, calls)

    # task state: earlier requests done, the latest one current
    for i, (_turn, text) in enumerate(requests[:-1]):
        b.add("task_state", 20 + i, f"[DONE] {first_sentence(text, 120)}")
    if requests:
        b.add("task_state", 900, f"[IN PROGRESS] {first_sentence(requests[-1][1], 200)} <-- CURRENT FOCUS")
    last_model = next((t for c in reversed(history) if c.get("role") == "model" for t in fx._texts(c)
                       if t.strip()), None)
    if last_model:
        b.add("recent_actions", 120, f"Last agent reply: {first_sentence(last_model, 150)}")
    open_calls = [c for c in calls if c.response is None]
    if open_calls:
        c = open_calls[-1]
        b.add("task_state", 880, f"[TODO] Tool call `{c.name}` {clean(_main_arg(c.args), 80)} has no result yet")
    return b.lines


def _call_lines(b: _Builder, calls: list[_Call]) -> None:
    edits: dict[str, list[str]] = {}
    states: dict[str, tuple[list[str], int]] = {}  # path -> (verbs in order, priority)
    todo_call: _Call | None = None
    recent = len(calls)
    for n, c in enumerate(calls):
        kind = _kind(c.name, c.args)
        result, failed = _result_text(c.response)
        age = recent - n  # 1 = newest
        recency = max(0, 60 - 3 * age)
        arg = clean(_main_arg(c.args), 100)
        if failed:
            b.add("key_knowledge", 200 + recency, f"`{c.name}` {arg} -> {result}")
        if kind == "shell":
            cmd = clean(fx.call_command({"args": c.args}) or "", 140)
            b.add("recent_actions", 70 + recency, f"Ran `{cmd}` -> {result}")
        elif kind in ("write", "edit", "delete"):
            verb = {"write": "CREATED/WROTE", "edit": "MODIFIED", "delete": "DELETED"}[kind]
            for path in fx.call_paths(c.args) or [arg]:
                _state(states, path, verb, 90 + recency)
                why = c.reason or clean(str(c.args.get("instruction") or c.args.get("description") or ""), 110)
                edits.setdefault(path, []).append(why)
        elif kind == "read":
            for path in fx.call_paths(c.args):
                _state(states, path, "READ (failed)" if failed else "READ", 75 + recency)
        elif kind == "list":
            b.add("file_system_state", 55 + recency, f"LISTED: `{arg}` -> {result}")
        elif kind == "search":
            b.add("recent_actions", 50 + recency, f"Searched `{arg}` -> {result}")
        elif kind == "web":
            b.add("key_knowledge", 55 + recency, f"Looked up {arg} -> {result}")
        elif kind == "memory":
            b.add("key_knowledge", 150, f"Remembered: {arg}")
        elif kind == "todo":
            todo_call = c
        else:
            b.add("recent_actions", 40 + recency, f"`{c.name}` {arg} -> {result}")
        if age <= 6 and kind not in ("shell", "search", "other"):
            b.add("recent_actions", 60 + recency, f"`{c.name}` {arg} -> {result}")
    for path, (verbs, priority) in states.items():
        b.add("file_system_state", priority, f"{' then '.join(verbs)}: `{path}`")
    for path, reasons in edits.items():
        why = next((r for r in reversed(reasons) if r), "")
        times = f" ({len(reasons)} edits)" if len(reasons) > 1 else ""
        b.add("artifact_trail", 160, f"`{path}`{times}: {why}" if why else f"`{path}`{times}")
    if todo_call is not None:
        todos = todo_call.args.get("todos")
        for i, item in enumerate(todos if isinstance(todos, list) else []):
            if isinstance(item, dict):
                status = str(item.get("status") or "todo").upper().replace("_", " ")
                b.add("task_state", 700 - i, f"[{status}] {clean(str(item.get('description', '')), 120)}")


# -- the verification ---------------------------------------------------------------

_KIND_SECTION = {
    "constraint": "active_constraints",
    "error": "key_knowledge",
    "path": "file_system_state",
    "command": "recent_actions",
    "code": "key_knowledge",
}
_KIND_PRIORITY = {"constraint": 5, "error": 4, "command": 3, "path": 2, "code": 1}


def verify(history: Sequence[dict[str, Any]], draft: str, budget: int, focus: str | None = None) -> str:
    """The draft, checked against the history's facts, with what it missed added."""
    parsed = snap.parse(draft)
    if not parsed.found:
        return render(fit(draft_lines(history, focus), budget))
    lines = [Line(s.name, 10_000, i * 1000 + j, ln.lstrip("-*• ").strip())
             for i, s in enumerate(parsed.sections) for j, ln in enumerate(s.lines)
             if ln.strip() != "- none" and ln.strip() != "none"]
    found = fx.extract(history)
    matcher = fx.Matcher(draft, found)
    missing = [f for f in found if not matcher.kept(f)]
    focus_tokens = _focus_tokens(focus)
    # newest first within a kind, kinds by importance
    missing.sort(key=lambda f: (-_KIND_PRIORITY[f.kind], -f.turn))
    seq = 10_000_000
    for f in missing:
        seq += 1
        text = _fact_line(f)
        priority = 100 * _KIND_PRIORITY[f.kind] + (200 if any(t in f.value.lower() for t in focus_tokens) else 0)
        lines.append(Line(_KIND_SECTION[f.kind], priority, seq, text))
    return render(_group(fit(lines, budget)))


def _fact_line(f: fx.Fact) -> str:
    if f.kind == "constraint":
        return clean(f.value, 200)
    if f.kind == "error":
        return f"Error seen: {clean(f.value, 150)}"
    if f.kind == "command":
        return f"Ran `{clean(f.value, 150)}`"
    if f.kind == "path":
        return f"MENTIONED: `{clean(f.value, 150)}`"
    return f"`{clean(f.value, 80)}`"


def _group(lines: list[Line]) -> list[Line]:
    """Join added mentions and identifiers into one line each (fewer bullets, fewer tokens)."""
    out: list[Line] = []
    mentioned = [ln for ln in lines if ln.seq >= 10_000_000 and ln.text.startswith("MENTIONED: ")]
    codes = [ln for ln in lines if ln.seq >= 10_000_000 and ln.section == "key_knowledge" and ln.text.startswith("`")]
    grouped = {id(ln) for ln in mentioned + codes}
    out = [ln for ln in lines if id(ln) not in grouped]
    if mentioned:
        joined = ", ".join(ln.text[len("MENTIONED: "):] for ln in sorted(mentioned, key=lambda x: x.seq))
        out.append(Line("file_system_state", 0, 10_000_000, f"MENTIONED: {joined}"))
    if codes:
        joined = ", ".join(ln.text for ln in sorted(codes, key=lambda x: x.seq))
        out.append(Line("key_knowledge", 0, 10_000_001, f"Identifiers: {joined}"))
    return out
