"""What the user asked, as the offline snapshot says it: the current task, its status, the rules, the
earlier requests.

The goal is the user's first substantive request (four words or more:
"hi", "yes" are not tasks), and the current task is the latest request,
each quoted whole up to ``WHOLE_CHARS``, with the task files the agent read
for it (a Markdown or text file read before the next request).  An earlier
snapshot's goal stays the goal.  The status of the latest request is what
the record shows after it: the tool calls made for
it, and whether the agent's last turn is a message with no call after it
(then the work waits for the user) or a call (the work was going on).
Earlier requests are context, each with the calls made before the next one.
"""

from __future__ import annotations

import posixpath
import re

from inspector.compaction.summarisers.digest import Digest, Prompt
from inspector.compaction.summarisers.items import (
    COMMAND_OK,
    EARLIER,
    GOAL,
    K_EARLIER,
    K_GOAL,
    K_LATEST,
    K_RULE,
    K_STATUS,
    LATEST,
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
_TASK_FILE = re.compile(r"\.(?:md|markdown|txt|rst)$", re.I)


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
    """What the record shows after the latest request, in its words."""
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


def requests(out: Items, digest: Digest) -> None:

    prompts = digest.prompts
    if not prompts:
        return
    previous = digest.previous
    since = digest.previous_turn if previous is not None else None
    takers = [(p, content_words(p.text)) for p in prompts if TAKE_BACK.search(p.text)]
    goal: Prompt | None = None
    if previous is None or not previous.lines("overall_goal"):
        first = next((n for n, p in enumerate(prompts) if substantial(p.text)), 0)
        goal = prompts[first]
        if goal is prompts[-1]:
            said = "The user asked"
        elif first:  # "hi", "whoami" came first: this is not their first request, and is not said to be
            said = f"The user's first request after {plural(first, 'shorter one')}"
        else:
            said = "The user's first request"
        text, turns = f"{said}: {lead(goal.text, WHOLE_CHARS)}", [goal.turn]
        after = next((p.turn for p in prompts if p.turn > goal.turn), digest.turns)
        files = _task_files(digest, goal, after)
        if files:
            text += _files_words(out, files)
            turns += [t for *_, both in files for t in both]
        words = content_words(goal.text)
        later = next((p for p, theirs in reversed(takers)
                      if p.turn > goal.turn and words & theirs and GIVE_UP.search(p.text)), None)
        if later is not None:  # the user came back to it ("Forget the login bug; ..."): said with it
            text += f"; a later request (turn {out.name(later.turn):,}) says: {lead(later.text, 200)}"
            turns.append(later.turn)
        out.add("overall_goal", K_GOAL, GOAL, goal.turn, text, turns)
    latest = prompts[-1]
    status, status_turns = _status(out, digest, latest)
    latest_line = f"Latest request: {lead(latest.text, WHOLE_CHARS)}"
    status_line = f"Status of the latest request (turn {out.name(latest.turn):,}), as recorded: {status}"
    files = _task_files(digest, latest, digest.turns) if latest is not goal else []
    if files:
        status_line += _files_words(out, files)
        status_turns += [t for *_, both in files for t in both]
    for prompt in prompts:
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
            priority = RULE
            if since is not None and prompt.turn > since and quote(sentence, 300)[1:-1] not in latest_line:
                priority = RULE_SINCE  # the user's newer word outranks the earlier snapshot's rules
            out.add("active_constraints", K_RULE, priority, prompt.turn, text, turns)
    if latest is not goal:
        out.add("task_state", K_LATEST, LATEST, latest.turn, latest_line, [latest.turn])
    current = next((p for p in reversed(prompts) if substantial(p.text)), None)
    if current is not None and current is not goal and current is not latest and current.text != latest.text:
        # "go on", "yes" came after it: the last request that says what to do is the task at hand
        out.add("task_state", K_LATEST, LATEST - 2, current.turn,
                f"The latest request of four words or more (turn {out.name(current.turn):,}): "
                f"{lead(current.text, WHOLE_CHARS)}", [current.turn])
    out.add("task_state", K_STATUS, STATUS, latest.turn, status_line, [latest.turn, *status_turns])
    for n, prompt in enumerate(prompts[:-1]):
        if prompt is goal or prompt is current or prompt.text == latest.text:
            continue
        # Newer requests rank higher; those since an earlier snapshot above all it carried (they may undo it).
        newer = prompt.turn / max(1, digest.turns)
        if since is not None and prompt.turn > since:
            priority = SINCE_PREVIOUS + int(newer * (LATEST - 1 - SINCE_PREVIOUS))
        else:
            priority = EARLIER + int(newer * (COMMAND_OK - 1 - EARLIER))
        following = prompts[n + 1].turn
        calls = sum(1 for c in digest.calls if prompt.turn < c.turn < following)
        done = f", then {plural(calls, 'tool call')} before the next request" if calls else ""
        out.add("task_state", K_EARLIER, priority, prompt.turn,
                f"Earlier request (turn {out.name(prompt.turn):,}{done}): {lead(prompt.text, 300)}", [prompt.turn])
