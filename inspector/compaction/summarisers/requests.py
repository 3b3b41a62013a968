"""What the user asked, as the offline snapshot says it: the current task and its status, the rules,
the earlier requests.

The goal is the current task: the user's latest substantive request (four
words or more, or eight characters of a script written without spaces: "hi",
"yes", "go on" set no task), quoted whole up to ``WHOLE_CHARS``, with the task
files the agent read for it (a Markdown or text file read after it), the
shorter prompts the user wrote after it ("go on", "yes") said beside it, and
its status as the record shows it (a line of its own below it, which a
short budget drops first): the tool calls made after it, and whether the
agent's last turn is a message with no call after it (the work waits for
the user) or a call (the work was going on).  Where no prompt is
substantive, the first one is the task (after a "hello" the agent mostly
took its task from a file it read).

An earlier ``<state_snapshot>``'s goal stays the goal while no substantive
request came after it (a "go on" since is then the latest request, said with
its status in ``task_state``).  Once one came, that request is the goal and
the earlier goal is carried beside it in ``overall_goal`` as the earlier
snapshot's word (``carried_goal``), ranked just below it: it may hold the
ultimate aim the new request is a step of.

Earlier requests are context, in ``task_state``, each with the calls made
before the next request.  The user's first request, when it is not the
current task, ranks above the others (it often holds the ultimate aim) and
carries the task files read for it and the agent's answer (its last words
before the next request).  An earlier goal (the first request, the earlier
snapshot's) that a later request gives up ("Forget the login bug; ...") is
said with that request's words.  No request is quoted twice.

Each of the user's rules is quoted as they wrote it, with the words that take
it back or change it (further on in the same prompt, or a later one), and the
agent's own sentence that says how it reads it (``words.reading_sentences``,
written after the request and before the next one, sharing the rule's words),
with its turn: what each of them said, never a guess at which reading is
right.
"""

from __future__ import annotations

import bisect
import posixpath
import re

from inspector.compaction.summarisers.digest import Digest, Prompt
from inspector.compaction.summarisers.items import (
    AS_OF_PREVIOUS,
    COMMAND_OK,
    EARLIER,
    FIRST_REQUEST,
    GOAL,
    K_EARLIER,
    K_GOAL,
    K_LATEST,
    K_RULE,
    K_STATUS,
    LATEST,
    PREVIOUS_GOAL,
    RULE,
    RULE_SINCE,
    SINCE_PREVIOUS,
    STATUS,
    Items,
)
from inspector.compaction.summarisers.words import (
    GIVE_UP,
    TAKE_BACK,
    code,
    content_words,
    lead,
    quote,
    rule_sentences,
    said_again,
    substantial,
)
from inspector.format import plural

WHOLE_CHARS = 600  # a request up to this long is quoted whole: its most specific part is often in its middle
SHORT_SAID = 3  # the user's shorter prompts after the current task quoted beside it (the newest)
_TASK_FILE = re.compile(r"\.(?:md|markdown|txt|rst)$", re.I)


def new_task_since(digest: Digest) -> bool:
    """Whether a substantive request came after the earlier snapshot (then it is the goal, not the
    earlier snapshot's goal)."""
    since = digest.previous_turn
    return since is not None and any(p.turn > since and substantial(p.text) for p in digest.prompts)


def current_task(digest: Digest) -> Prompt | None:
    """The request the snapshot's goal is: the latest substantive one (the first prompt where none
    is); None where an earlier snapshot's goal stays the goal (or there is no prompt)."""
    prompts = digest.prompts
    if not prompts:
        return None
    if digest.previous is not None and digest.previous.lines("overall_goal") and not new_task_since(digest):
        return None
    return next((p for p in reversed(prompts) if substantial(p.text)), prompts[0])


def _given_up(out: Items, digest: Digest, words: set[str], after: int,
              goal: Prompt | None) -> tuple[str, list[int], Prompt | None]:
    """The newest request after turn ``after`` that gives up something ``words`` name ("Forget the
    login bug; ..."): its words (or, where it is the current task, which the goal quotes, its turn),
    its turn, and the request; ("", [], None) when none does."""
    later = next((p for p in reversed(digest.prompts)
                  if p.turn > after and GIVE_UP.search(p.text) and words & content_words(p.text)), None)
    if later is None:
        return "", [], None
    turn = f"{out.name(later.turn):,}"
    if later is goal:
        return f"; the current task (turn {turn}) is a later request that names it", [later.turn], later
    return f"; a later request (turn {turn}) says: {lead(later.text, 200)}", [later.turn], later


def goal_words(line: str) -> set[str]:
    """The content words of an earlier snapshot's goal line (its bullet and "as the earlier snapshot
    had it" left out: they name no goal)."""
    text = line.lstrip("-*• ").strip()
    return content_words(text[len(AS_OF_PREVIOUS):] if text.startswith(AS_OF_PREVIOUS) else text)


def carried_goal(out: Items, digest: Digest, line: str, text: str) -> tuple[str, list[int], int]:
    """An earlier snapshot's goal line ``line`` as this snapshot carries it (``text``: already as the
    earlier snapshot's word): its text, with the words of a later request that gives it up; the turns
    it names; its priority (the goal's while no substantive request came since, else just below)."""
    turn = digest.previous_turn if digest.previous_turn is not None else -1
    goal = current_task(digest)
    said, turns, _ = _given_up(out, digest, goal_words(line), turn, goal)
    return text + said, [turn, *turns], GOAL if goal is None else PREVIOUS_GOAL


def _task_files(digest: Digest, prompt: Prompt, until: int) -> list[tuple[str, int, str, tuple[int, ...]]]:
    """(path, turn, first line, turns of the call and its result) of the text files the agent read after
    ``prompt`` and before turn ``until``."""
    out: list[tuple[str, int, str, tuple[int, ...]]] = []
    for call in digest.calls:
        if prompt.turn < call.turn < until and call.kind == "read" and call.outcome.state == "ok":
            for path in call.paths:
                if _TASK_FILE.search(path) and all(found[0] != path for found in out):
                    out.append((path, call.turn, call.opening if len(call.paths) == 1 else "", call.turns))
    return out[:3]


def _files_words(out: Items, files: list[tuple[str, int, str, tuple[int, ...]]]) -> str:
    """"; the text file the agent took in next: `TASK.md` (turn 3), which begins "..."" (where the task
    may be written; no word of what was done to a file, so the quoted words name none it touched)."""
    said = [f"{code(posixpath.basename(p))} (turn {out.name(t):,})" + (f", which begins {quote(first, 160)}"
                                                                       if first else "") for p, t, first, _ in files]
    return (("; the text file the agent took in next: " if len(said) == 1 else "; the text files the agent took in "
             "next: ") + ", ".join(said))


def _status(out: Items, digest: Digest, prompt: Prompt) -> tuple[str, list[int]]:
    """What the record shows after a request, in its words."""
    calls = [c for c in digest.calls if c.turn > prompt.turn]
    last = digest.agent_last
    if not calls:
        if last is not None and last.turn > prompt.turn:
            return (f"the agent answered in turn {out.name(last.turn):,} with no tool call; nothing after it "
                    "(waiting for the user)", [last.turn])
        return "no answer is recorded after it", []
    final = calls[-1]
    made = plural(len(calls), "tool call")
    if last is not None and last.turn > final.turn:
        return (f"{made} after it, then the agent's message in turn {out.name(last.turn):,} with no call after it "
                "(waiting for the user)", [last.turn])
    return f"in progress: {made} after it, the last in turn {out.name(final.turn):,}", [final.turn]


def _calls_between(digest: Digest, start: int, end: int) -> int:
    """How many tool calls the agent made after turn ``start`` and before turn ``end`` (the calls are in
    turn order)."""
    return bisect.bisect_left(digest.calls, end, key=lambda c: c.turn) - bisect.bisect_right(
        digest.calls, start, key=lambda c: c.turn)


def _goal(out: Items, digest: Digest, goal: Prompt) -> str:
    """The goal line: the current task, the shorter prompts after it, its task files and status. Returns its text."""
    prompts = digest.prompts
    after = [p for p in prompts if p.turn > goal.turn]  # shorter ones only: ``goal`` is the latest that says more
    if len(prompts) == 1 and digest.previous is None:
        said = "The user asked"
    elif not substantial(goal.text):  # no prompt says more: the first one, whose task a file may hold
        first = "first request since the earlier snapshot" if digest.previous is not None else "first request"
        said = f"Current task (turn {out.name(goal.turn):,}, the user's {first}; none later says more)"
    elif after:
        said = f"Current task (turn {out.name(goal.turn):,}, the user's latest request of four words or more)"
    else:  # said in few words: with a short budget, it is the line that stays
        said = f"Current task (turn {out.name(goal.turn):,})"
    text, turns = f"{said}: {lead(goal.text, WHOLE_CHARS)}", [goal.turn]
    if after:
        shown = after[-SHORT_SAID:]
        more = f" (and {plural(len(after) - len(shown), 'earlier one')})" if len(after) > len(shown) else ""
        text += ("; after it the user wrote only " + ", ".join(f"{quote(p.text, 120)} (turn {out.name(p.turn):,})"
                                                              for p in shown) + more)
        turns += [p.turn for p in shown]
    files = _task_files(digest, goal, digest.turns)
    if files:
        text += _files_words(out, files)
        turns += [t for *_, both in files for t in both]
    out.add("overall_goal", K_GOAL, GOAL, goal.turn, text, turns)
    status, status_turns = _status(out, digest, goal)  # its own line: a short budget keeps the task before it
    out.add("overall_goal", K_STATUS, STATUS, goal.turn,
            f"Status of the current task, as recorded: {status}", [goal.turn, *status_turns])
    return text


def _first(out: Items, digest: Digest, first: Prompt, goal: Prompt) -> set[int]:
    """The user's first request, when the current task is a later one: context, with what the record
    shows for it. Returns the turns of the prompts it quotes."""
    prompts = digest.prompts
    before = sum(1 for p in prompts if p.turn < first.turn)  # "hi", "whoami" came first: said, as it is no task
    following = next(p.turn for p in prompts if p.turn > first.turn)
    calls = _calls_between(digest, first.turn, following)
    said = "The user's first request" + (f" after {plural(before, 'shorter one')}" if before else "")
    done = f", then {plural(calls, 'tool call')} before the next request" if calls else ""
    text = f"{said} (turn {out.name(first.turn):,}{done}): {lead(first.text, WHOLE_CHARS)}"
    turns = [first.turn]
    files = _task_files(digest, first, following)
    if files:
        text += _files_words(out, files)
        turns += [t for *_, both in files for t in both]
    answer = digest.answers.get(first.turn)
    if answer is not None:
        text += f"; the agent's last words before the next request (turn {out.name(answer.turn):,}): " \
                f"{lead(answer.text, 200)}"
        turns.append(answer.turn)
    given, given_turns, later = _given_up(out, digest, content_words(first.text), first.turn, goal)
    out.add("task_state", K_EARLIER, FIRST_REQUEST, first.turn, text + given, turns + given_turns)
    return {first.turn} | ({later.turn} if later is not None else set())


def _reading(out: Items, digest: Digest, prompt: Prompt, following: int, words: set[str]) -> tuple[str, list[int]]:
    """The agent's newest sentence, after ``prompt`` and before the next request (turn ``following``), that
    says how it reads something and shares the rule's words (two, or all it has): quoted with its turn."""
    if not words or not digest.readings:
        return "", []
    need = min(2, len(words))
    found = next((r for r in reversed(digest.readings)
                  if prompt.turn < r.turn < following and len(words & content_words(r.text)) >= need), None)
    if found is None:
        return "", []
    return f"; the agent wrote in turn {out.name(found.turn):,}: {quote(found.text, 300)}", [found.turn]


def _rules(out: Items, digest: Digest, asked: str) -> None:
    """The user's rules, each quoted with what changed it and the agent's reading of it; ``asked``: the
    line that quotes the current task (a rule it holds whole is said there)."""
    since = digest.previous_turn if digest.previous is not None else None
    takers = [(p, content_words(p.text)) for p in digest.prompts if TAKE_BACK.search(p.text)]
    prompts = digest.prompts
    for n, prompt in enumerate(prompts):
        following = prompts[n + 1].turn if n + 1 < len(prompts) else digest.turns
        for sentence, intro in rule_sentences(prompt.text):
            text, turns = quote(sentence, 300), [prompt.turn]
            if intro is not None:  # not the user's own words: handed over, and said so
                text += f" (in text the user handed over after {quote(intro, 120)})"
            words = content_words(sentence)
            again = said_again(prompt.text, sentence, words)
            if again is not None:  # taken back or changed further on in the same prompt
                text += f"; further on the same request says: {quote(again, 200)}"
            later = next((p for p, said in reversed(takers) if p.turn > prompt.turn and words & said), None)
            if later is not None:  # the user came back to it: their later words, not a guess at what they meant
                text += f"; a later request (turn {out.name(later.turn):,}) says: {lead(later.text, 200)}"
                turns.append(later.turn)
            if intro is None:  # the agent's own word on how it reads it, beside the user's
                reading, reading_turns = _reading(out, digest, prompt, following, words)
                text += reading
                turns += reading_turns
            priority = RULE
            if since is not None and prompt.turn > since and quote(sentence, 300)[1:-1] not in asked:
                priority = RULE_SINCE  # the user's newer word outranks the earlier snapshot's rules
            out.add("active_constraints", K_RULE, priority, prompt.turn, text, turns)


def requests(out: Items, digest: Digest) -> None:
    prompts = digest.prompts
    if not prompts:
        return
    since = digest.previous_turn if digest.previous is not None else None
    goal = current_task(digest)
    latest = prompts[-1]
    quoted: set[int] = set()  # the turns of the prompts a line quotes
    if goal is not None:
        asked = _goal(out, digest, goal)
        quoted |= {goal.turn} | {p.turn for p in prompts if p.turn > goal.turn}
        for line in digest.previous.lines("overall_goal") if digest.previous is not None else []:
            giving_up = _given_up(out, digest, goal_words(line), -1 if since is None else since, goal)[2]
            if giving_up is not None:  # quoted in the earlier goal's line (``carried_goal``)
                quoted.add(giving_up.turn)
        first = next((p for p in prompts if substantial(p.text)), None)
        if digest.previous is None and first is not None and first.turn < goal.turn:
            quoted |= _first(out, digest, first, goal)
    else:  # the earlier snapshot's goal stays the goal: the latest request (a "go on") and its status
        asked = f"Latest request: {lead(latest.text, WHOLE_CHARS)}"
        out.add("task_state", K_LATEST, LATEST, latest.turn, asked, [latest.turn])
        status, status_turns = _status(out, digest, latest)
        files = _task_files(digest, latest, digest.turns)
        status_line = f"Status of the latest request (turn {out.name(latest.turn):,}), as recorded: {status}"
        if files:
            status_line += _files_words(out, files)
            status_turns += [t for *_, both in files for t in both]
        out.add("task_state", K_STATUS, STATUS, latest.turn, status_line, [latest.turn, *status_turns])
        quoted.add(latest.turn)
    _rules(out, digest, asked)
    said = {p.text for p in prompts if p.turn in quoted}
    for n, prompt in enumerate(prompts[:-1]):
        if prompt.turn in quoted or prompt.text in said:
            continue
        said.add(prompt.text)
        # Newer requests rank higher; those since an earlier snapshot above all it carried (they may undo it).
        newer = prompt.turn / max(1, digest.turns)
        if since is not None and prompt.turn > since:
            priority = SINCE_PREVIOUS + int(newer * (LATEST - 1 - SINCE_PREVIOUS))
        else:
            priority = EARLIER + int(newer * (COMMAND_OK - 1 - EARLIER))
        calls = _calls_between(digest, prompt.turn, prompts[n + 1].turn)
        done = f", then {plural(calls, 'tool call')} before the next request" if calls else ""
        out.add("task_state", K_EARLIER, priority, prompt.turn,
                f"Earlier request (turn {out.name(prompt.turn):,}{done}): {lead(prompt.text, 300)}", [prompt.turn])
