"""A summariser that needs no network and no key: a grounded, extractive digest.

Every line it writes restates something the history records, and names the
turns it comes from (``cite``):

* ``overall_goal``: the current task, the user's latest request of four words
  or more, quoted, with its status (an earlier snapshot's goal stays the goal
  until such a request comes, then is carried beside it: ``requests``);
* ``active_constraints``: the user's rules, quoted (an earlier snapshot's are
  carried over first);
* ``key_knowledge``: calls that failed, with the error text Gemini CLI
  recorded, saying whether a later run of the same thing succeeded; facts
  saved to memory; web searches and fetches;
* ``artifact_trail``: files created or edited, commits with their message (a
  commit whose command did not end ok is said only asked for, with how its
  command ended and its output's last line);
* ``file_system_state``: the paths read, listed, searched, written, by operation;
  beside a listed path, a later command recorded as ended ok that removed or
  moved it away (``rm``, ``git rm``, ``mv``, ``git mv``), with its turn;
* ``recent_actions``: every command with its recorded outcome, oldest first
  (an exit code 1 that is its program's answer reads so: grep's "no match");
* ``task_state``: the agent's latest ``write_todos`` plan, a call still waiting
  for its result, the user's first request and the other earlier ones.

An outcome is what Gemini CLI recorded (``compaction.outcomes``): the
status of each call, the display its record kept and the workspace its
session context names travel beside the history in a ``ToolStatuses`` map
given to the constructor.  An earlier ``<state_snapshot>`` is merged section
by section: its lines are kept while they fit.

The snapshot takes 15% of the estimated tokens it replaces (an earlier
snapshot in them included), and never more than ``CEILING_TOKENS`` (65,536):
the longest answer Gemini 2.5 and 3 models give, so never a snapshot a model
could not have written.  Past that a digest stops being a memory an agent
can use: on a 10-million-token recording, 15% would be a snapshot larger
than the whole window.  Where 15% cannot hold what an agent needs to carry
on (the goal, the requests, the user's rules, an earlier snapshot's lines,
open failures, what changed and what commands found), the budget grows to
what those take (``room``), never past Gemini CLI's own rule (a snapshot
smaller than what it replaces: at most ``RULE_MARGIN`` of it); where even
that would leave out the goal, the latest request or most of the rules and
earlier snapshot, the summariser fails saying so rather than write a snapshot
that forgets them (``grow=False`` keeps the plain 15%).  Whole lines are chosen by
priority until that budget is spent; a line is never cut to fit, a line
that does not fit is left out, and a section with no line is left out.
What goes first when the budget is short, in order (oldest first within
each): the agent's last words, failures a later run fixed, earlier
requests, web lookups, calls of other tools, paths that were only read,
listed or searched, commands that did not fail, then failed commands,
the agent's stated reasons, commits, files the shell changed, changed paths
(and how an edit changed each), what commands found, failures, memory, a
call without its result, the current task's status, the plan, the user's
first request, the earlier snapshot's lines, the user's constraints (one
given since an earlier snapshot outlasts its lines), the latest request, the
earlier snapshot's goal, and last the goal (lines that name the focus instruction's words
rank higher).  A path shown relative to the "path base" line
(``lines.ROOT_WORDS``) is only written with that line.  How many lines of each kind were
left out is part of the provenance (``Provenance.omitted``); the facts they
held show as lost in the independent check (``inspector.quality``).  When
the budget cannot hold even the empty ``<state_snapshot>`` frame (a
history of a few dozen tokens), or holds the frame but none of the lines the
history gives, the summariser fails with a message saying so: an empty
snapshot would replace a memory with nothing.  Like the Gemini path it answers two calls: the draft is the final
selection cut to 80% of the budget, so the verification adds back what the
draft left out.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from inspector.compaction import snapshot as snap
from inspector.compaction.prompts import (
    FOCUS_HEADING,
    GEMINI_CLI_ACKNOWLEDGEMENT,
    SECTIONS,
    VERIFY_REQUEST,
    is_request_text,
)
from inspector.compaction.statuses import NO_STATUSES, ToolStatuses
from inspector.compaction.summarisers.base import NO_ROOM, SummariserError, env_secrets, mask_secrets
from inspector.compaction.summarisers.digest import collect
from inspector.compaction.summarisers.items import K_GOAL, K_LATEST, K_PREVIOUS, K_ROOT, K_RULE, Item
from inspector.compaction.summarisers.lines import build_items, focus_words
from inspector.format import plural
from inspector.progress import SILENT, Reporter
from inspector.tokens import estimate_contents, text_quarters

RATIO = 0.15
CEILING_TOKENS = 65_536  # the most a Gemini 2.5 / 3 model writes in one answer (maxOutputTokens)
DRAFT_SHARE = 0.8
# At the rule's limit, a snapshot that would leave out the goal or the latest request, or most of these, is refused.
CORE_KINDS = frozenset({K_GOAL, K_LATEST, K_RULE, K_PREVIOUS})
MUST_KEEP = 775  # lines.SHELL_FILE and above: what the budget grows to hold (``room``)
RULE_MARGIN = 0.9  # of the tokens replaced: the most a grown budget takes


def render(items: Sequence[Item]) -> tuple[str, tuple[snap.LineSource, ...]]:
    """The snapshot text of ``items``, and where each of its lines comes from."""
    out = [OPEN]
    sources: list[snap.LineSource] = []
    by_section: dict[str, list[Item]] = {}
    for item in items:
        by_section.setdefault(item.section, []).append(item)
    for name in SECTIONS:
        lines = _section_lines(by_section.get(name, []))
        if not lines:
            continue  # an empty section says nothing: left out
        out.append(f"<{name}>")
        for text, turns in lines:
            out.append(f"- {text}")
            sources.append(snap.LineSource(name, text, turns))
        out.append(f"</{name}>")
    out.append(CLOSE)
    return "\n".join(out), tuple(sources)


def _section_lines(items: list[Item]) -> list[tuple[str, tuple[int, ...]]]:
    """Items in reading order; items of one group share a line (``group: a; b; c``)."""
    groups: dict[str, list[Item]] = {}
    order: list[tuple[int, str, Item | None]] = []
    for item in sorted(items, key=lambda it: it.seq):
        if item.group:
            if item.group not in groups:
                groups[item.group] = []
                order.append((item.seq, item.group, None))
            groups[item.group].append(item)
        else:
            order.append((item.seq, "", item))
    lines = []
    for _seq, group, single in order:
        if single is not None:
            lines.append((single.text, single.turns))
        else:
            members = groups[group]
            turns = tuple(sorted({t for m in members for t in m.turns}))
            lines.append((f"{group}: " + "; ".join(m.text for m in members), turns))
    return lines


OPEN, CLOSE = "<state_snapshot>", "</state_snapshot>"
FRAME = text_quarters(f"{OPEN}\n{CLOSE}")  # what ``render([])`` takes


class _Tally:
    """The quarter tokens ``render`` of a set of items takes, kept as items come and go.

    Summed piece by piece: exact for ASCII text, and never less than the
    whole for any text (the estimate of a long non-ASCII text is its length).
    """

    def __init__(self) -> None:
        self.quarters = FRAME
        self._sections: dict[str, int] = {}
        self._groups: dict[tuple[str, str], int] = {}

    def cost(self, item: Item) -> int:
        """What adding ``item`` takes: its line (or its place in its group's line), and its section's tags."""
        if item.group:
            opened = self._groups.get((item.section, item.group), 0) > 0
            cost = text_quarters(f"; {item.text}") if opened else text_quarters(f"- {item.group}: {item.text}\n")
        else:
            cost = text_quarters(f"- {item.text}\n")
        if not self._sections.get(item.section):
            cost += text_quarters(f"<{item.section}>\n</{item.section}>\n")
        return cost

    def add(self, item: Item) -> None:
        self.quarters += self.cost(item)
        self._count(item, 1)

    def remove(self, item: Item) -> None:
        self._count(item, -1)
        self.quarters -= self.cost(item)

    def _count(self, item: Item, step: int) -> None:
        self._sections[item.section] = self._sections.get(item.section, 0) + step
        if item.group:
            key = (item.section, item.group)
            self._groups[key] = self._groups.get(key, 0) + step


def _by_priority(items: Sequence[Item]) -> list[Item]:
    return sorted(items, key=lambda it: (-it.priority, -it.seq))


def fit(items: Sequence[Item], budget_quarters: int) -> list[Item]:
    """The highest-priority items whose rendering fits the budget (an item too big is passed over,
    and so is a path shown relative to a "path base" line that did not fit)."""
    picked: list[Item] = []
    tally = _Tally()
    based = False  # the "path base" line is in
    for item in _by_priority(items):
        if item.relative and not based:
            continue
        if tally.quarters + tally.cost(item) <= budget_quarters:
            tally.add(item)
            picked.append(item)
            based = based or item.kind == K_ROOT
    return picked


def trim(chosen: Sequence[Item], budget_quarters: int) -> list[Item]:
    """``chosen`` without its lowest-priority items, until its rendering fits the budget."""
    kept = _by_priority(chosen)
    tally = _Tally()
    for item in kept:
        tally.add(item)
    while kept and tally.quarters > budget_quarters:
        tally.remove(kept.pop())
    return kept


def omitted(items: Sequence[Item], chosen: Sequence[Item]) -> tuple[tuple[str, int], ...]:
    """How many items of each kind are not in ``chosen``, the kind dropped first first."""
    kept = {id(it) for it in chosen}
    counts: dict[str, int] = {}
    lowest: dict[str, int] = {}
    for item in items:
        if id(item) not in kept:
            counts[item.kind] = counts.get(item.kind, 0) + 1
            lowest[item.kind] = min(lowest.get(item.kind, item.priority), item.priority)
    return tuple(sorted(counts.items(), key=lambda kind_count: (lowest[kind_count[0]], kind_count[0])))


def budget_quarters(history: Sequence[dict[str, Any]], ratio: float = RATIO, tokens: int | None = None) -> int:
    """The snapshot's budget in quarter tokens: ``ratio`` of the estimated tokens replaced (an earlier
    snapshot in ``history`` counts like any turn), at most ``CEILING_TOKENS``.  ``tokens``: the
    history's estimate, if known."""
    replaced = estimate_contents(history) if tokens is None else tokens
    return min(int(replaced * 4 * ratio), CEILING_TOKENS * 4)


@dataclass(frozen=True)
class Room:
    """The budget a history gets (quarter tokens), and why."""

    budget: int
    needed: int  # what the lines an agent needs to carry on take (``MUST_KEEP``), with the frame
    cap: int  # the most a grown budget may take: Gemini CLI's rule, at most ``CEILING_TOKENS``
    ruled: bool  # the cap is Gemini CLI's rule (not the ceiling)

    @property
    def short(self) -> bool:
        """Whether even the most the rule allows cannot hold what an agent needs."""
        return self.ruled and self.needed > self.cap


def room(items: Sequence[Item], budget: int, replaced_tokens: int) -> Room:
    """The budget, grown where it cannot hold what an agent needs to carry on (``MUST_KEEP``: the goal, the
    latest request, the user's rules, failures no later run fixed, a call without its result; and every
    line of an earlier snapshot): up to what those take, never past Gemini CLI's rule (the snapshot and the model's
    acknowledgement together no larger than the turns they replace, with ``RULE_MARGIN`` for the
    estimate) nor ``CEILING_TOKENS``."""
    must = [it.priority for it in items if it.priority >= MUST_KEEP or it.kind == K_PREVIOUS]
    floor = min(must, default=MUST_KEEP)  # ``fit`` takes lines by priority: all above the lowest it must keep
    tally = _Tally()
    for item in items:
        if item.priority >= floor:
            tally.add(item)
    rule = int(replaced_tokens * 4 * RULE_MARGIN) - text_quarters(GEMINI_CLI_ACKNOWLEDGEMENT)
    cap = min(rule, CEILING_TOKENS * 4)
    return Room(max(budget, min(tally.quarters, cap)), tally.quarters, cap, rule <= CEILING_TOKENS * 4)


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


def focus_note(focus: str | None, items: Sequence[Item], chosen: Sequence[Item]) -> str | None:
    """How a focus instruction was used, in one plain sentence (None without one)."""
    if not focus or not focus.strip():
        return None
    words = sorted(focus_words(focus))
    if not words:
        return ("The offline summariser cannot follow this focus instruction: it holds no word to look for. "
                "It only moves lines that name the instruction's words to the front; use Gemini for free-form "
                "instructions.")
    matched = [it for it in items if it.focused]
    if not matched:
        return (f"The offline summariser cannot honour this focus: none of its words ({', '.join(words)}) appear "
                "in what the summarised turns record, so the snapshot is the same as without it. Use Gemini for "
                "free-form instructions.")
    kept = sum(1 for it in chosen if it.focused)
    line = "line" if len(matched) == 1 else "lines"
    return (f"Focus honoured by keyword only: {kept:,} of {len(matched):,} {line} naming "
            f"{', '.join(words)} kept first. The offline summariser does not follow other instructions in it.")


@dataclass
class _Run:
    """The digest of one history (both calls of a compaction read the same one)."""

    key: tuple[tuple[int, ...], str | None]
    history: list[dict[str, Any]]  # held so that the ids in ``key`` stay theirs
    items: list[Item]
    budget: int
    room: Room
    draft_text: str = ""
    full: list[Item] | None = None  # the items that fit the whole budget (both calls use them)

    def fitted(self) -> list[Item]:
        if self.full is None:
            self.full = fit(self.items, self.budget)
        return self.full


class OfflineSummariser:
    """The deterministic, grounded summariser; the default when no Gemini key is set.

    ``statuses``: the recorded status of each tool call (``tool_statuses``),
    given at construction or by ``compress`` through ``ground``.
    ``reporter``: progress per turn and cancellation (``inspector.progress``),
    given at construction or later through ``use_reporter``.
    """

    name = "offline"

    def __init__(
        self,
        model: str | None = None,
        *,
        statuses: ToolStatuses = NO_STATUSES,
        reporter: Reporter = SILENT,
        ratio: float = RATIO,
        grow: bool = True,
    ) -> None:
        self.model = model
        self.grow = grow  # let the budget grow to hold what an agent needs (``room``); off until its tests are in
        self.statuses = statuses
        self.reporter = reporter
        self.ratio = ratio
        self.tokens: int | None = None
        self.names: tuple[int | None, ...] = ()
        self._run: _Run | None = None
        self._provenance: dict[str, snap.Provenance] = {}

    def use_reporter(self, reporter: Reporter) -> None:
        self.reporter = reporter

    def ground(self, statuses: ToolStatuses, tokens: int | None = None, names: Sequence[int | None] = ()) -> None:
        """Read outcomes from these recorded statuses from now on; ``tokens``: the estimated tokens of
        the history the next calls summarise (measured here when not given); ``names``: the recorded
        turn each of its turns is, where it is not the recorded history."""
        names = tuple(names)
        if statuses is not self.statuses or tokens != self.tokens or names != self.names:
            self.statuses, self.tokens, self.names, self._run = statuses, tokens, names, None

    async def summarise(self, system_prompt: str, contents: list[dict[str, Any]]) -> str:
        return self.summarise_sync(contents)

    def cite(self, snapshot: str) -> snap.Provenance | None:
        """Where each line of a snapshot this summariser wrote comes from (None for any other text)."""
        return self._provenance.get(snapshot.strip())

    def summarise_sync(self, contents: Sequence[dict[str, Any]]) -> str:
        history, draft, focus, mode = split_request(contents)
        run = self._digest(history, focus)
        if run.budget < FRAME:
            raise SummariserError(
                f"the {run.budget / 4 / self.ratio:,.0f} tokens to summarise leave {run.budget / 4:,.1f} tokens for "
                f"the snapshot ({self.ratio:.0%}), less than even an empty one takes ({FRAME / 4:,.1f})",
                kind=NO_ROOM)
        full = run.fitted()
        if self.grow and run.room.short:
            kept = {id(it) for it in full}
            core = [it for it in run.items if it.kind in CORE_KINDS]
            lost = [it for it in core if id(it) not in kept]
            if any(it.kind in (K_GOAL, K_LATEST) for it in lost) or 2 * len(lost) > len(core):
                raise SummariserError(
                    f"the goal, the requests, the user's rules and an earlier snapshot's lines take "
                    f"{run.room.needed / 4:,.0f} tokens with the open failures; a snapshot of these "
                    f"{run.room.cap / 4 / RULE_MARGIN:,.0f} tokens may take at most {run.room.cap / 4:,.0f} (it must "
                    f"be smaller than what it replaces), and would leave out {plural(len(lost), 'of those line')}: "
                    "compaction refused rather than forget them", kind=NO_ROOM)
        if run.items and not full:
            shortest = min((_Tally().cost(item) for item in run.items if not item.relative), default=0)
            raise SummariserError(
                f"the {run.budget / 4:,.1f} tokens left for the snapshot ({self.ratio:.0%} of what it replaces) hold "
                f"none of the {len(run.items):,} lines the history gives (the shortest takes "
                f"{(FRAME + shortest) / 4:,.1f} with the frame): an empty snapshot would forget all of it",
                kind=NO_ROOM)
        if mode == "verify" and draft is not None and draft.strip() == run.draft_text:
            chosen = full  # the check adds what the draft's smaller budget left out
        else:
            chosen = trim(full, int(run.budget * DRAFT_SHARE))
        text, sources = render(chosen)
        text = mask_secrets(text, env_secrets())
        if mode == "draft":
            run.draft_text = text
        self._provenance[text] = snap.Provenance(sources, focus_note(focus, run.items, chosen),
                                                 omitted(run.items, chosen), run.budget // 4)
        return text

    def _digest(self, history: list[dict[str, Any]], focus: str | None) -> _Run:
        key = (tuple(id(c) for c in history), focus)
        if self._run is not None and self._run.key == key:
            return self._run
        total = len(history)
        reporter = self.reporter

        def tick(done: int) -> None:
            reporter.check()
            reporter.report("offline digest", done, total)

        digest = collect(history, self.statuses, tick)
        reporter.report("offline digest", total, total)
        items = build_items(digest, focus, self.names)
        budget = budget_quarters(history, self.ratio, self.tokens)
        grown = room(items, budget, estimate_contents(history) if self.tokens is None else self.tokens)
        self._run = _Run(key, history, items, grown.budget if self.grow else budget, grown)
        return self._run
