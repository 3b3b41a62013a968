"""The concrete facts of the summarised history, and which of them a snapshot keeps.

Five kinds of fact are extracted from the part being summarised:

* ``path``: file paths named in tool-call arguments, and path-like words in
  the user's and the model's text (tool *outputs* are not scanned: a directory
  listing is data, not something the agent chose to work on);
* ``command``: the shell commands the agent ran (a tool call with a
  ``command``/``cmd`` argument);
* ``error``: a tool result that reports an error (its ``error`` field, or the
  first error-looking line of a shell/other tool's output);
* ``code``: identifiers and snippets the user or the model wrote in
  ``backticks`` (2-80 characters);
* ``constraint``: sentences in which the user states a rule ("must",
  "never", "always", "don't", "only", "avoid" ..., also in German, French,
  Spanish, Italian, Portuguese, Chinese and Japanese), and the
  ``active_constraints`` lines of an earlier snapshot.

Matching rule (case-insensitive, whitespace collapsed):

* ``path``: the snapshot holds the whole path, or a tail of it of at least two
  components (``src/app.py`` for ``/home/me/proj/src/app.py``), or its bare
  file name when no other extracted path shares that name;
* ``code``: the snapshot holds the span's text;
* ``command``, ``error``, ``constraint``: *key tokens* - for a command the
  program and its three longest other non-flag words; for an error or a
  constraint up to six content words (stop words and rule words such as
  "must" dropped) - and one line of the snapshot must hold all of a command's
  key tokens, or at least two thirds of an error's or constraint's.

``recall`` is kept / total (1.0 when there is nothing to keep).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from inspector.compaction import snapshot as snap

KINDS = ("constraint", "error", "path", "command", "code")

PATH_KEYS = frozenset(
    {"file_path", "path", "absolute_path", "dir_path", "directory", "filename", "file", "target_file",
     "notebook_path", "source", "destination", "target"}
)
PATH_LIST_KEYS = frozenset({"paths", "file_paths", "files", "absolute_paths"})
COMMAND_KEYS = ("command", "cmd")
READ_ONLY_HINTS = ("read", "grep", "search", "glob", "list", "find", "fetch", "ls")

_URL = re.compile(r"\b[a-z][a-z0-9+.-]*://\S+", re.I)
_PATH = re.compile(
    r"(?<![\w/.~-])("
    r"(?:~|\.{1,2})?/(?:[\w.@+-]+/)*[\w.@+-]+"  # /abs/path, ~/x, ./x, ../x
    r"|(?:[\w.@+-]+/)+[\w@+-]*\.[A-Za-z0-9]{1,8}"  # rel/path/file.ext
    r"|[\w@+-]+\.(?:py|pyi|js|mjs|cjs|ts|tsx|jsx|json|jsonl|md|txt|toml|ya?ml|rs|go|java|kt|c|h|cc|cpp|hpp"
    r"|css|scss|html|sh|bash|zsh|lock|cfg|ini|sql|rb|php|swift|vue|svelte|xml|csv|env|proto|gradle|tf)"
    r")(?![\w/])"
)
_CODE_SPAN = re.compile(r"(?<!`)`([^`\n]{2,80})`(?!`)")
_SENTENCE_BREAK = re.compile(r"(?<=[.!?])\s+|(?<=[。！？])|\n+|;\s+")
_WORD = re.compile(r"[\w][\w.:/@+-]*")
_ERROR_LINE = re.compile(
    r"\b(\w*error|\w*errors|\w*exception|traceback|failed|failure|fatal|denied|not found|no such file|cannot|"
    r"refused|timed out|panic)\b",
    re.I,
)
_RULE_WORDS = re.compile(
    r"\b(must|mustn't|never|always|don't|do not|dont|avoid|only|should|shouldn't|make sure|ensure|prefer|"
    r"without|no more than|at most|at least|required?|need to|needs to|keep|stick to|"
    r"muss|müssen|niemals|nie|immer|nicht|keine|nur|jamais|toujours|ne pas|doit|doivent|il faut|uniquement|"
    r"seulement|nunca|siempre|debe|deben|solo|sólo|mai|sempre|deve|devono|não|somente)\b"
    r"|必须|不要|不能|总是|永远|只能|必ず|しないで|してください|禁止",
    re.I,
)
_STOP_TEXT = """a an the and or but if then else of to in on at by for with from into onto as is are was were be been
    being it its this that these those there here i me my we our you your he she they them his her their
    not no do does did done have has had can could will would shall should may might must never always
    don't dont avoid only ensure make sure prefer without keep need needs required require please also
    just than more most least any all each every some such very so too use using used when where which who
    what why how about after before again ever any one two"""
STOP_WORDS = frozenset(_STOP_TEXT.split())


@dataclass(frozen=True)
class Fact:
    kind: str
    value: str
    turn: int  # the first turn (index into the summarised history) that holds it

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "value": self.value, "turn": self.turn}


@dataclass(frozen=True)
class FactCheck:
    fact: Fact
    kept: bool


@dataclass
class FactReport:
    checks: list[FactCheck] = field(default_factory=list)

    @property
    def total(self) -> int:
        return len(self.checks)

    @property
    def kept(self) -> int:
        return sum(1 for c in self.checks if c.kept)

    @property
    def recall(self) -> float:
        return self.kept / self.total if self.checks else 1.0

    @property
    def lost(self) -> list[Fact]:
        return [c.fact for c in self.checks if not c.kept]

    def by_kind(self) -> dict[str, dict[str, int]]:
        out: dict[str, dict[str, int]] = {}
        for c in self.checks:
            row = out.setdefault(c.fact.kind, {"kept": 0, "total": 0})
            row["total"] += 1
            row["kept"] += int(c.kept)
        return out

    def to_json(self) -> dict[str, Any]:
        return {
            "recall": round(self.recall, 4),
            "kept": self.kept,
            "total": self.total,
            "by_kind": self.by_kind(),
            "lost": [f.to_json() for f in self.lost],
            "facts": [{**c.fact.to_json(), "kept": c.kept} for c in self.checks],
        }


# -- extraction ---------------------------------------------------------------


def _clean_path(text: str) -> str:
    return text.strip().rstrip(".,:;!?)]}'\"`").strip("'\"`(")


_TAG = re.compile(r"</?[A-Za-z_][\w.-]*\s*/?>")


def paths_in_text(text: str) -> list[str]:
    text = _TAG.sub(" ", _URL.sub(" ", text))
    out = []
    for match in _PATH.finditer(text):
        value = _clean_path(match.group(1))
        if len(value) >= 3 and any(ch.isalpha() for ch in value) and value not in ("./", "../"):
            out.append(value)
    return out


def code_spans(text: str) -> list[str]:
    return [m.group(1).strip() for m in _CODE_SPAN.finditer(text) if m.group(1).strip()]


def constraint_sentences(text: str) -> list[str]:
    out = []
    for piece in _SENTENCE_BREAK.split(text[:20_000]):
        sentence = piece.strip()
        if sentence.endswith(("?", "？", ":")):  # a question or a lead-in is not a rule
            continue
        if 8 <= len(sentence) <= 300 and _RULE_WORDS.search(sentence):
            out.append(sentence)
    return out


def error_line(text: str, read_only: bool) -> str | None:
    stripped = text.strip()
    if read_only:
        first = stripped.splitlines()[0] if stripped else ""
        return first[:160] if re.match(r"(error|fatal|exception)\b", first, re.I) else None
    for line in stripped.splitlines()[:400]:
        if _ERROR_LINE.search(line) and any(ch.isalpha() for ch in line):
            return line.strip()[:160]
    return None


_CONTEXT_PREFIXES = ("<session_context>", "<hook_context>")


def _texts(content: dict[str, Any]) -> Iterable[str]:
    """The visible text parts (not thoughts, not the environment context Gemini CLI adds)."""
    for part in content.get("parts") or []:
        text = part.get("text") if isinstance(part, dict) else None
        if isinstance(text, str) and not part.get("thought") and not text.lstrip().startswith(_CONTEXT_PREFIXES):
            yield text


def _calls(content: dict[str, Any]) -> Iterable[dict[str, Any]]:
    for part in content.get("parts") or []:
        if isinstance(part, dict) and isinstance(part.get("functionCall"), dict):
            yield part["functionCall"]


def _responses(content: dict[str, Any]) -> Iterable[dict[str, Any]]:
    for part in content.get("parts") or []:
        if isinstance(part, dict) and isinstance(part.get("functionResponse"), dict):
            yield part["functionResponse"]


def call_paths(args: Any) -> list[str]:
    if not isinstance(args, dict):
        return []
    out: list[str] = []
    for key, value in args.items():
        if key in PATH_KEYS and isinstance(value, str) and any(ch.isalnum() for ch in value):
            out.append(value.strip())
        elif key in PATH_LIST_KEYS and isinstance(value, list):
            out.extend(v.strip() for v in value if isinstance(v, str) and any(ch.isalnum() for ch in v))
    return out


def call_command(call: dict[str, Any]) -> str | None:
    args = call.get("args")
    if not isinstance(args, dict):
        return None
    for key in COMMAND_KEYS:
        value = args.get(key)
        if isinstance(value, str) and value.strip():
            return value.strip().splitlines()[0][:200]
    return None


def response_error(response: dict[str, Any]) -> str | None:
    name = str(response.get("name") or "")
    body = response.get("response")
    if isinstance(body, dict):
        err = body.get("error")
        if isinstance(err, str) and err.strip():
            return err.strip().splitlines()[0][:160]
        if isinstance(err, dict) and isinstance(err.get("message"), str):
            return err["message"].strip().splitlines()[0][:160]
        text = body.get("output") if isinstance(body.get("output"), str) else body.get("content")
    else:
        text = body
    if not isinstance(text, str):
        return None
    return error_line(text, read_only=any(h in name.lower() for h in READ_ONLY_HINTS))


class _Collector:
    def __init__(self) -> None:
        self.facts: list[Fact] = []
        self._seen: set[tuple[str, str]] = set()

    def add(self, kind: str, value: str, turn: int) -> None:
        value = value.strip()
        key = (kind, snap.normalise_line(value))
        if not value or key in self._seen:
            return
        self._seen.add(key)
        self.facts.append(Fact(kind, value, turn))


def extract(contents: Sequence[dict[str, Any]]) -> list[Fact]:
    """Every fact of ``contents``, in order of first appearance (see the module doc)."""
    from inspector.compaction.prompts import is_request_text

    col = _Collector()
    for turn, content in enumerate(contents):
        role = content.get("role")
        for text in _texts(content):
            if is_request_text(text):
                continue
            if snap.OPEN in text:
                earlier = snap.parse(text)
                for line in earlier.lines("active_constraints"):
                    col.add("constraint", line.lstrip("-*• ").strip(), turn)
            elif role == "user":
                for sentence in constraint_sentences(text):
                    col.add("constraint", sentence, turn)
            for path in paths_in_text(text):
                col.add("path", path, turn)
            for span in code_spans(text):
                if not paths_in_text(span) or " " in span:
                    col.add("code", span, turn)
        for call in _calls(content):
            for path in call_paths(call.get("args")):
                col.add("path", path, turn)
            command = call_command(call)
            if command:
                col.add("command", command, turn)
        for response in _responses(content):
            err = response_error(response)
            if err:
                col.add("error", err, turn)
    return _merge_paths(col.facts)


def _components(path: str) -> list[str]:
    return [c for c in path.replace("\\", "/").split("/") if c and c not in (".", "~")]


def _merge_paths(facts: list[Fact]) -> list[Fact]:
    """Drop a path that is a whole-component tail of another extracted path."""
    paths = [f for f in facts if f.kind == "path"]
    comps = {f.value: _components(f.value) for f in paths}
    drop: set[str] = set()
    for f in paths:
        mine = comps[f.value]
        for other in paths:
            theirs = comps[other.value]
            if other is not f and len(theirs) > len(mine) and mine and theirs[-len(mine):] == mine:
                drop.add(f.value)
                break
    return [f for f in facts if not (f.kind == "path" and f.value in drop)]


# -- matching ------------------------------------------------------------------


def _norm(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip().lower()


def key_tokens(fact: Fact) -> list[str]:
    raw = fact.value.split() if fact.kind == "command" else _WORD.findall(fact.value)
    words = [w.strip(".,:;!?()[]{}'\"`").lower() for w in raw]
    words = [w for w in words if w]
    if fact.kind == "command":
        words = [w for w in words if not w.startswith("-") and w not in ("&&", "||", "|", ";")]
        if not words:
            return []
        program, rest = words[0], [w for w in dict.fromkeys(words[1:]) if len(w) > 1 and w != words[0]]
        longest = sorted(rest, key=lambda w: -len(w))[:3]
        return [program, *[w for w in rest if w in longest]]
    content = [w for w in dict.fromkeys(words) if len(w) >= 3 and w not in STOP_WORDS]
    if not content:
        content = [w for w in dict.fromkeys(words) if w]
    return content[:6]


class Matcher:
    """Checks facts against one snapshot text (lines and text prepared once)."""

    def __init__(self, snapshot_text: str, facts: Sequence[Fact] = ()) -> None:
        self.text = _norm(snapshot_text)
        self.lines = [line.lower() for line in snapshot_text.splitlines() if line.strip()]
        names: dict[str, int] = {}
        for f in facts:
            if f.kind == "path":
                comps = _components(f.value)
                if comps:
                    names[comps[-1].lower()] = names.get(comps[-1].lower(), 0) + 1
        self.basename_count = names

    def kept(self, fact: Fact) -> bool:
        if fact.kind == "path":
            return self._path_kept(fact.value)
        if fact.kind == "code":
            return _norm(fact.value) in self.text
        tokens = key_tokens(fact)
        if not tokens:
            return _norm(fact.value) in self.text
        need = len(tokens) if fact.kind == "command" else math.ceil(len(tokens) * 2 / 3)
        return any(sum(1 for t in tokens if t in line) >= need for line in self.lines)

    def _path_kept(self, path: str) -> bool:
        value = _norm(path)
        if value in self.text:
            return True
        comps = [c.lower() for c in _components(path)]
        if len(comps) >= 2 and "/".join(comps[-2:]) in self.text:
            return True
        if comps and self.basename_count.get(comps[-1], 1) <= 1:
            return re.search(r"(?<![\w.-])" + re.escape(comps[-1]) + r"(?![\w-])", self.text) is not None
        return False


def check(facts: Sequence[Fact], snapshot_text: str) -> FactReport:
    """Which of ``facts`` the snapshot keeps, under the module's matching rule."""
    matcher = Matcher(snapshot_text, facts)
    return FactReport([FactCheck(f, matcher.kept(f)) for f in facts])


def report(contents: Sequence[dict[str, Any]], snapshot_text: str) -> FactReport:
    return check(extract(contents), snapshot_text)
