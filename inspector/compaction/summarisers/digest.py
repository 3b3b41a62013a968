"""One pass over the summarised history: what the user asked, what the agent did, how each call ended.

``collect`` reads each turn once (linear in the history's size, with bounded
work on any one text) and keeps what the offline summariser may state, each
with the turn it comes from:

* the user's prompts (their own words: not tool results, not the context
  Gemini CLI injects, not the content of ``@``-referenced files it appends);
* every tool call with its arguments and its outcome as Gemini CLI recorded
  it (``compaction.outcomes``), paired with its result by ``pairs.Pairing``;
* the newest earlier ``<state_snapshot>`` (``prompts.is_earlier_snapshot``: one a compaction
  wrote, not a prompt that mentions the tag or an ``@``-file that holds one);
* the agent's last visible words, its last words before each next prompt (its answer to a
  request), and the sentences in which it says how it reads what the user asked
  (``words.reading_sentences``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from inspector.compaction import snapshot as snap
from inspector.compaction.outcomes import OK, UNKNOWN, Outcome, read_outcome, result_text, tool_kind, with_exit_meaning
from inspector.compaction.pairs import Pairing
from inspector.compaction.prompts import is_earlier_snapshot, is_request_text, written_by_gemini_cli
from inspector.compaction.statuses import NO_STATUSES, ToolStatuses, workspace_of
from inspector.compaction.summarisers.findings import error_line, reason_sentences, result_lines, shows_content
from inspector.compaction.summarisers.words import reading_sentences
from inspector.session.figures import pair_key

REFERENCED_FILES = "--- Content from referenced files ---"  # Gemini CLI appends @file contents after this
REASONS_HELD = 24  # the newest of the agent's stated reasons kept while reading
READINGS_HELD = 64  # the newest of the agent's sentences saying how it reads the user's words
TEXT_LIMIT = 20_000  # characters of one prompt read for goals and rules
PATH_KEYS = ("file_path", "absolute_path", "path", "dir_path", "directory", "notebook_path")
PATH_LIST_KEYS = ("paths", "file_paths", "absolute_paths")
_PATH_KEY_SET = frozenset(PATH_KEYS)
_PATH_ARGS = frozenset(PATH_KEYS + PATH_LIST_KEYS)


NOT_RECORDED = Outcome(UNKNOWN)


@dataclass(slots=True)
class Call:
    turn: int  # the model turn holding the functionCall
    name: str
    kind: str
    args: dict[str, Any]
    outcome: Outcome = NOT_RECORDED
    result_turn: int | None = None  # the turn holding its result (None: no result recorded)
    findings: tuple[str, ...] = ()  # a shell command's output lines that carry a result (``findings``)
    said: str = ""  # a failed shell command's output line that says what went wrong
    opening: str = ""  # a read file's first line of text (a task file's title says what the task is)
    paths: list[str] = field(init=False)  # read once (functools.cached_property locks on every read in 3.11)

    def __post_init__(self) -> None:
        self.paths = self._paths()

    @property
    def turns(self) -> tuple[int, ...]:
        return (self.turn,) if self.result_turn is None else (self.turn, self.result_turn)

    def _paths(self) -> list[str]:
        out: list[str] = []
        present = _PATH_ARGS.intersection(self.args)
        if not present:
            return out
        if len(present) == 1:  # the usual case: one path argument
            key = next(iter(present))
            value = self.args[key]
            if isinstance(value, str) and key in _PATH_KEY_SET:
                return [value.strip()] if value.strip() else out
            if isinstance(value, list) and key not in _PATH_KEY_SET:
                return [v.strip() for v in value if isinstance(v, str) and v.strip()]
            return out
        for key in PATH_KEYS:
            value = self.args.get(key)
            if isinstance(value, str) and value.strip():
                out.append(value.strip())
                break
        for key in PATH_LIST_KEYS:
            value = self.args.get(key)
            if isinstance(value, list):
                out.extend(v.strip() for v in value if isinstance(v, str) and v.strip())
        return out

    def command(self) -> str | None:
        value = self.args.get("command")
        return value.strip() if isinstance(value, str) and value.strip() else None


@dataclass(frozen=True)
class Prompt:
    turn: int
    text: str


@dataclass
class Digest:
    prompts: list[Prompt] = field(default_factory=list)
    calls: list[Call] = field(default_factory=list)
    previous: snap.Snapshot | None = None
    previous_turn: int | None = None
    agent_last: Prompt | None = None
    reasons: list[Prompt] = field(default_factory=list)  # the agent's sentences stating a reason or decision
    readings: list[Prompt] = field(default_factory=list)  # the agent's sentences saying how it reads the user
    answers: dict[int, Prompt] = field(default_factory=dict)  # a prompt's turn -> the agent's last words before
    # the next prompt (the last prompt's: ``agent_last``, when it is later)
    turns: int = 0
    workspace: str | None = None  # the one workspace directory Gemini CLI's session context names


def user_words(text: str) -> str:
    """A prompt without the file contents Gemini CLI appended to it for ``@path`` references."""
    cut = text.find(REFERENCED_FILES)
    return (text if cut < 0 else text[:cut])[:TEXT_LIMIT].strip()


def _visible_texts(parts: list[Any]) -> list[str]:
    out = []
    for part in parts:
        if isinstance(part, dict) and not part.get("thought"):
            text = part.get("text")
            if isinstance(text, str) and text.strip() and not written_by_gemini_cli(text):
                out.append(text)
    return out


def collect(
    history: Sequence[dict[str, Any]],
    statuses: ToolStatuses = NO_STATUSES,
    tick: Callable[[int], None] | None = None,
) -> Digest:
    """Everything the digest may say about ``history``; ``tick(i)`` is called every 1,024 turns."""
    digest = Digest(turns=len(history), workspace=statuses.workspace)
    pairing: Pairing[Call] = Pairing()
    for index, content in enumerate(history):
        if tick is not None and not index & 1023:
            tick(index)
        parts = content.get("parts")
        if not isinstance(parts, list):
            continue
        if content.get("role") == "model":
            _model_turn(digest, index, parts, pairing, statuses)
            continue
        answered = False
        for number, part in enumerate(parts):
            response = part.get("functionResponse") if isinstance(part, dict) else None
            if isinstance(response, dict):
                answered = True
                _answer(index, number, response, statuses, pairing)
        if not answered:
            _user_turn(digest, index, parts, history[index + 1] if index + 1 < len(history) else None)
    return digest


def _model_turn(digest: Digest, index: int, parts: list[Any], pairing: Pairing[Call],
                statuses: ToolStatuses) -> None:
    last: str | None = None
    for part in parts:
        if not isinstance(part, dict):
            continue
        call = part.get("functionCall")
        if isinstance(call, dict):
            name = str(call.get("name") or "tool")
            args = call.get("args")
            if not isinstance(args, dict):
                args = {}
            kind = tool_kind(name, args)
            ident = call.get("id")
            status = statuses.call_status(index, ident) if isinstance(ident, str) else None
            # until a result says more, the status its record kept is all Gemini CLI wrote of it
            item = Call(index, name, kind, args, read_outcome(kind, None, status, name) if status else NOT_RECORDED)
            digest.calls.append(item)
            pairing.call(pair_key(call), item)
        text = part.get("text")
        if (isinstance(text, str) and not part.get("thought") and text.strip()
                and not written_by_gemini_cli(text)):
            last = text
    if last is not None:
        digest.agent_last = Prompt(index, last[:TEXT_LIMIT])
        digest.reasons.extend(Prompt(index, s) for s in reason_sentences(last))
        del digest.reasons[:-REASONS_HELD]
        digest.readings.extend(Prompt(index, s) for s in reading_sentences(last))
        del digest.readings[:-READINGS_HELD]


def _answer(index: int, number: int, response: dict[str, Any], statuses: ToolStatuses,
            pairing: Pairing[Call]) -> None:
    found = pairing.answer(pair_key(response))
    if found is None or not found[1]:
        return  # no call of its own, or a repeat of a result already read
    target = found[0]
    target.result_turn = index
    # a result recorded apart from its call (in a user message) takes the status the call's record kept
    status = statuses.result_status(index, number, target.turn, response.get("id"))
    outcome = read_outcome(target.kind, response.get("response"), status, target.name,
                           statuses.display(index, number))
    target.outcome = with_exit_meaning(outcome, target.command()) if target.kind == "shell" else outcome
    if target.kind == "read":
        kept = result_text(response.get("response"))
        if kept is not None:
            target.opening = opening_line(kept.head[:2000])
    if target.kind == "shell":
        kept = result_text(response.get("response"))
        if kept is not None:
            text = kept.head if kept.head == kept.tail else f"{kept.head}\n{kept.tail}"
            target.findings = result_lines(text)
            if target.outcome.went_wrong:
                target.said = error_line(text)
            elif target.outcome.state == OK and not shows_content(target.command() or ""):
                said = error_line(text)  # failure text under exit 0 (curl's 404 page, `tool | head`): as printed
                if said and said not in target.findings:
                    target.findings = (*target.findings, said)


_JSON_OUTPUT = re.compile(r'\{\s*"(?:output|content)"\s*:\s*"')


def opening_line(text: str) -> str:
    """A file's first line of text, as a read result holds it (a Markdown heading's marks left out);
    in a result that is itself a JSON object's ``output`` string (the form masking's preview can
    keep), that string's first line."""
    found = _JSON_OUTPUT.match(text.lstrip())
    if found is not None:
        first = text.lstrip()[found.end():].split("\\n", 1)[0].split('"', 1)[0]
        try:
            text = json.loads(f'"{first}"')
        except ValueError:
            text = first
    for line in text.split("\n"):
        line = line.strip().lstrip("#").strip()
        if line:
            return line[:200]
    return ""


def _user_turn(digest: Digest, index: int, parts: list[Any], following: dict[str, Any] | None) -> None:
    if digest.workspace is None:
        for part in parts:
            text = part.get("text") if isinstance(part, dict) else None
            if isinstance(text, str) and text.startswith("<session_context>"):
                digest.workspace = workspace_of(text)
    for text in _visible_texts(parts):
        if is_request_text(text):
            continue
        if is_earlier_snapshot(text, following):
            digest.previous, digest.previous_turn = snap.parse(text), index
            continue
        words = user_words(text)
        if words:
            asked, last = digest.prompts[-1] if digest.prompts else None, digest.agent_last
            if asked is not None and last is not None and last.turn > asked.turn:
                digest.answers[asked.turn] = last
            digest.prompts.append(Prompt(index, words))
