"""The candidate lines of the offline snapshot, each with its section, priority and turns.

``build_items`` turns a ``digest.Digest`` into ``Item``s.  Texts are the
history's own words: the user's quoted, commands and paths verbatim (long
commands cut after their first line's first 200 characters, a commit's
message always kept), outcomes as ``outcomes.Outcome.text`` words, error
texts quoted.  The priorities decide what a short budget drops first (see
the ``offline`` module doc).
"""

from __future__ import annotations

import json
import posixpath
import re
import shlex
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from inspector.compaction import snapshot as snap
from inspector.compaction.outcomes import CANCELLED, FAILED, NOT_AS_ASKED, OK, TERMINATED, UNKNOWN, Outcome
from inspector.compaction.prompts import SECTIONS
from inspector.compaction.summarisers.digest import Call, Digest, Prompt
from inspector.format import plural

COMMAND_CHARS = 200
QUOTE_CHARS = 240
_TAGS = re.compile(r"</?\s*(state_snapshot|scratchpad|" + "|".join(SECTIONS) + r")\s*>", re.I)
_SENTENCES = re.compile(r"(?<=[.!?])\s+|(?<=[。！？])|\n+|;\s+")
_RULE = re.compile(
    r"\b(must|mustn't|must not|never|always|don't|do not|only|avoid|make sure|ensure|keep|prefer|without|"
    r"should|shouldn't|need to|needs to|has to|have to|at most|at least|required|no more than|"
    r"muss|nie|niemals|immer|nur|keine|jamais|toujours|ne pas|doit|uniquement|nunca|siempre|debe|solo|"
    r"mai|sempre|deve|somente)\b|^no\s|必须|不要|不能|只能|必ず|しないで|禁止",
    re.I,
)
# A text can hold a rule only if it has one of the words ``_RULE`` starts with (or its CJK forms).
_RULE_WORD_TEXT = """must mustn never always don do only avoid make ensure keep prefer without should shouldn
    need needs has have at required no muss nie niemals immer nur keine jamais toujours ne doit uniquement nunca
    siempre debe solo mai sempre deve somente"""
_RULE_WORDS = frozenset(_RULE_WORD_TEXT.split())
_RULE_CJK = re.compile("必须|不要|不能|只能|必ず|しないで|禁止")
_WORD = re.compile(r"\w+")
_SENTENCE_END = re.compile(r"(?<=[.!?。！？])\s+")
_BREAKS = re.compile(r"\r\n?|\n")
_NOT_PROSE = re.compile(r"^\s*(\*\*|[│|┃>#$]|\[\d|\d{4}-\d\d-\d\d|at\s+\S+\()")
_STOP_TEXT = """a an the and or but if then of to in on at by for with from into as is are was were be been it
    its this that these those there here i me my we our you your they them their not no do does did have has had
    can could will would should may might must never always please also just than more most any all each every
    some such very so too use using when where which who what why how about after before again one two focus
    keep make sure only on"""
_STOP = frozenset(_STOP_TEXT.split())
# Words with which a person takes back or changes what they asked before.
_TAKE_BACK = re.compile(r"\b(actually|scratch that|never ?mind|forget|ignore|no longer|instead|don'?t|do not|"
                        r"stop|cancel|revert|undo)\b", re.I)


def _content_words(text: str) -> set[str]:
    return {w for w in (m.lower() for m in _WORD.findall(text[:2000])) if len(w) >= 4 and w not in _STOP}

# Tiers: higher stays longer when the budget is short.
GOAL, LATEST, RULE, ROOT = 1000, 950, 910, 990
PREVIOUS, PREVIOUS_RULE, PREVIOUS_STATE = 900, 920, 640
TIME_BOUND = frozenset({"task_state", "recent_actions"})  # sections that say where the work stood
AS_OF_PREVIOUS = "As the earlier snapshot had it:"
PLAN, PENDING, MEMORY, FAILURE = 860, 850, 820, 800
CHANGED, COMMIT, COMMAND_FAILED, COMMAND_OK = 780, 760, 700, 650
OTHER_TOOL, READ_PATH, WEB = 560, 600, 500
EARLIER, FIXED, AGENT = 400, 300, 200
FOCUS_BONUS, FOCUS_CAP = 250, 940

# What each item states, in the words the budget report uses (``offline.fit`` drops the lowest tiers first).
K_GOAL, K_LATEST, K_RULE, K_ROOT, K_PREVIOUS = "goal", "latest request", "constraint", "path base", "earlier snapshot"
K_PLAN, K_PENDING, K_MEMORY, K_FAILURE = "plan", "call without result", "memory", "failure"
K_CHANGED, K_COMMIT, K_COMMAND_FAILED, K_COMMAND = "changed path", "commit", "failed command", "command"
K_OTHER_TOOL, K_READ_PATH, K_WEB = "other tool", "read/listed/searched path", "web lookup"
K_EARLIER, K_AGENT, K_FIXED = "earlier request", "agent's last words", "fixed failure"


@dataclass(frozen=True)
class Item:
    section: str
    priority: int
    seq: int  # reading order within the section
    text: str
    turns: tuple[int, ...]
    group: str = ""  # items of one group share a line: "<group>: a; b"
    focused: bool = False
    kind: str = ""  # what it states (``K_*``)
    relative: bool = False  # names a path relative to the "path base" line: useless without it


def neutral(text: str) -> str:
    """Text made one line of the snapshot: the snapshot's own tags neutralised and each line break
    ("\n", "\r", which end a line where the snapshot is read: Gemini CLI splits at "\n") one space, so
    that no text from the history can end a line or a section and begin one of its own.  Anything
    else (a path's other odd characters) is kept as it was."""
    text = _TAGS.sub(lambda m: m.group().replace("<", "(").replace(">", ")"), text)
    return _BREAKS.sub(" ", text).strip()


def clean(text: str, limit: int = QUOTE_CHARS) -> str:
    """One line of history text, safe inside the snapshot (``neutral``), its spacing made plain, cut at
    ``limit``."""
    text = " ".join(neutral(text).split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def quote(text: str, limit: int = QUOTE_CHARS) -> str:
    return '"' + clean(text, limit).replace('"', "'") + '"'


def lead(text: str, limit: int = QUOTE_CHARS) -> str:
    """The first one or two sentences of a prompt, quoted; the whole prompt (up to ``limit``) where
    a later sentence may take them back ("... Actually, leave it alone"): a first sentence alone
    would then say the opposite of what was asked."""
    flat = " ".join(text.split())
    pieces = _SENTENCE_END.split(flat, maxsplit=2)
    count = 1 if len(pieces[0]) >= 40 or len(pieces) == 1 else 2
    rest = " ".join(pieces[count:])
    return quote(flat if _TAKE_BACK.search(rest) else " ".join(pieces[:count]), limit)


def rule_sentences(text: str) -> list[str]:
    out: list[str] = []
    if _RULE_WORDS.isdisjoint(_WORD.findall(text.lower())) and not _RULE_CJK.search(text):
        return out  # none of the words a rule needs: skip the sentence-by-sentence test
    for piece in _SENTENCES.split(text):
        sentence = piece.strip()
        if not 8 <= len(sentence) <= 300 or sentence.endswith(("?", "？", ":")) or _NOT_PROSE.match(sentence):
            continue
        if _RULE.search(sentence) and sum(ch.isalpha() for ch in sentence) * 2 >= len(sentence):
            out.append(sentence)
    return out


def focus_words(focus: str | None) -> set[str]:
    if not focus:
        return set()
    return {w.lower() for w in re.findall(r"[\w./-]{3,}", focus) if w.lower() not in _STOP}


def command_line(command: str) -> str:
    """What identifies a command: its first line's first 200 characters, a commit's message kept whole."""
    lines = snap.text_lines(command.strip())
    head = clean(lines[0], COMMAND_CHARS)
    extra = len(lines) - 1
    if extra:
        head += f" (+{extra:,} more line{'s' if extra != 1 else ''})"
    return head


def commit_message(command: str) -> str | None:
    """The ``-m`` message(s) of a ``git commit`` command, if it has any."""
    if "commit" not in command or "git" not in command:
        return None
    try:
        words = shlex.split(command, posix=True)
    except ValueError:
        return None
    messages = []
    for i, word in enumerate(words[:-1]):
        if word in ("-m", "--message") or (word.startswith("-") and not word.startswith("--") and word.endswith("m")
                                          and len(word) <= 4):
            messages.append(words[i + 1])
        elif word.startswith("--message="):
            messages.append(word.split("=", 1)[1])
    return " / ".join(m.strip() for m in messages if m.strip()) or None


class _Items:
    def __init__(self, focus: str | None) -> None:
        self.items: list[Item] = []
        self.focus = focus_words(focus)
        self._seen: set[tuple[str, str, str]] = set()

    def add(self, section: str, kind: str, priority: int, turn: int, text: str, turns: Iterable[int],
            group: str = "", *, relative: bool = False) -> None:
        text = neutral(text)  # every piece of history text in it, whatever made the line
        key = (section, group, snap.normalise_line(text))
        if not text or key in self._seen:
            return
        self._seen.add(key)
        low = text.lower()
        focused = bool(self.focus) and any(w in low for w in self.focus)
        if focused:
            priority = max(priority, min(priority + FOCUS_BONUS, FOCUS_CAP))
        self.items.append(Item(section, priority, turn * 64 + len(self.items) % 64, text,
                               tuple(sorted(set(turns))), group, focused, kind, relative))


def build_items(digest: Digest, focus: str | None = None) -> list[Item]:
    out = _Items(focus)
    _previous(out, digest)
    _prompts(out, digest)
    root = _root(digest.calls)
    if root:
        first = next(c.turn for c in digest.calls if any(p.startswith(root + "/") for p in c.paths))
        out.add("file_system_state", K_ROOT, ROOT, -1, f"Paths below are relative to `{root}`", [first])
    _commands(out, digest.calls)
    _paths(out, digest.calls, root)
    _failures(out, digest.calls, root)
    _others(out, digest, root)
    return out.items


def _previous(out: _Items, digest: Digest) -> None:
    previous, turn = digest.previous, digest.previous_turn
    if previous is None or turn is None:
        return
    # What the earlier snapshot said of the work's state held when it was written.  Where later turns
    # went on, they may have done its to-dos: its state is carried as its word, below what they say.
    moved_on = any(c.turn > turn for c in digest.calls) or any(p.turn > turn for p in digest.prompts)
    for section in previous.sections:
        known = section.name in SECTIONS
        for line in section.lines:
            text = line.lstrip("-*• ").strip()
            if snap.normalise_line(text) in ("none", "(none)", ""):
                continue
            if not known:
                out.add("key_knowledge", K_PREVIOUS, PREVIOUS, turn, clean(f"{section.name}: {text}"), [turn])
                continue
            if moved_on and section.name in TIME_BOUND:
                out.add(section.name, K_PREVIOUS, PREVIOUS_STATE, turn, clean(f"{AS_OF_PREVIOUS} {text}", 400), [turn])
                continue
            priority = {"overall_goal": GOAL, "active_constraints": PREVIOUS_RULE}.get(section.name, PREVIOUS)
            out.add(section.name, K_PREVIOUS, priority, turn, clean(text, 400), [turn])


def _prompts(out: _Items, digest: Digest) -> None:
    prompts = digest.prompts
    if not prompts:
        return
    if digest.previous is None or not digest.previous.lines("overall_goal"):
        goal = next((p for p in prompts if len(p.text.split()) >= 4), prompts[0])
        out.add("overall_goal", K_GOAL, GOAL, goal.turn, f"The user asked: {lead(goal.text)}", [goal.turn])
    else:
        goal = None
    takers = [(p, _content_words(p.text)) for p in prompts if _TAKE_BACK.search(p.text)]
    for prompt in prompts:
        for sentence in rule_sentences(prompt.text):
            text, turns = quote(sentence, 300), [prompt.turn]
            words = _content_words(sentence)
            later = next((p for p, said in reversed(takers) if p.turn > prompt.turn and words & said), None)
            if later is not None:  # the user came back to it: their later words, not a guess at what they meant
                text += f"; a later request (turn {later.turn:,}) says: {lead(later.text, 200)}"
                turns.append(later.turn)
            out.add("active_constraints", K_RULE, RULE, prompt.turn, text, turns)
    latest = prompts[-1]
    out.add("task_state", K_LATEST, LATEST, latest.turn, f"Latest request: {lead(latest.text, 300)}", [latest.turn])
    for prompt in prompts[:-1]:
        if prompt is not goal:
            out.add("task_state", K_EARLIER, EARLIER + min(49, prompt.turn // 64), prompt.turn,
                    f"Earlier request: {lead(prompt.text, 160)}", [prompt.turn])


def _display(path: str, root: str | None) -> str:
    if root and path.startswith(root + "/"):
        return path[len(root) + 1:]
    return path


def _root(calls: list[Call]) -> str | None:
    """The folder above the common folder of the absolute paths (so every shown path keeps two parts)."""
    dirs = {posixpath.dirname(p) for c in calls for p in c.paths if p.startswith("/")}
    if len(dirs) < 2:
        return None
    common = posixpath.commonpath(sorted(dirs))
    parent = posixpath.dirname(common)
    return parent if parent.count("/") >= 2 else None


def _commands(out: _Items, calls: list[Call]) -> None:
    runs: dict[str, list[Call]] = {}  # the runs of one command, the whole command alike
    for call in calls:
        command = call.command() if call.kind == "shell" else None
        if command:
            runs.setdefault(command, []).append(call)
    lines = {command: command_line(command) for command in runs}
    shown = Counter(lines.values())
    for command, group in runs.items():
        line = lines[command]
        if shown[line] > 1:  # other commands begin alike (scripts fed to one interpreter): say which
            line += f" (the one first run in turn {group[0].turn:,})"
        last = group[-1]
        turns = [t for c in group for t in c.turns]
        states = [c.outcome for c in group]
        bad = any(o.state in NOT_AS_ASKED for o in states)
        out.add("recent_actions", K_COMMAND_FAILED if bad else K_COMMAND, COMMAND_FAILED if bad else COMMAND_OK,
                last.turn,
                f"`{line}` -> {_outcomes(states)}", turns)
        for call in group:
            message = commit_message(call.command() or "")
            if message:
                out.add("artifact_trail", K_COMMIT, COMMIT, call.turn,
                        f"Commit {quote(message, 300)} (its command ended {call.outcome.text()})", call.turns)


def _outcomes(states: list[Outcome]) -> str:
    if len(states) == 1:
        return states[0].text()
    if len({s.text() for s in states}) == 1:
        return f"{states[0].text()} (all {len(states):,} runs)"
    counts: dict[str, int] = {}
    for state in states:
        counts[state.state] = counts.get(state.state, 0) + 1
    words = {OK: "ok", FAILED: "failed", CANCELLED: "cancelled", TERMINATED: "terminated by a signal",
             UNKNOWN: "not recorded"}
    tally = ", ".join(f"{n:,} {words.get(s, s)}" for s, n in counts.items())
    return f"ran {len(states):,} times: {tally}; last {states[-1].text()}"


_OPS = {"read": ("file_system_state", "READ"), "list": ("file_system_state", "LISTED"),
        "glob": ("file_system_state", "SEARCHED"), "search": ("file_system_state", "SEARCHED"),
        "write": ("artifact_trail", "WROTE"), "edit": ("artifact_trail", "EDITED")}


def _paths(out: _Items, calls: list[Call], root: str | None) -> None:
    touched: dict[tuple[str, str], list[Call]] = {}
    for call in calls:
        if (call.kind not in _OPS or call.outcome.state in NOT_AS_ASKED
                or (call.result_turn is None and call.outcome.state != OK)):
            continue  # a failed call is stated with its failure; one with no result nor status, as pending
        section, op = _OPS[call.kind]
        if call.outcome.created:
            op = "CREATED"
        for path in call.paths:
            touched.setdefault((op, path), []).append(call)
    for (op, path), group in touched.items():
        section = "artifact_trail" if op in ("WROTE", "EDITED", "CREATED") else "file_system_state"
        times = f" ({len(group):,} times)" if len(group) > 1 and section == "artifact_trail" else ""
        changed = section == "artifact_trail"
        shown = _display(path, root)
        out.add(section, K_CHANGED if changed else K_READ_PATH, CHANGED if changed else READ_PATH, group[-1].turn,
                f"`{shown}`{times}", [t for c in group for t in c.turns], group=op, relative=shown != path)


_MAIN_ARGS = ("query", "url", "pattern", "prompt", "fact")


def _main_arg(call: Call) -> str:
    return next((str(call.args[k]) for k in _MAIN_ARGS if isinstance(call.args.get(k), str)), "")


def _identity(call: Call) -> str:
    """The same call: the same tool with the same arguments (a shell command whole)."""
    return f"{call.name} {json.dumps(call.args, sort_keys=True, ensure_ascii=False, default=str)}"


def _on_paths(call: Call) -> str | None:
    """The same tool on the same paths (another edit of a file), where the call names paths."""
    return f"{call.name} {json.dumps(call.paths)}" if call.paths and call.kind != "shell" else None


def _subject(call: Call, root: str | None) -> tuple[str, bool]:
    """What a call did, in a few words, and whether that names a path relative to ``root``."""
    command = call.command() if call.kind == "shell" else None
    if command:
        return f"`{command_line(command)}`", False
    paths = call.paths
    if paths:
        shown = _display(paths[0], root)
        return f"`{call.name}` on `{shown}`", shown != paths[0]
    arg = _main_arg(call)
    return (f"`{call.name}` {quote(arg, 120)}" if arg else f"`{call.name}`"), False


def _failures(out: _Items, calls: list[Call], root: str | None) -> None:
    if not any(call.outcome.state in NOT_AS_ASKED for call in calls):
        return
    last_ok: dict[str, int] = {}
    for n, call in enumerate(calls):
        if call.outcome.state == OK:
            last_ok[_identity(call)] = n
            target = _on_paths(call)
            if target is not None:
                last_ok[target] = n
    for n, call in enumerate(calls):
        outcome = call.outcome
        if outcome.state not in NOT_AS_ASKED:
            continue
        again = last_ok.get(_identity(call), -1) > n
        target = _on_paths(call)
        other = not again and target is not None and last_ok.get(target, -1) > n
        fixed = again or other
        subject, relative = _subject(call, root)
        text = f"{subject} {outcome.text()}"
        if outcome.tail:
            text += f"; its output ended {quote(outcome.tail, 160)}"
        if again:
            text += "; a later run of it (the same arguments) succeeded"
        elif other:
            text += f"; a later `{call.name}` on the same {'path' if len(call.paths) == 1 else 'paths'} succeeded"
        out.add("key_knowledge", K_FIXED if fixed else K_FAILURE, FIXED if fixed else FAILURE, call.turn, text,
                call.turns, relative=relative)


def _others(out: _Items, digest: Digest, root: str | None) -> None:
    for call in digest.calls:
        args = call.args
        if call.kind == "memory" and isinstance(args.get("fact"), str):
            out.add("key_knowledge", K_MEMORY, MEMORY, call.turn,
                    f"Saved to memory: {quote(args['fact'])} -> {call.outcome.text()}", call.turns)
        elif call.kind == "web_search" and isinstance(args.get("query"), str):
            out.add("key_knowledge", K_WEB, WEB, call.turn,
                    f"Searched the web for {quote(args['query'], 160)} -> {call.outcome.text()}", call.turns)
        elif call.kind == "fetch":
            target = args.get("url") if isinstance(args.get("url"), str) else args.get("prompt")
            if isinstance(target, str):
                out.add("key_knowledge", K_WEB, WEB, call.turn,
                        f"Fetched {quote(target, 160)} -> {call.outcome.text()}", call.turns)
        elif call.kind == "other":
            subject, relative = _subject(call, root)
            out.add("recent_actions", K_OTHER_TOOL, OTHER_TOOL, call.turn, f"{subject} -> {call.outcome.text()}",
                    call.turns, relative=relative)
    if digest.todos is not None:
        _plan(out, digest.todos)
    pending = [c for c in digest.calls if c.result_turn is None and c.outcome.state == UNKNOWN]
    if pending:
        call = pending[-1]
        subject, relative = _subject(call, root)
        out.add("task_state", K_PENDING, PENDING, call.turn, f"{subject} was called and has no result yet",
                call.turns, relative=relative)
    if digest.agent_last is not None:
        last: Prompt = digest.agent_last
        later = sum(1 for c in digest.calls if c.turn > last.turn)  # model turns of tool calls only, no text
        said = ("The agent's last message began" if not later else
                f"The agent's last message with text, before {plural(later, 'more tool call')}, began")
        out.add("recent_actions", K_AGENT, AGENT, last.turn, f"{said}: {lead(last.text, 200)}", [last.turn])


def _plan(out: _Items, call: Call) -> None:
    todos = call.args.get("todos")
    for i, todo in enumerate(todos if isinstance(todos, list) else []):
        if isinstance(todo, dict) and isinstance(todo.get("description"), str):
            status = str(todo.get("status") or "pending")
            out.add("task_state", K_PLAN, PLAN - min(i, 50), call.turn,
                    f"Plan (write_todos): [{clean(status, 20)}] {clean(todo['description'], 160)}", call.turns)

