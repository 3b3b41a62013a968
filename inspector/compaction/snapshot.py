"""Reading a ``<state_snapshot>`` and comparing two of them section by section.

Parsing is tolerant: text before the snapshot (a scratchpad, a preamble) is
kept aside, a missing closing tag ends the snapshot at the end of the text,
sections may be missing or unknown, and their order is the one in the text.
"""

from __future__ import annotations

import bisect
import difflib
import functools
import re
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from inspector.jsjson import js_trim

OPEN = "<state_snapshot>"
CLOSE = "</state_snapshot>"

_OPENING_LINE = re.compile(r"^[ \t]*<state_snapshot\s*>", re.I | re.M)  # a snapshot's own tag starts a line
_CLOSING = re.compile(r"</state_snapshot\s*>", re.I)
_OPEN_TAG = re.compile(r"<([A-Za-z_][\w.-]*)\s*>")
_CLOSE_TAG = re.compile(r"</([A-Za-z_][\w.-]*)\s*>")
# A comment (a model echoing the prompt's guidance) is left out; one that would reach over a tag is no
# comment but text that holds "<!--" (a quoted HTML edit): hiding the lines up to a later "-->" would
# hide from the reader what the model reads.
_COMMENT = re.compile(r"<!--(?:(?!</?[A-Za-z_][\w.-]*\s*>).)*?-->", re.S)


def shape_problem(text: str) -> str | None:
    """Why a summary cannot stand as an agent's memory, by its shape alone (None: it can).

    It must hold one ``<state_snapshot>``, closed.  An answer with none is
    not a snapshot (a refusal, an error, prose); one with two would be read
    as two memories; one never closed was cut off.  A tag quoted inside a
    line (the session discussed snapshots) is not counted."""
    openings = [m.start() for m in _OPENING_LINE.finditer(text)]
    if not openings:
        return "the summary holds no <state_snapshot>: it may be a refusal or an error, not a memory"
    if len(openings) > 1:
        return (f"the summary holds {len(openings)} <state_snapshot>s: the resumed agent would take each "
                "for its memory")
    if _CLOSING.search(text, openings[0]) is None:
        return "the summary's <state_snapshot> is never closed: the answer may have been cut off"
    return None


def text_lines(text: str) -> list[str]:
    """The lines of a text a session holds: only "\n" ends one (the "\r" of "\r\n" goes with it).

    In the JSON text Gemini CLI writes those are the only line ends; ``str.splitlines``
    would also break a line at \x0b, \x0c, \x1c-\x1e, \x85, \u2028 and \u2029. As
    ``str.split``, a text ending in "\n" ends with an empty line.
    """
    lines = text.split("\n")
    if "\r" in text:
        lines[:-1] = [line[:-1] if line.endswith("\r") else line for line in lines[:-1]]
    return lines


@dataclass(frozen=True)
class Section:
    name: str
    body: str

    @property
    def lines(self) -> list[str]:
        """The non-blank lines of the body (``text_lines``), trimmed as JavaScript trims, comments removed."""
        text = _COMMENT.sub("", self.body)
        return [line for line in map(js_trim, text_lines(text)) if line]


@dataclass(frozen=True)
class Snapshot:
    sections: tuple[Section, ...]
    preamble: str = ""  # text before <state_snapshot> (a scratchpad, say)
    found: bool = True  # False when the text held no <state_snapshot> tag
    raw: str = ""

    def names(self) -> list[str]:
        return [s.name for s in self.sections]

    @functools.cached_property
    def _by_name(self) -> dict[str, Section]:
        """Each section by name, the first of a name winning (one look-up each: a hostile snapshot of
        200,000 sections made the diff scan them all for every one)."""
        found: dict[str, Section] = {}
        for section in self.sections:
            found.setdefault(section.name, section)
        return found

    def get(self, name: str) -> Section | None:
        return self._by_name.get(name)

    def lines(self, name: str) -> list[str]:
        section = self.get(name)
        return section.lines if section else []

    def to_json(self) -> dict[str, Any]:
        return {"found": self.found, "sections": {s.name: s.lines for s in self.sections}}


def find_snapshot_text(text: str) -> str | None:
    """The ``<state_snapshot>...</state_snapshot>`` in ``text`` (the last complete one)."""
    end = text.rfind(CLOSE)
    if end >= 0:
        start = text.rfind(OPEN, 0, end)
        if start >= 0:
            return text[start : end + len(CLOSE)]
    start = text.rfind(OPEN)
    return text[start:] if start >= 0 else None


def parse(text: str) -> Snapshot:
    """Split a snapshot into its sections, in the order they appear."""
    body_text = find_snapshot_text(text)
    if body_text is None:
        return Snapshot((), preamble=text, found=False, raw=text)
    preamble = text[: text.find(body_text)]
    inner = body_text[len(OPEN) :]
    if inner.endswith(CLOSE):
        inner = inner[: -len(CLOSE)]
    sections: list[Section] = []
    seen: set[str] = set()
    for name, body in _tagged(_COMMENT.sub("", inner)):
        if name in seen:  # a repeated section: join the bodies
            index = next(i for i, s in enumerate(sections) if s.name == name)
            sections[index] = Section(name, sections[index].body + "\n" + body)
            continue
        seen.add(name)
        sections.append(Section(name, body))
    return Snapshot(tuple(sections), preamble=preamble, found=True, raw=body_text)


def _tagged(text: str) -> Iterator[tuple[str, str]]:
    """``(name, body)`` of each ``<name>body</name>`` in ``text``, in order, the body reaching the first
    closing tag of its name; what one holds is not searched again.  Linear in the text: every
    closing tag is found once up front (a search for it from each opening tag took minutes on a
    text of many tags that are never closed)."""
    closes: dict[str, list[tuple[int, int]]] = {}
    for match in _CLOSE_TAG.finditer(text):
        closes.setdefault(match.group(1), []).append((match.start(), match.end()))
    at = 0
    while (opening := _OPEN_TAG.search(text, at)) is not None:
        name, body_start = opening.group(1), opening.end()
        found = closes.get(name, [])
        k = bisect.bisect_left(found, (body_start, -1))
        if k == len(found):
            at = opening.start() + 1  # never closed: not a section; look on from the next character
            continue
        body_end, after = found[k]
        yield name, text[body_start:body_end]
        at = after


def normalise_line(line: str) -> str:
    return " ".join(line.strip().lstrip("-*• ").split()).lower()


# -- diff -------------------------------------------------------------------


@dataclass(frozen=True)
class LineChange:
    op: str  # "added" | "removed" | "unchanged"
    text: str


@dataclass(frozen=True)
class SectionDiff:
    name: str
    status: str  # "added" | "removed" | "changed" | "unchanged"
    changes: tuple[LineChange, ...]

    @property
    def added(self) -> list[str]:
        return [c.text for c in self.changes if c.op == "added"]

    @property
    def removed(self) -> list[str]:
        return [c.text for c in self.changes if c.op == "removed"]

    @property
    def unchanged(self) -> list[str]:
        return [c.text for c in self.changes if c.op == "unchanged"]

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "status": self.status,
            "added": self.added,
            "removed": self.removed,
            "unchanged": self.unchanged,
            "lines": [{"op": c.op, "text": c.text} for c in self.changes],
        }


@dataclass(frozen=True)
class SnapshotDiff:
    sections: tuple[SectionDiff, ...] = field(default_factory=tuple)

    @property
    def changed(self) -> bool:
        return any(s.status != "unchanged" for s in self.sections)

    def counts(self) -> dict[str, int]:
        return {
            "added": sum(len(s.added) for s in self.sections),
            "removed": sum(len(s.removed) for s in self.sections),
            "unchanged": sum(len(s.unchanged) for s in self.sections),
        }

    def to_json(self) -> dict[str, Any]:
        return {"changed": self.changed, "counts": self.counts(), "sections": [s.to_json() for s in self.sections]}


# Past this many lines on each side of what differs, lines are matched as a multiset (see ``_diff_lines``):
# difflib's matcher costs about (lines) x (changes), seconds at 100,000 lines with changes spread out.
DIFF_EXACT_LINES = 20_000


def _diff_lines(old: list[str], new: list[str]) -> list[LineChange]:
    """Line changes in reading order; lines compare after normalising spaces and bullets.

    The common head and tail are cut off first.  What lies between is diffed
    line by line (difflib) up to ``DIFF_EXACT_LINES`` lines a side; a longer
    one (a snapshot no model writes, but a file may hold) matches lines as a
    multiset: which lines were added and removed is still exact, only a line
    that moved is said to be unchanged rather than removed and added again.
    """
    a, b = [normalise_line(x) for x in old], [normalise_line(x) for x in new]
    head = 0
    while head < len(a) and head < len(b) and a[head] == b[head]:
        head += 1
    tail = 0
    while tail < len(a) - head and tail < len(b) - head and a[-1 - tail] == b[-1 - tail]:
        tail += 1
    changes = [LineChange("unchanged", line) for line in new[:head]]
    a_end, b_end = len(a) - tail, len(b) - tail
    if max(a_end, b_end) - head > DIFF_EXACT_LINES:
        changes.extend(_multiset_changes(old[head:a_end], new[head:b_end], a[head:a_end], b[head:b_end]))
    else:
        matcher = difflib.SequenceMatcher(a=a[head:a_end], b=b[head:b_end], autojunk=False)
        for op, a1, a2, b1, b2 in matcher.get_opcodes():
            if op == "equal":
                changes.extend(LineChange("unchanged", line) for line in new[head + b1:head + b2])
            else:
                changes.extend(LineChange("removed", line) for line in old[head + a1:head + a2])
                changes.extend(LineChange("added", line) for line in new[head + b1:head + b2])
    changes.extend(LineChange("unchanged", line) for line in new[b_end:])
    return changes


def _multiset_changes(old: list[str], new: list[str], a: list[str], b: list[str]) -> Iterator[LineChange]:
    """Each line of ``new`` is unchanged while ``old`` has a copy of it left (``a``, ``b``: the lines
    normalised), in reading order: a removed line comes where it stood among the unchanged ones."""
    kept_old, kept_new = _kept(a, b), _kept(b, a)
    i = j = 0
    while i < len(old) or j < len(new):
        if i < len(old) and not kept_old[i]:
            yield LineChange("removed", old[i])
            i += 1
        elif j < len(new) and not kept_new[j]:
            yield LineChange("added", new[j])
            j += 1
        else:
            yield LineChange("unchanged", new[j])
            i, j = i + 1, j + 1


def _kept(lines: list[str], other: list[str]) -> list[bool]:
    """For each of ``lines``: does ``other`` still have a copy of it (each copy matched once)?"""
    left = Counter(other)
    kept = []
    for line in lines:
        has = left[line] > 0
        if has:
            left[line] -= 1
        kept.append(has)
    return kept


def diff(old: Snapshot | str, new: Snapshot | str) -> SnapshotDiff:
    """Per section: lines added, removed and unchanged from ``old`` to ``new``.

    Sections follow ``new``'s order; sections only in ``old`` come after, where
    they stood relative to the others.
    """
    a = parse(old) if isinstance(old, str) else old
    b = parse(new) if isinstance(new, str) else new
    in_new = set(b.names())
    order = b.names() + [n for n in a.names() if n not in in_new]
    result: list[SectionDiff] = []
    for name in order:
        in_a, in_b = a.get(name) is not None, b.get(name) is not None
        changes = _diff_lines(a.lines(name), b.lines(name))
        if not in_a:
            status = "added"
        elif not in_b:
            status = "removed"
        elif all(c.op == "unchanged" for c in changes):
            status = "unchanged"
        else:
            status = "changed"
        result.append(SectionDiff(name, status, tuple(changes)))
    return SnapshotDiff(tuple(result))


# -- provenance ----------------------------------------------------------------


@dataclass(frozen=True)
class LineSource:
    """One line of a snapshot and the history turns it was taken from."""

    section: str
    text: str  # the line as the snapshot shows it, without its "- " bullet
    turns: tuple[int, ...]  # indexes into the history that was summarised

    def to_json(self) -> dict[str, Any]:
        return {"section": self.section, "text": self.text, "turns": list(self.turns)}


@dataclass(frozen=True)
class Provenance:
    """Where each line of a snapshot comes from, and how a focus instruction was used.

    Written by a summariser that knows (the offline one); ``None`` on a
    result from one that does not (a model's lines carry no such link).
    """

    lines: tuple[LineSource, ...] = ()
    focus_note: str | None = None  # how the focus instruction was honoured, or why it could not be
    omitted: tuple[tuple[str, int], ...] = ()  # (kind, count) of lines left out to fit the budget, first dropped first
    budget_tokens: int | None = None  # the most the snapshot could take

    def omitted_text(self) -> str | None:
        """The lines left out to fit the budget, in one sentence (None when none were)."""
        if not self.omitted:
            return None
        total = sum(count for _kind, count in self.omitted)
        kinds = ", ".join(f"{count:,} {kind}" for kind, count in self.omitted)
        within = f" within {self.budget_tokens:,} tokens" if self.budget_tokens is not None else ""
        return f"{total:,} line{'s' if total != 1 else ''} left out to keep the snapshot{within}: {kinds}."

    def turns_of(self, section: str, line: str) -> tuple[int, ...]:
        """The turns of ``line`` in ``section`` (bullets and spacing ignored); () if unknown."""
        key = normalise_line(line)
        for source in self.lines:
            if source.section == section and normalise_line(source.text) == key:
                return source.turns
        return ()

    def remapped(self, origins: Sequence[int | None]) -> Provenance:
        """The same provenance for a history whose turn ``i`` was ``origins[i]`` (None: a turn it made)."""
        lines = tuple(LineSource(s.section, s.text, tuple(sorted({o for t in s.turns if 0 <= t < len(origins)
                                                                 and (o := origins[t]) is not None})))
                      for s in self.lines)
        return Provenance(lines, self.focus_note, self.omitted, self.budget_tokens)

    def to_json(self) -> dict[str, Any]:
        return {"lines": [s.to_json() for s in self.lines], "focus_note": self.focus_note,
                "omitted": dict(self.omitted), "omitted_note": self.omitted_text(), "budget_tokens": self.budget_tokens}
