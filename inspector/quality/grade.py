"""Grading a snapshot against the ground truth: recall per kind of fact, and false claims.

A snapshot is read line by line, and each line clause by clause (``; ``
outside backticks and quotes).  Words inside backticks or double quotes are
data (a command, a path, an error text) and never count as what the line
says happened; the words outside them do, together with the line's head
(``EDITED: ...``).

* A path is kept when a clause names it (whole, by a tail of two parts or
  more, or by a file name no other path shares) and says an operation of
  the same family: looked at (read, list, search) or changed (write, edit).
* A command is kept when a clause holds its first line (up to 160
  characters) and says its recorded outcome (ok, failed, cancelled, terminated,
  background); a command whose outcome was not recorded is kept when named.
  A commit's message must appear in the snapshot too.
* An error, a constraint, a step or a line of the previous snapshot is kept
  when one line holds two thirds of its first eight content words.

A **false claim** is a clause the history contradicts: it gives a recorded
command only outcomes the history does not record for it; it gives a path
only operations no call did to it (a path a shell command names may have
been changed or removed by it); it states an outcome for a command the
history never ran; or (with the history's text) it names a path found
nowhere in the history.
"""

from __future__ import annotations

import math
import re
from collections.abc import Container, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from inspector.quality.clauses import FAMILY, PATHISH, Clause, clauses, snapshot_lines
from inspector.quality.ground import KINDS, Fact, Ground, squash, words
from inspector.tokens import estimate_contents, text_quarters

COMMAND_CHARS = 160
@dataclass(frozen=True)
class Check:
    fact: Fact
    kept: bool


@dataclass(frozen=True)
class FalseClaim:
    section: str
    line: str
    reason: str
    turns: tuple[int, ...] = ()  # the turns that say otherwise

    def to_json(self) -> dict[str, Any]:
        return {"section": self.section, "line": self.line, "reason": self.reason, "turns": list(self.turns)}


@dataclass
class Report:
    """What a snapshot kept of the history's facts, and what it says that the history contradicts."""

    checks: list[Check] = field(default_factory=list)
    false_claims: list[FalseClaim] = field(default_factory=list)
    snapshot_tokens: int = 0
    replaced_tokens: int = 0

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

    def recall_of(self, kinds: Iterable[str]) -> float | None:
        """Recall over some kinds of fact (None when the history holds none of them)."""
        wanted = set(kinds)
        rows = [c for c in self.checks if c.fact.kind in wanted]
        return sum(c.kept for c in rows) / len(rows) if rows else None

    @property
    def size_share(self) -> float | None:
        """The snapshot's tokens as a share of the tokens it replaces."""
        return self.snapshot_tokens / self.replaced_tokens if self.replaced_tokens else None

    def by_kind(self) -> dict[str, dict[str, int]]:
        out: dict[str, dict[str, int]] = {}
        for kind in KINDS:
            rows = [c for c in self.checks if c.fact.kind == kind]
            if rows:
                out[kind] = {"kept": sum(c.kept for c in rows), "total": len(rows)}
        return out

    def to_json(self) -> dict[str, Any]:
        return {
            "recall": round(self.recall, 4),
            "kept": self.kept,
            "total": self.total,
            "by_kind": self.by_kind(),
            "lost": [f.to_json() for f in self.lost],
            "false_claims": [c.to_json() for c in self.false_claims],
            "snapshot_tokens": self.snapshot_tokens,
            "replaced_tokens": self.replaced_tokens,
            "facts": [{**c.fact.to_json(), "kept": c.kept} for c in self.checks],
        }


# -- reading the snapshot ---------------------------------------------------------


# -- matching ---------------------------------------------------------------------


def _components(path: str) -> list[str]:
    """A path's parts, as a clause's flat text holds them (its backticks dropped)."""
    return [c for c in path.replace("\\", "/").replace("`", "").split("/") if c and c not in (".", "~")]


_TOKEN = re.compile(r"[\w.~@+/-]+")


class _PathFinder:
    """Finds the recorded paths a text names: whole, by a tail of two parts or more, or by a file
    name no other path shares.  Indexed by those forms, so a text costs a lookup per word."""

    def __init__(self, paths: Iterable[str]) -> None:
        unique = set(paths)
        names: dict[str, int] = {}
        for path in unique:
            parts = _components(path)
            if parts:
                names[parts[-1].lower()] = names.get(parts[-1].lower(), 0) + 1
        self.forms: dict[str, set[str]] = {}
        for path in unique:
            parts = [c.lower() for c in _components(path)]
            forms = {"/".join(parts)} if parts else set()
            forms.update("/".join(parts[i:]) for i in range(len(parts) - 1))
            if parts and names[parts[-1]] <= 1:
                forms.add(parts[-1])
            for form in forms:
                self.forms.setdefault(form, set()).add(path)
        self._cache: dict[str, set[str]] = {}

    def named_by(self, clause: Clause) -> set[str]:
        """Every recorded path a clause names: in its words, or as a backticked span whole (a path
        holding a space, "Application Support/x", is one span but no one word)."""
        found = set(self.named_in(clause.flat))
        for span in clause.spans:
            if " " in span.strip() or "\\" in span:  # (a Windows path is no one word either)
                parts = [c.lower() for c in _components(span.strip())]
                for i in range(len(parts)):
                    found |= self.forms.get("/".join(parts[i:]), set())
        return found

    def named_in(self, flat: str) -> set[str]:
        """Every recorded path ``flat`` names."""
        cached = self._cache.get(flat)
        if cached is not None:
            return cached
        found: set[str] = set()
        forms = self.forms
        for token in _TOKEN.findall(flat):
            token = token.rstrip(".-")
            if "/" not in token:
                found |= forms.get(token, set())
                continue
            parts = [c for c in token.split("/") if c and c not in (".", "~")]
            for i in range(len(parts)):
                found |= forms.get("/".join(parts[i:]), set())
        self._cache[flat] = found
        return found


# A snapshot line cannot hold the snapshot's own tags: whoever writes it turns them into something
# else (the offline digest: "(/state_snapshot)").  A command is matched with its angle brackets alike
# on both sides, so that a command holding such a tag is still the command it names.
_ANGLES = str.maketrans("<>", "()")


def _command_key(command: str) -> str:
    return squash(command.replace("`", "").translate(_ANGLES))[:COMMAND_CHARS].rstrip()


_MORE_LINES = re.compile(r"\s*\(\+[\d,]+ more lines?\)$")


def _span_key(span: str) -> tuple[str, bool]:
    """A backticked span as a command key, and whether it was cut short (ends with "…")."""
    text = _MORE_LINES.sub("", span.strip())
    cut = text.endswith("…")
    return _command_key(text.rstrip("…")), cut


class _CommandFinder:
    """Finds the recorded commands (their first line, up to 160 characters) a clause names: a backticked
    span that is the command (or its start, cut with "…"); in prose, the command's text between word
    boundaries.  Indexed by first words, so a clause costs a few lookups per word."""

    def __init__(self, keys: Iterable[str]) -> None:
        self.keys = sorted(set(keys))
        self.index: dict[tuple[str, ...], list[str]] = {}
        for key in self.keys:
            self.index.setdefault(tuple(key.split(" ")[:3]), []).append(key)
        self.programs = {head[0] for head in self.index}

    def _candidates(self, words: list[str], start: int) -> list[str]:
        found: list[str] = []
        for n in (1, 2, 3):
            found.extend(self.index.get(tuple(words[start: start + n]), ()))
        return found

    def matches(self, span: str) -> list[str]:
        """The recorded commands a backticked span is."""
        text, cut = _span_key(span)
        if not text:
            return []
        return [key for key in self._candidates(text.split(" "), 0)
                if key == text or (cut and key.startswith(text)) or (len(text) >= COMMAND_CHARS and
                                                                     key == text[:len(key)])]

    def held_in(self, clause: Clause) -> list[str]:
        """The recorded commands a clause names, the longest only where one holds another."""
        found: set[str] = set()
        if clause.spans:
            for span in clause.spans:
                found.update(self.matches(span))
        else:
            flat = clause.flat.translate(_ANGLES)
            spaced = flat.split(" ")
            for i, word in enumerate(spaced):
                if word in self.programs:
                    for key in self._candidates(spaced, i):
                        at = flat.find(key)
                        if at >= 0 and not flat[at + len(key): at + len(key) + 1].strip(".,;:!?)'\""):
                            found.add(key)
        if len(found) < 2:
            return list(found)
        return [k for k in found if not any(k != other and k in other for other in found)]


_WORD_TOKEN = re.compile(r"[^\W_](?:[\w./'-]*[\w/])?")  # ``ground.words``' tokens, already stripped of .'-


class _LineIndex:
    """Snapshot lines by the content words they hold (only the words some fact looks for)."""

    def __init__(self, lines: Sequence[str], facts: Iterable[Fact]) -> None:
        self.lines = lines
        self._joined: str | None = None
        self._wanted = {fact.key: words(fact.key)[:8] for fact in facts}
        looked_for = {w for ws in self._wanted.values() for w in ws}
        self.postings: dict[str, list[int]] = {}
        if looked_for:
            for number, line in enumerate(lines):
                for word in looked_for.intersection(_WORD_TOKEN.findall(line)):
                    self.postings.setdefault(word, []).append(number)

    def holds(self, fact: Fact) -> bool:
        """One line holds two thirds of the fact's first eight content words."""
        wanted = self._wanted[fact.key] if fact.key in self._wanted else words(fact.key)[:8]
        if not wanted:
            if self._joined is None:
                self._joined = "\n".join(self.lines)
            return squash(fact.key) in self._joined
        need = math.ceil(len(wanted) * 2 / 3)
        counts: dict[int, int] = {}
        for word in wanted:
            for number in self.postings.get(word, ()):
                counts[number] = counts.get(number, 0) + 1
                if counts[number] >= need:
                    return True
        return False


# -- grading ---------------------------------------------------------------------


def grade(
    ground: Ground,
    snapshot: str,
    *,
    replaced_tokens: int = 0,
    history_text: Container[str] | None = None,
    kept_turns: Iterable[int] = (),
) -> Report:
    """How well ``snapshot`` keeps ``ground``'s facts, and the clauses of it the history contradicts.

    ``kept_turns``: turns that stay in the new history word for word (their
    facts are kept whatever the snapshot says).  ``history_text``: the
    history's whole text, lower-case (or anything that answers ``in`` as it
    would: ``quality.HistoryMentions``), to catch paths it never names.
    """
    read_lines = snapshot_lines(snapshot)
    parts = clauses(snapshot, read_lines)
    lines = [squash(line) for _section, line in read_lines]
    if ground.previous_base:  # the earlier snapshot's lines, carried with their paths written whole
        base = ground.previous_base.lower() + "/"
        lines += [line.replace(base, "") for line in lines if base in line]
    index = _LineIndex(lines, (f for f in ground.facts if f.kind not in ("path", "command")))
    flat_all = squash(snapshot.replace("`", "").translate(_ANGLES))
    finder = _PathFinder(ground.ops_by_path)
    commands = _CommandFinder(_command_key(line) for line in ground.outcomes_by_command)
    # a clause's paths count only where it says what was done to them
    read = [_Read(c, commands.held_in(c), finder.named_by(c) if c.ops else set()) for c in parts]
    said_paths: dict[str, set[str]] = {}
    said_commands: dict[str, set[str]] = {}
    for item in read:
        for path in item.paths:
            said_paths.setdefault(path, set()).update(item.clause.ops)
        for key in item.commands:
            said_commands.setdefault(key, set()).update(item.clause.outcomes | {"named"})
    verbatim = set(kept_turns)
    checks = []
    for fact in ground.facts:
        kept = bool(verbatim) and any(t in verbatim for t in fact.turns)
        if not kept:
            kept = _kept(fact, said_paths, said_commands, index, lines, flat_all)
        checks.append(Check(fact, kept))
    claims = _false_claims(ground, read, commands, history_text)
    return Report(checks, claims, text_quarters(snapshot) // 4, replaced_tokens)


@dataclass(frozen=True)
class _Read:
    clause: Clause
    commands: list[str]  # recorded commands it names
    paths: set[str]  # recorded paths it names


def _kept(fact: Fact, said_paths: dict[str, set[str]], said_commands: dict[str, set[str]], index: _LineIndex,
          lines: list[str], flat_all: str) -> bool:
    if fact.kind == "path":
        return FAMILY.get(fact.state, "") in said_paths.get(fact.key, set())
    if fact.kind == "command":
        if fact.extra and squash(fact.extra.replace("`", "").translate(_ANGLES))[:100] not in flat_all:
            return False
        said = said_commands.get(_command_key(fact.key), set())
        return "named" in said if fact.state == "unknown" else fact.state in said
    if fact.kind == "previous" and squash(fact.key) in lines:
        return True
    return index.holds(fact)


def _false_claims(ground: Ground, read: list[_Read], commands: _CommandFinder,
                  history_text: Container[str] | None) -> list[FalseClaim]:
    out: list[FalseClaim] = []
    named = {path.lower().rstrip("/") for path in ground.ops_by_path}  # paths the history's calls named
    base = ground.previous_base.lower() + "/" if ground.previous_base else ""
    earlier_text = ground.previous_text.lower()
    by_key = {_command_key(line): line for line in ground.outcomes_by_command}
    earlier = _earlier_claims(ground, commands)
    turns_of: dict[str, tuple[int, ...]] = {}
    for fact in ground.facts:
        if fact.kind in ("command", "path"):
            key = _command_key(fact.key) if fact.kind == "command" else fact.key
            turns_of[key] = tuple(sorted({*turns_of.get(key, ()), *fact.turns}))
    for item in read:
        clause = item.clause
        said = clause.outcomes - {"unknown"}
        for key in item.commands:
            recorded = ground.outcomes_by_command[by_key[key]] | earlier.get(key, set())
            if said and "unknown" not in recorded and not said & recorded:
                out.append(FalseClaim(clause.section, clause.line,
                                      f"says `{key}` {'/'.join(sorted(said))}; the history records "
                                      f"{'/'.join(sorted(recorded))}", turns_of.get(key, ())))
        if said and not item.commands:
            for span in clause.spans:
                text = _command_key(span.replace("…", "").split(" (+")[0])
                if (text and text.split(" ", 1)[0] in ground.programs and not commands.matches(span)
                        and span.lower() not in earlier_text):  # what the earlier snapshot said it ran
                    out.append(FalseClaim(clause.section, clause.line,
                                          f"gives an outcome for `{text}`, a command the history does not record"))
        if clause.ops:
            out.extend(_path_claims(item, ground, turns_of, earlier))
        if history_text is not None:
            for span in clause.spans:
                # (a path written from here, "./src/a.py", or from home, "~/notes.md", is looked for without it)
                path = span.lower().rstrip("/").removeprefix("./").removeprefix("~/")
                if base and path.startswith(base):  # one the earlier snapshot gave relative to its base
                    path = path[len(base):]
                if PATHISH.match(span) and path not in named and path not in history_text:
                    out.append(FalseClaim(clause.section, clause.line,
                                          f"names `{span}`, which the history never mentions"))
    return out


def _earlier_claims(ground: Ground, commands: _CommandFinder) -> dict[str, set[str]]:
    """What the earlier snapshot in the history says of each path (operations) and command (outcomes)."""
    said: dict[str, set[str]] = {}
    if not ground.previous_text:
        return said
    finder = _PathFinder(ground.ops_by_path)
    for clause in clauses(ground.previous_text):
        for path in finder.named_by(clause):
            said.setdefault(path, set()).update(clause.ops)
        for key in commands.held_in(clause):
            said.setdefault(key, set()).update(clause.outcomes)
    return said


def _path_claims(item: _Read, ground: Ground, turns_of: dict[str, tuple[int, ...]],
                 earlier: dict[str, set[str]]) -> list[FalseClaim]:
    out = []
    clause = item.clause
    for path in sorted(item.paths):
        families = {FAMILY.get(op, "") for op in ground.ops_by_path[path]} | earlier.get(path, set())
        name = _components(path)[-1].lower() if _components(path) else path.lower()
        if name in ground.shell_text:
            families |= {"changed", "deleted", "looked"}  # a command may have done anything to it
        if not clause.ops & families:
            out.append(FalseClaim(clause.section, clause.line,
                                  f"says `{path}` was {'/'.join(sorted(clause.ops))}; the history only "
                                  f"{'/'.join(sorted(families))} it", turns_of.get(path, ())))
    return out


def replaced(contents: Sequence[dict[str, Any]]) -> int:
    """The estimated tokens of the history a snapshot replaces."""
    return estimate_contents(contents)


def mentions(ground: Ground, text: str) -> tuple[set[str], set[str]]:
    """(commands, paths) of ``ground`` that ``text`` makes claims about, read the way ``grade`` reads a
    snapshot: every command it names, and the paths of clauses that say what was done to them."""
    finder = _PathFinder(ground.ops_by_path)
    commands = _CommandFinder(_command_key(line) for line in ground.outcomes_by_command)
    named_commands: set[str] = set()
    named_paths: set[str] = set()
    for clause in clauses(text):
        named_commands.update(commands.held_in(clause))
        if clause.ops:
            named_paths |= finder.named_by(clause)
    return named_commands, named_paths
