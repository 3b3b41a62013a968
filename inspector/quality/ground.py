"""The ground truth a snapshot is graded against, read from the history by this package alone.

The choice of facts, paths, commands, errors, rules and steps is written
again here, on purpose, so that a mistake in the offline summariser's choice
cannot hide itself by being made twice.  What is one rule of Gemini CLI's
format, not a choice, is shared, so that the two cannot disagree on it:

* the status Gemini CLI recorded for each tool result and call
  (``compaction.statuses.ToolStatuses``, plain recorded data; a result
  recorded apart from its call takes the call's status);
* which call each result answers (``compaction.pairs.Pairing``);
* the reading of a shell result's fields, and of the envelopes Gemini CLI
  puts around a result text and its error field (``compaction.outcomes``);
* the offline snapshot's "path base" line (``summarisers.lines.ROOT_WORDS``):
  how its relative paths are read, not a fact; the next snapshot carries its
  paths written whole under that folder;
* the recognition of what Gemini CLI itself writes as a user turn: the
  snapshot an earlier compaction wrote (``compaction.prompts.is_earlier_snapshot``:
  its tag answered by the acknowledgement a compaction writes) and the fixed
  texts it injects (``written_by_gemini_cli``: its prompt to go on, the
  editor's context, its loop feedback, ...).

Six kinds of fact:

* ``path``: a path a tool call named in its arguments, with what the call
  did to it (read / list / search / write / edit);
* ``command``: a shell command (its first line) with the outcome class
  recorded for it (ok / failed / cancelled / background / unknown);
* ``error``: the error text of a failed call that no later call with the
  same arguments (the same command, the same edit) made good;
* ``constraint``: a sentence of the user's own prompt stating a rule;
* ``step``: the last thing in progress: the latest user prompt, and the
  latest ``write_todos`` item marked in progress;
* ``previous``: each line of the newest earlier ``<state_snapshot>``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from inspector.compaction.outcomes import FAILED, error_field, result_text, shell_outcome, with_exit_meaning
from inspector.compaction.pairs import Pairing
from inspector.compaction.prompts import is_earlier_snapshot, written_by_gemini_cli
from inspector.compaction.statuses import NO_STATUSES, ToolStatuses
from inspector.compaction.summarisers.items import ROOT_WORDS
from inspector.progress import SILENT, Reporter
from inspector.session.figures import pair_key

KINDS = ("path", "command", "error", "constraint", "step", "previous")
# The line of an offline snapshot that says which folder its relative paths are under (a rule of that
# format, shared): a snapshot compacted again carries its paths written whole under that folder.
_PATH_BASE = re.compile(re.escape(ROOT_WORDS) + r" `(/[^`]+)`")

# How each tool acts on the path it names (Gemini CLI's tool names, and a few other agents').
TOOL_OPS = {
    "read_file": "read", "read_many_files": "read", "view_file": "read",
    "write_file": "write", "create_file": "write",
    "replace": "edit", "edit": "edit", "edit_file": "edit", "smart_edit": "edit",
    "list_directory": "list", "ls": "list",
    "glob": "search", "grep": "search", "grep_search": "search", "search_file_content": "search",
}
PATH_ARGS = frozenset({"file_path", "absolute_path", "path", "dir_path", "directory", "paths", "file_paths",
                       "absolute_paths"})
SHELL_NAMES = ("run_shell_command", "shell", "run_command", "bash")

_SUCCESS_STARTS = (
    "Successfully ", "Created new file", "Directory listing for", "Found ", "No files found", "No matches found",
    "Web search results for", "No search results", '{"success":true', "Okay, I've remembered",
)
_RULES = re.compile(
    r"(?:^|\W)(must|mustn['’]t|never|always|don['’]t|dont|do not|avoid|only|should|shouldn['’]t|ensure|make sure|"
    r"keep(?!\s+(?:going|on|at it|it up|working|trying)\b)|prefer|required|no more than|at most|at least|"
    r"without|need to|needs to|has to|have to|"
    r"nicht|niemals|immer|nur|keine|ne pas|jamais|toujours|uniquement|nunca|siempre|solo|sempre|mai|"
    r"никогда|всегда|нельзя|должен|должна|должны|обязательно|только|запрещено|nooit|altijd|moet|moeten|alleen|"
    r"nigdy|zawsze|musisz|tylko)(?:\W|$)"
    r"|^no\s|必须|不要|不能|只能|务必|必ず|しないで|してはいけない|禁止|반드시|절대|지 ?마|금지",
    re.I,
)
_TRIGGER_TEXT = """must mustn't mustn’t never always don't don’t dont do avoid only should shouldn't shouldn’t ensure
    make keep prefer
    required no at without need needs has have nicht niemals immer nur keine ne jamais toujours uniquement nunca siempre
    solo sempre mai никогда всегда нельзя должен должна должны обязательно только запрещено nooit altijd moet
    moeten alleen nigdy zawsze musisz tylko"""
_TRIGGERS = frozenset(_TRIGGER_TEXT.split())
_PLAIN_WORD = re.compile(r"[\w'’]+")
_CJK = re.compile(r"[\u3040-\u30ff\u4e00-\u9fff\uac00-\ud7af]")
_ALNUM = re.compile(r"[^\W_]")
_LETTER = re.compile(r"[^\W\d_]")
_WORDS = re.compile(r"[^\W_][\w./'-]*", re.U)
_DULL_TEXT = """the a an and or but of to in on at by for with from into as is are was were be been it its
    this that these those you your we our i me my they them their not no do does did have has had can could will
    would should may might must never always only please also just than then when where which who what why how
    all any each every some such very so too more most don't dont keep make sure ensure avoid prefer use"""
_DULL = frozenset(_DULL_TEXT.split())

TICK = 512  # turns between progress reports and cancellation checks
STAGE = "fact check"  # the stage name progress reports carry


@dataclass(frozen=True)
class Fact:
    kind: str
    value: str  # how a person reads it ("src/a.py (edit)", "`pytest -q` -> failed")
    turn: int  # the first turn that holds it
    turns: tuple[int, ...] = ()  # every turn that holds it
    key: str = ""  # what is matched: the path, the command's first line, the text
    state: str = ""  # the operation of a path, the outcome class of a command
    extra: str = ""  # a commit command's message

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "value": self.value, "turn": self.turn, "turns": list(self.turns)}


@dataclass
class Ground:
    """Every fact of a history, and what the grader needs to judge a snapshot's claims."""

    facts: list[Fact] = field(default_factory=list)
    ops_by_path: dict[str, set[str]] = field(default_factory=dict)  # every path a call named -> its operations
    outcomes_by_command: dict[str, set[str]] = field(default_factory=dict)  # first line -> outcome classes
    programs: set[str] = field(default_factory=set)  # first words of the commands run
    shell_text: str = ""  # every command, lower-case (a path a command names may have been changed by it)
    previous_text: str = ""  # the newest earlier snapshot: what it says is what the history says
    previous_base: str = ""  # the folder its paths given without a leading "/" are under ("": none named)


def words(text: str) -> list[str]:
    """Lower-case content words, in order, without repeats."""
    seen: dict[str, None] = {}
    for w in _WORDS.findall(text.lower()):
        w = w.strip(".'-")
        if len(w) >= 3 and w not in _DULL:
            seen.setdefault(w, None)
    return list(seen)


def squash(text: str) -> str:
    return " ".join(text.split()).lower()


def first_command_line(command: str) -> str:
    for line in command.split("\n"):
        if line.strip():
            return " ".join(line.split())
    return ""


def commit_text(command: str) -> str:
    if "commit" not in command:
        return ""
    match = re.search(r"\bgit\b.*\bcommit\b.*?(?:-m|--message)[= ]\s*(\"([^\"]*)\"|'([^']*)')", command, re.S)
    if not match:
        return ""
    return " ".join((match.group(2) or match.group(3) or "").split())


def outcome_class(name: str, body: Any, status: str | None, display: str | None = None,
                  command: str | None = None) -> tuple[str, str]:
    """(class, error text) of one result: ok, failed, terminated, cancelled, background or unknown;
    ``display``: the text of the display its call's record kept (``outcomes.shell_outcome``);
    ``command``: a shell call's, whose exit code 1 may be an answer ("no match"), with no error text."""
    error = error_field(body)
    if status == "cancelled" or (error or "").startswith("[Operation Cancelled]"):
        return "cancelled", ""
    if status == "error" or error is not None:
        return "failed", error or ""
    if status == "success" and name not in SHELL_NAMES:
        return "ok", ""  # only a shell result's text can say otherwise
    if name in SHELL_NAMES:  # a shell "success" is the tool running; the exit is only in its fields
        return _shell_class(body, display, command)
    if status == "success":
        return "ok", ""
    text = result_text(body)
    if text is not None and text.head.startswith(_SUCCESS_STARTS):
        return "ok", ""
    return "unknown", ""


def _shell_class(body: Any, display: str | None = None, command: str | None = None) -> tuple[str, str]:
    """A shell result's class and error text, by the summariser's own reading of its fields
    (``outcomes.shell_outcome``): the error field's words, else the output's last line."""
    text = result_text(body)
    if text is None:
        return "unknown", ""
    outcome = with_exit_meaning(shell_outcome(text, display), command)
    if outcome.meaning:
        return outcome.state, ""  # "exit code 1 (no match)": no error to carry
    if outcome.state == FAILED and not outcome.detail.startswith("exit code"):
        return outcome.state, outcome.detail
    return outcome.state, outcome.tail


def _paths(args: dict[str, Any]) -> list[str]:
    out: list[str] = []
    for key, value in args.items():
        if key not in PATH_ARGS:
            continue
        if isinstance(value, str):
            if _ALNUM.search(value):
                out.append(value.strip())
        elif isinstance(value, list):
            out.extend(v.strip() for v in value if isinstance(v, str) and _ALNUM.search(v))
    return out


def _user_text(content: dict[str, Any]) -> Iterator[str]:
    for part in content.get("parts") or []:
        if not isinstance(part, dict) or part.get("thought") or "functionResponse" in part:
            continue
        text = part.get("text")
        if isinstance(text, str) and not written_by_gemini_cli(text):
            yield text.split("--- Content from referenced files ---")[0][:20_000]


# A line a program printed, pasted into a prompt: no rule of the user's, whatever words it holds.
_PRINTED = re.compile(r"\s*(?:\*\* |[\w.]*(?:Error|Exception)\b:"
                      r"|(?:ERROR|WARN|WARNING|FATAL|CRITICAL|INFO|DEBUG)\b[:\]]|(?:error|warning)(?:\[\w+\])?:"
                      r"|npm (?:ERR|WARN)!|E {2,}|Traceback \(most recent call last\))")


def rules_in(text: str) -> list[str]:
    found: list[str] = []
    if not (_TRIGGERS.intersection(_PLAIN_WORD.findall(text.lower())) or _CJK.search(text)):
        return found  # no word a rule starts with: no rule (a cheap test before the full one)
    text = "\n".join(line for line in text.split("\n") if not _PRINTED.match(line))
    for piece in re.split(r"\n+|(?<=[.!?])\s+|(?<=[。！？])|;\s", text):
        piece = piece.strip()
        if len(piece) < 8 or len(piece) > 300 or piece.endswith(("?", "？", ":")):
            continue
        if piece.startswith(("** ", "[", "│", "|", ">", "#", "$")):
            continue  # pasted output, a quote, a heading, a prompt line
        if _RULES.search(piece) and len(_LETTER.findall(piece)) * 2 >= len(piece):
            found.append(piece)
    return found


@dataclass(slots=True)
class _Call:
    turn: int
    name: str
    args: dict[str, Any]
    result_turn: int | None = None
    state: str = "unknown"
    error: str = ""
    # read once from ``args`` (plain fields: functools.cached_property takes a lock on every read in 3.11)
    command: str = field(init=False)
    paths: list[str] = field(init=False)

    def __post_init__(self) -> None:
        value = self.args.get("command")
        self.command = value if isinstance(value, str) and (self.name in SHELL_NAMES or "command" in self.args) \
            else ""
        self.paths = _paths(self.args) if self.name in TOOL_OPS else []

    @property
    def identity(self) -> str:
        """What makes two calls the same action: the same tool with the same arguments, the whole
        command for a shell (another edit of the file, or another script, is another action), in the same
        folder; the ``description`` the model writes beside each run is no part of what ran."""
        if self.command:
            folder = next((v.strip() for v in (self.args.get("dir_path"), self.args.get("directory"))
                           if isinstance(v, str) and v.strip()), "")
            return f"{self.name} {json.dumps([self.command.strip(), folder], ensure_ascii=False)}"
        return f"{self.name} {json.dumps(self.args, sort_keys=True, ensure_ascii=False, default=str)}"


def _snapshot_lines(text: str) -> list[str]:
    start = text.rfind("<state_snapshot>")
    body = text[start + len("<state_snapshot>"):].replace("</state_snapshot>", "")
    body = re.sub(r"<!--(?:(?!</?[A-Za-z_][\w.-]*\s*>).)*?-->", "", body, flags=re.S)  # none over a tag
    out = []
    for match in re.finditer(r"<([A-Za-z_][\w.-]*)\s*>(.*?)</\1\s*>", body, re.S):
        for line in match.group(2).split("\n"):
            line = line.strip().lstrip("-*•").strip()
            if line and line.lower() not in ("none", "(none)", "n/a"):
                out.append(line)
    return out


def extract(contents: Sequence[dict[str, Any]], statuses: ToolStatuses = NO_STATUSES,
            reporter: Reporter = SILENT) -> Ground:
    """The facts of ``contents`` (the history that is summarised), in order of first appearance."""
    total = len(contents)
    calls: list[_Call] = []
    pairing: Pairing[_Call] = Pairing()
    prompts: list[tuple[int, str]] = []
    previous: tuple[int, str] | None = None
    for turn, content in enumerate(contents):
        if not turn % TICK:
            reporter.check()
            reporter.report(STAGE, turn, total)
        parts = content.get("parts")
        if not isinstance(parts, list):
            continue
        if content.get("role") == "model":
            for part in parts:
                call = part.get("functionCall") if isinstance(part, dict) else None
                if isinstance(call, dict):
                    args = call.get("args")
                    item = _Call(turn, str(call.get("name") or ""), args if isinstance(args, dict) else {})
                    calls.append(item)
                    pairing.call(pair_key(call), item)
                    ident = call.get("id")
                    recorded = statuses.call_status(turn, ident) if isinstance(ident, str) and ident else None
                    if recorded is not None:  # all there is of a call that never got a result
                        item.state, item.error = outcome_class(item.name, None, recorded)
            continue
        answered = False
        for number, part in enumerate(parts):
            response = part.get("functionResponse") if isinstance(part, dict) else None
            if not isinstance(response, dict):
                continue
            answered = True
            found = pairing.answer(pair_key(response))
            if found is None or not found[1]:
                continue  # no call of its own, or a repeat of a result already read (0.61 records each twice)
            item = found[0]
            item.result_turn = turn
            status = statuses.result_status(turn, number, item.turn, response.get("id"))
            item.state, item.error = outcome_class(item.name, response.get("response"), status,
                                                   statuses.display(turn, number), item.command)
        if answered:
            continue
        following = contents[turn + 1] if turn + 1 < total else None
        for text in _user_text(content):
            if is_earlier_snapshot(text, following):
                previous = (turn, text)
            elif text.strip():
                prompts.append((turn, text.strip()))
    return _facts(calls, prompts, previous)


_SHELL_TARGET = re.compile(r"(?:\d?>>?|\btee(?:\s+-a)?|\s-o|\s--output(?:-document)?[=\s]|\s-O)\s*([^\s;&|<>'\"()]+)")
_SHELL_FILE_PROGRAMS = ("cp", "mv", "rm", "touch")


def shell_paths(command: str) -> list[str]:
    """The files a shell command names as its output or its operands (``> f``, ``tee f``, ``-o f``,
    ``cp a b``, ``mv a b``, ``rm f``, ``touch f``), as written; read with rules of this module's own."""
    out = [m.group(1) for m in _SHELL_TARGET.finditer(command.split("\n", 1)[0]) if not m.group(1).startswith(
        ("&", "/dev/", "-", "~"))]
    for piece in re.split(r"&&|\|\||[;|\n]", command.split("<<", 1)[0]):
        words = piece.split()
        if words and words[0] in _SHELL_FILE_PROGRAMS:
            out.extend(w for w in words[1:] if not w.startswith(("-", "~")) and not any(c in w for c in "*?$<>'\""))
    return out


def _facts(calls: list[_Call], prompts: list[tuple[int, str]], previous: tuple[int, str] | None) -> Ground:
    ground = Ground()
    found: dict[tuple[str, str, str], list[int]] = {}
    details: dict[tuple[str, str, str], tuple[str, str, str]] = {}

    def note(kind: str, key: str, state: str, turns: Sequence[int], value: str, extra: str = "") -> None:
        slot = (kind, key.lower() if kind != "path" else key, state)
        found.setdefault(slot, []).extend(turns)
        details.setdefault(slot, (value, key, extra))

    commands: list[str] = []
    for call in calls:
        turns = [call.turn] if call.result_turn is None else [call.turn, call.result_turn]
        op = TOOL_OPS.get(call.name)
        for path in call.paths:
            ground.ops_by_path.setdefault(path, set()).add(op or "")
            note("path", path, op or "", turns, f"{path} ({op})")
        if call.command:
            for path in shell_paths(call.command):  # named, so a line about it is read as about a path
                ground.ops_by_path.setdefault(path, set()).add("shell")
            line = first_command_line(call.command)
            ground.outcomes_by_command.setdefault(line.lower(), set()).add(call.state)
            ground.programs.add(line.split(" ", 1)[0].lower())
            commands.append(call.command.lower())
            shown = "outcome not recorded" if call.state == "unknown" else call.state  # the snapshot's own words
            note("command", line, call.state, turns, f"`{line}` -> {shown}", commit_text(call.command))
    ground.shell_text = "\n".join(commands)
    failed = any(c.state == "failed" for c in calls)
    last_ok = {c.identity: n for n, c in enumerate(calls) if c.state == "ok"} if failed else {}
    for n, call in enumerate(calls):
        if call.state != "failed":
            continue
        message = " ".join(call.error.split())[:200]
        if message == "(empty)":
            message = ""
        if message and last_ok.get(call.identity, -1) < n:
            turns = [call.turn] if call.result_turn is None else [call.turn, call.result_turn]
            note("error", message, "", turns, message)
    for turn, text in prompts:
        for rule in rules_in(text):
            note("constraint", rule, "", [turn], rule)
    if prompts:
        turn, text = prompts[-1]
        head = re.split(r"(?<=[.!?])\s", " ".join(text.split()), maxsplit=1)[0][:200]
        note("step", head, "", [turn], head)
    plan = next((c for c in reversed(calls) if c.name == "write_todos"), None)
    todos = plan.args.get("todos") if plan is not None else None
    for todo in todos if isinstance(todos, list) else []:
        if isinstance(todo, dict) and todo.get("status") == "in_progress" and isinstance(todo.get("description"), str):
            note("step", todo["description"], "", [plan.turn] if plan else [], todo["description"])
    if previous is not None:
        ground.previous_text = previous[1]
        for line in _snapshot_lines(previous[1]):
            base = _PATH_BASE.match(line)
            if base is not None:  # how to read its paths, not something that happened
                ground.previous_base = base.group(1)
                continue
            note("previous", line, "", [previous[0]], line)
    for (kind, _key, state), turns in found.items():
        value, key, extra = details[(kind, _key, state)]
        ordered = tuple(sorted(set(turns)))
        ground.facts.append(Fact(kind, value, ordered[0], ordered, key, state, extra))
    ground.facts.sort(key=lambda f: (f.turn, KINDS.index(f.kind)))
    return ground
