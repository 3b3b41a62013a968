"""The probe benchmark's questions, written from the summarised turns by rules of its own.

Nothing here imports the summarisers or the quality checker: the turns are
read again from the raw Gemini API contents (``role``, ``parts`` with
``text`` / ``functionCall`` / ``functionResponse``), so a question does not
repeat the summariser's view of the history.

Four kinds, two questions each where the turns hold the material (a kind with
nothing to ask about is left out for that session, never filled with an easy
question):

* recall: the error a failed call reported; a value a successful command
  printed (a test count, a version, a URL, a port);
* artifact: which files were made or changed (by any tool or by the shell);
  the final state of the last path whose state changed (made, edited how,
  moved to, deleted);
* continuation: the current task (the latest substantive request); the last
  thing the agent did or said;
* decision: a constraint the user stated; a decision or reason the agent
  stated.

Each question carries its requirements: groups of alternatives, each group
met when any of its strings is in the snapshot or the kept turns.
"""

from __future__ import annotations

import json
import re
import shlex
from dataclasses import dataclass, field
from typing import Any

KINDS = ("recall", "artifact", "continuation", "decision")
SHELL = {"run_shell_command", "shell", "bash", "run_command"}
WRITERS = {"write_file", "create_file"}
EDITORS = {"replace", "edit", "edit_file", "smart_edit"}
_STOP_TEXT = """the and for with that this from into have has had was were are will would should could can not but
    you your our their they them then than there here what which when where while about after before again also just
    only very more most some such each every other please make sure file files using used use need needs want like
    into onto over under been being does done doing let lets i'll i'm it's that's don't won't can't let's now okay
    sure yes great good thanks thank will shall might must never always should whether because"""
STOP = frozenset(_STOP_TEXT.split())
_WORD = re.compile(r"[A-Za-z_][\w.\-/]*\w|\d+(?:\.\d+)+|\d{2,}")
_EXIT = re.compile(r"Exit Code:\s*(-?\d+)")
_ERRORISH = re.compile(r"(error|exception|traceback|failed|failure|fatal|denied|refused|not found|no such|cannot|"
                       r"can't|unable|invalid|undefined|missing|assert|timed out|killed)", re.I)
_NOISE = re.compile(r"^(destroying test database|hint:|\s*at\s|npm notice|warning:|\+ |~|[-=]{4,}|at line:)", re.I)
# What a command found, the most telling first: counts, then addresses, then versions.
_RESULTS = (re.compile(r"\b\d+ (?:passed|failed|errors?|tests?|skipped|files? changed|insertions?|deletions?)\b",
                       re.I),
            re.compile(r"https?://[^\s'\"<>)]+|\bport[: ]+\d{2,5}\b|(?:localhost|127\.0\.0\.1|0\.0\.0\.0):\d{2,5}",
                       re.I),
            re.compile(r"\bv?\d+\.\d+\.\d+\b"))
_RULE = re.compile(r"\b(must|never|always|don't|do not|only|avoid|make sure|ensure|should|shouldn't|at most|"
                   r"at least|no more than)\b", re.I)
_DECIDE = re.compile(r"\b(because|decided|root cause|the cause|instead|the (?:issue|problem|bug) (?:is|was)|"
                     r"i will use|i'll use|i chose|i'm going to|i will|i'll|so that|the reason)\b", re.I)


@dataclass(frozen=True)
class Question:
    kind: str
    text: str
    needs: tuple[tuple[str, ...], ...]  # each group: any one of these (lower-case) strings
    turn: int


@dataclass
class Call:
    turn: int
    name: str
    args: dict[str, Any]
    output: str = ""
    failed: bool | None = None  # None: no result recorded
    exit_code: int | None = None


@dataclass
class Turns:
    prompts: list[tuple[int, str]] = field(default_factory=list)
    calls: list[Call] = field(default_factory=list)
    agent: list[tuple[int, str]] = field(default_factory=list)


def _texts(parts: list[Any]) -> list[str]:
    return [p["text"] for p in parts if isinstance(p, dict) and isinstance(p.get("text"), str)
            and not p.get("thought")]


def _result_text(response: Any) -> tuple[str, bool]:
    if isinstance(response, dict):
        if response.get("error"):
            return str(response["error"]), True
        for key in ("output", "llmContent", "content", "result"):
            if isinstance(response.get(key), str):
                return response[key], False
        return json.dumps(response, ensure_ascii=False), False
    return str(response), False


def read_turns(contents: list[dict[str, Any]]) -> Turns:
    out = Turns()
    waiting: list[Call] = []
    for index, content in enumerate(contents):
        parts = content.get("parts")
        if not isinstance(parts, list):
            continue
        if content.get("role") == "model":
            for part in parts:
                call = part.get("functionCall") if isinstance(part, dict) else None
                if isinstance(call, dict):
                    given = call.get("args")
                    item = Call(index, str(call.get("name") or ""), given if isinstance(given, dict) else {})
                    out.calls.append(item)
                    waiting.append(item)
            text = " ".join(t.strip() for t in _texts(parts) if t.strip())
            if text:
                out.agent.append((index, text))
            continue
        answered = False
        for part in parts:
            response = part.get("functionResponse") if isinstance(part, dict) else None
            if isinstance(response, dict):
                answered = True
                match = next((c for c in waiting if c.name == response.get("name")), None)
                if match is None:
                    continue
                waiting.remove(match)
                match.output, errored = _result_text(response.get("response"))
                code = _EXIT.search(match.output[-3000:])
                match.exit_code = int(code.group(1)) if code else None
                match.failed = errored or bool(match.exit_code)
        if answered:
            continue
        for text in _texts(parts):
            if text.startswith("<session_context>") or "<state_snapshot>" in text:
                continue
            text = text.split("--- Content from referenced files ---")[0].strip()
            if text:
                out.prompts.append((index, text))
    return out


def key_words(text: str, count: int) -> tuple[str, ...]:
    """The most telling words of a text: with digits, dots or underscores first, then the longest."""
    seen: list[str] = []
    for word in _WORD.findall(text[:3000]):
        low = word.lower().strip(".-/")
        if len(low) >= 4 and low not in STOP and low not in seen:
            seen.append(low)
    ranked = sorted(seen, key=lambda w: (not re.search(r"[\d_.]", w), -len(w)))
    return tuple(ranked[:count])


def _base(path: str) -> str:
    return path.rstrip("/").rsplit("/", 1)[-1].lower()


def _command(call: Call) -> str:
    value = call.args.get("command")
    return value.strip() if isinstance(value, str) else ""


def _path(call: Call) -> str:
    for key in ("file_path", "absolute_path", "path"):
        if isinstance(call.args.get(key), str):
            return str(call.args[key])
    return ""


def _error_line(output: str) -> str:
    lines = [ln.strip() for ln in output.splitlines() if ln.strip() and not _NOISE.match(ln.strip())]
    lines = [ln for ln in lines if not ln.startswith(("Command:", "Directory:", "Exit Code:", "Signal:",
                                                      "Background PIDs:", "Process Group PGID:"))]
    said = [ln for ln in lines if _ERRORISH.search(ln)]
    return (said or lines or [""])[-1]


def _program(call: Call) -> str:
    command = _command(call)
    try:
        words = shlex.split(command.splitlines()[0]) if command else []
    except ValueError:
        words = command.split()
    words = [w for w in words if "=" not in w[:30] or w.startswith("-")]
    return (words[0] if words else call.name).lower()


def _recall(turns: Turns) -> list[Question]:
    out = []
    failed = [c for c in turns.calls if c.failed]
    if failed:
        call = failed[-1]
        line = _error_line(call.output)
        words = key_words(line, 3)
        if words:
            subject = _program(call) if _command(call) else _base(_path(call)) or call.name.lower()
            out.append(Question("recall", f"What error did {subject} report (turn {call.turn})?",
                                ((subject,), *((w,) for w in words)), call.turn))
    found: list[tuple[Call, str]] = []
    for pattern in _RESULTS:
        for call in turns.calls:
            if call.failed is False and _command(call):
                found.extend((call, hit.group().lower().rstrip(".,;")) for hit in pattern.finditer(call.output[:20000]))
        if found:
            break
    if found:
        call = found[-1][0]
        values = tuple(dict.fromkeys(v for c, v in found if c is call))[:3]
        out.append(Question("recall", f"What did {_program(call)} find (turn {call.turn})?",
                            tuple((v,) for v in values), call.turn))
    return out


_REDIRECT = re.compile(r"(?:^|[^<>&\d])>>?\s*([^\s;&|<>]+)|\btee\s+(?:-a\s+)?([^\s;&|]+)|"
                       r"\b(?:curl|wget)\b[^;&|]*?\s-(?:o|O)\s+([^\s;&|]+)")


def _shell_effects(call: Call) -> list[tuple[str, str]]:
    """(path, how) of the files a successful shell command made, copied, moved or removed."""
    out: list[tuple[str, str]] = []
    command = _command(call)
    if not command or call.failed is not False:
        return out
    for hit in _REDIRECT.finditer(command):
        path = next(g for g in hit.groups() if g)
        if not path.startswith(("/dev/", "&")) and "$" not in path:
            out.append((path, "made"))
    for piece in re.split(r"&&|;|\|\||\n", command):
        try:
            words = shlex.split(piece)
        except ValueError:
            continue
        args = [w for w in words[1:] if not w.startswith("-")]
        if words[:1] in (["cp"], ["mv"]) and len(args) == 2:
            out.append((args[1], "made" if words[0] == "cp" else "moved"))
            if words[0] == "mv":
                out.append((args[0], "moved"))
        elif words[:1] == ["rm"] and args:
            out.extend((a, "deleted") for a in args if not re.search(r"[*?$]", a))
    return out


def _artifacts(turns: Turns) -> list[Question]:
    trail: dict[str, tuple[int, str, Call]] = {}
    for call in turns.calls:
        if call.failed is not False:
            continue
        if call.name in WRITERS and _path(call):
            trail[_base(_path(call))] = (call.turn, "made", call)
        elif call.name in EDITORS and _path(call):
            trail[_base(_path(call))] = (call.turn, "edited", call)
        for path, how in _shell_effects(call):
            trail[_base(path)] = (call.turn, how, call)
    if not trail:
        return []
    names = sorted(trail, key=lambda n: trail[n][0])
    changed = [n for n in names if trail[n][1] != "deleted"][-6:]
    out = []
    if changed:
        out.append(Question("artifact", "Which files were made or changed?", tuple((n,) for n in changed),
                            trail[changed[-1]][0]))
    last = names[-1]
    turn, how, call = trail[last]
    needs: list[tuple[str, ...]] = [(last,)]
    if how == "deleted":
        needs.append(("deleted", "removed", "rm "))
    elif how == "moved":
        needs.append(("moved", "mv "))
    elif how == "edited":
        said = call.args.get("instruction") if isinstance(call.args.get("instruction"), str) else ""
        words = key_words(said or str(call.args.get("new_string") or ""), 2)
        needs.extend((w,) for w in words)
    out.append(Question("artifact", f"What is the final state of {last}?", tuple(needs), turn))
    return out


def _continuation(turns: Turns) -> list[Question]:
    out = []
    real = [(t, p) for t, p in turns.prompts if len(p.split()) >= 4]
    if real:
        turn, text = real[-1]
        words = key_words(text, 4)
        if words:
            out.append(Question("continuation", "What is the current task?", tuple((w,) for w in words), turn))
    if turns.calls:
        call = turns.calls[-1]
        subject = _program(call) if _command(call) else _base(_path(call)) or call.name.lower()
        needs: list[tuple[str, ...]] = [(subject,)]
        said = [(t, s) for t, s in turns.agent if t >= call.turn - 1]
        if said:
            needs.extend((w,) for w in key_words(said[-1][1], 2))
        out.append(Question("continuation", "What was the agent doing last, and what comes next?",
                            tuple(needs), call.turn))
    return out


def _sentences(text: str) -> list[str]:
    return [s.strip() for s in re.split(r"(?<=[.!?])\s+|\n+", text) if 20 <= len(s.strip()) <= 400]


def _decisions(turns: Turns) -> list[Question]:
    out = []
    rules = [(t, s) for t, p in turns.prompts for s in _sentences(p) if _RULE.search(s)]
    if rules:
        turn, sentence = rules[-1]
        words = key_words(sentence, 3)
        if words:
            out.append(Question("decision", "What constraint did the user set?", tuple((w,) for w in words), turn))
    reasons = [(t, s) for t, a in turns.agent for s in _sentences(a) if _DECIDE.search(s)]
    if reasons:
        turn, sentence = reasons[-1]
        words = key_words(sentence, 3)
        if words:
            out.append(Question("decision", "What did the agent decide, and why?", tuple((w,) for w in words), turn))
    return out


def questions(contents: list[dict[str, Any]]) -> list[Question]:
    """The probe questions of the summarised turns ``contents``."""
    turns = read_turns(contents)
    return [*_recall(turns), *_artifacts(turns), *_continuation(turns), *_decisions(turns)]
