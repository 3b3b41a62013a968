"""The candidate lines of the offline snapshot, each with its section, priority and turns.

``build_items`` turns a ``digest.Digest`` into ``Item``s.  Texts are the
history's own words (``words``): the user's quoted, commands and paths verbatim
(long commands cut after their first line's first 200 characters, a commit's
message always kept), outcomes as ``outcomes.Outcome.text`` words, error
texts quoted.  Beside them: what commands printed that carries a result and
the line that says why one failed (``findings``), the agent's stated reasons,
files the shell made, moved or deleted and how an edit changed its file
(``artifacts``), the requests and their status (``requests``).  The
priorities decide what a short budget drops first (see the ``offline``
module doc).
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Sequence

from inspector.compaction import snapshot as snap
from inspector.compaction.outcomes import CANCELLED, FAILED, NOT_AS_ASKED, OK, TERMINATED, UNKNOWN, Outcome
from inspector.compaction.prompts import SECTIONS
from inspector.compaction.summarisers.artifacts import edit_words, final_states, shell_events, state_words
from inspector.compaction.summarisers.digest import Call, Digest, Prompt
from inspector.compaction.summarisers.findings import GIT_COMMIT, chain_words, looks_only
from inspector.compaction.summarisers.items import (
    AGENT,
    AS_OF_PREVIOUS,
    CHANGED,
    COMMAND_FAILED,
    COMMAND_OK,
    COMMIT,
    FAILURE,
    FINDING,
    FIXED,
    K_AGENT,
    K_CHANGED,
    K_COMMAND,
    K_COMMAND_FAILED,
    K_COMMIT,
    K_FAILURE,
    K_FINDING,
    K_FIXED,
    K_MEMORY,
    K_OTHER_TOOL,
    K_PENDING,
    K_PLAN,
    K_PREVIOUS,
    K_READ_PATH,
    K_REASON,
    K_ROOT,
    K_SHELL_FILE,
    K_WEB,
    LOOKUP,
    LOOKUPS,
    LOOKUPS_SAID,
    LOOP_RUNS,
    MEMORY,
    OTHER_TOOL,
    PENDING,
    PLAN,
    PREVIOUS,
    PREVIOUS_RULE,
    PREVIOUS_STATE,
    READ_PATH,
    REASON,
    REASONS,
    ROOT,
    ROOT_WORDS,
    SHELL_FILE,
    TIME_BOUND,
    WEB,
    Item,
    Items,
)
from inspector.compaction.summarisers.removals import folder_of, gone_after, path_root, resolve, shell_removals
from inspector.compaction.summarisers.requests import carried_goal, requests
from inspector.compaction.summarisers.words import (
    COMMAND_CHARS,
    clean,
    code,
    command_line,
    commit_message,
    focus_words,
    lead,
    neutral,
    quote,
    rule_sentences,
)
from inspector.format import plural

__all__ = ["Item", "build_items", "clean", "code", "command_line", "commit_message", "focus_words", "lead", "neutral",
           "quote", "rule_sentences"]

def build_items(digest: Digest, focus: str | None = None, names: Sequence[int | None] = ()) -> list[Item]:
    """Every line the digest may write; ``names``: the recorded turn each digested turn is (none: the same)."""
    out = Items(focus, names)
    _previous(out, digest)
    requests(out, digest)
    root = path_root(digest.calls)
    if root:
        first = next(c.turn for c in digest.calls if any(p.startswith(root + "/") for p in c.paths))
        carried = " (lines the earlier snapshot had excepted)" if digest.previous is not None else ""
        out.add("file_system_state", K_ROOT, ROOT, -1,
                f"{ROOT_WORDS} {code(root)}{carried}", [first])
    _commands(out, digest.calls)
    _paths(out, digest.calls, root, digest.workspace)
    _failures(out, digest.calls, root)
    _others(out, digest, root)
    return out.items


def _previous(out: Items, digest: Digest) -> None:
    previous, turn = digest.previous, digest.previous_turn
    if previous is None or turn is None:
        return
    # What the earlier snapshot said held when it was written.  Where later turns went on, they may
    # have changed any of it (a goal given up, a rule lifted, a file deleted): every line is then
    # carried as the earlier snapshot's word, and the requests since rank above it (``_prompts``).
    moved_on = any(c.turn > turn for c in digest.calls) or any(p.turn > turn for p in digest.prompts)
    root, excepted = _previous_root(previous)
    for section in previous.sections:
        known = section.name in SECTIONS
        for line in section.lines:
            text = line.lstrip("-*• ").strip()
            if snap.normalise_line(text) in ("none", "(none)", ""):
                continue
            carried = text.startswith(AS_OF_PREVIOUS)  # carried already from the snapshot before it
            if carried:
                text = text[len(AS_OF_PREVIOUS):].strip()  # said once: it is the earlier snapshot's word
            if text.startswith(ROOT_WORDS):
                if carried:  # whose lines it held cannot be told: said as the earlier snapshot's, of its own
                    text = f"Its paths in backticks without a leading `/` were relative to{text[len(ROOT_WORDS):]}"
                else:
                    continue  # its own paths are written whole below: "this snapshot" would be the new one
            elif root is not None and not (carried and excepted):
                text = _rooted(text, root)
            name = section.name if known else "key_knowledge"
            if not known:
                text = f"{section.name}: {text}"
            if moved_on:
                text = f"{AS_OF_PREVIOUS} {text}"
            if moved_on and name in TIME_BOUND:
                priority = PREVIOUS_STATE
            else:
                priority = {"active_constraints": PREVIOUS_RULE}.get(name, PREVIOUS)
            text, turns = clean(text, 400), [turn]
            if name == "overall_goal":  # the goal, or context once a request since is (``requests``)
                text, turns, priority = carried_goal(out, digest, line, text)
            out.add(name, K_PREVIOUS, priority, turn, text, turns)


_SPAN = re.compile(r"(`+)( ?)([^`\n](?:.*?[^`\n])?)\2\1(?!`)")
_PATH_HEADS = ("READ: ", "LISTED: ", "SEARCHED: ", "WROTE: ", "EDITED: ", "CREATED: ")


def _previous_root(previous: snap.Snapshot) -> tuple[str | None, bool]:
    """The folder an earlier offline snapshot's own "path base" line names (None: it has none), and
    whether that line excepts the lines it carried from the snapshot before it."""
    for line in previous.lines("file_system_state"):
        text = line.lstrip("-*• ").strip()
        if text.startswith(ROOT_WORDS):
            found = _SPAN.search(text, len(ROOT_WORDS))
            if found is not None and found.group(3).startswith("/"):
                return found.group(3), "excepted" in text[found.end():]
    return None, False


def _rooted(text: str, root: str) -> str:
    """An earlier snapshot's line with the paths it gave relative to its "path base" written whole: the
    paths of a path line (``READ: `a`; `b```), and the path a tool acted ``on``."""
    def whole(found: re.Match[str]) -> str:
        path = found.group(3)
        return found.group() if path.startswith("/") else code(f"{root}/{path}")

    if text.startswith(_PATH_HEADS):
        return _SPAN.sub(whole, text)
    first = _SPAN.match(text)
    if first is not None and text.startswith(" on ", first.end()):
        at = first.end() + len(" on ")
        target = _SPAN.match(text, at)
        if target is not None:
            return text[:at] + whole(target) + text[target.end():]
    return text


def _display(path: str, root: str | None) -> str:
    if root and path.startswith(root + "/"):
        return path[len(root) + 1:]
    return path


def _commands(out: Items, calls: list[Call]) -> None:
    edits = {c.turn for c in calls if c.kind in ("write", "edit") and c.outcome.state == OK}
    lookups: dict[str, int] = {}  # read-only commands that ended as asked, by program: said as counts
    first_look = 1 << 62
    runs: dict[tuple[str, str], list[Call]] = {}  # the runs of one command in one folder, the whole command alike
    for call in calls:
        command = call.command() if call.kind == "shell" else None
        if command:
            runs.setdefault((command, folder_of(call)), []).append(call)
    lines = {key: command_line(key[0]) for key in runs}
    shown = Counter(lines.values())
    shown_in = Counter((text, key[1]) for key, text in lines.items())  # alike lines in one folder
    for key, group in runs.items():
        line = lines[key]
        where = ""
        if shown[line] > 1 and key[1]:  # run in other folders too: say which
            where = _in_folder(key[1])
            alike = shown_in[(line, key[1])]
        else:
            alike = shown[line]
        first = ""
        if alike > 1:  # other commands begin alike (scripts fed to one interpreter): say which
            first = f" (the one first run in turn {out.name(group[0].turn):,})"
        line = f"{code(line)}{first}{where}"
        last = group[-1]
        turns = [t for c in group for t in c.turns]
        states = [c.outcome for c in group]
        bad = any(o.went_wrong for o in states)
        loop = ""
        if len(group) >= LOOP_RUNS and not any(group[0].turn < t < last.turn for t in edits):
            loop = f"; ran {len(group):,} times from turn {out.name(group[0].turn):,} with no file edit between"
        looked = all(o.state == OK for o in states) and not group[0].findings and looks_only(key[0])
        if looked:
            lookups[key[0].split()[0]] = lookups.get(key[0].split()[0], 0) + len(group)
            first_look = min(first_look, group[0].turn)
        chained = _chained(last) if bad else ""
        out.add("recent_actions", K_COMMAND_FAILED if bad else K_COMMAND,
                COMMAND_FAILED if bad else LOOKUP if looked else COMMAND_OK,
                last.turn,
                f"{line} -> {_outcomes(states)}{chained}{loop}", turns)
        found = [c for c in group if c.findings]
        for n, call in enumerate(found[-2:] if len(found) > 1 and found[0].findings != found[-1].findings
                                 else found[-1:]):
            said = "; ".join(quote(f, 170) for f in call.findings)
            out.add("key_knowledge", K_FINDING, FINDING - (len(found) - n), call.turn,
                    f"{line} in turn {out.name(call.turn):,} ({call.outcome.text()}) printed: {said}", call.turns)
        for call in group:
            message = commit_message(call.command() or "")
            if message:
                out.add("artifact_trail", K_COMMIT, COMMIT, call.turn, _commit_line(message, call), call.turns)
    _lookups_line(out, lookups, calls)


def _lookups_line(out: Items, lookups: dict[str, int], calls: list[Call]) -> None:
    """One line with how many read-only lookups each program made (the lines of each rank low)."""
    if sum(lookups.values()) < LOOKUPS_SAID:
        return
    counts = ", ".join(f"{program} {plural(n, 'time')}" for program, n in
                       sorted(lookups.items(), key=lambda item: (-item[1], item[0])))
    turns = [c.turn for c in calls if c.kind == "shell" and (c.command() or "").split()[:1]
             and (c.command() or "").split()[0] in lookups]
    out.add("recent_actions", K_COMMAND, LOOKUPS, min(turns),
            f"Read-only lookups (searches, listings, files shown): {counts}", turns[:1] + turns[-1:])


def _chained(call: Call) -> str:
    """" (one exit code for a chain of 2 commands ...)" after a shell call that failed with the exit code of
    several commands joined by ``&&`` or ``;`` ("" otherwise): which of them failed, the record does not say."""
    if call.kind != "shell" or call.outcome.state != FAILED:
        return ""
    words = chain_words(call.command() or "")
    return f" ({words})" if words else ""


def _commit_line(message: str, call: Call) -> str:
    """A commit command's line: made only where its command ended ok; otherwise what the record says
    of the command, and the last line of its output in its own words ("nothing to commit, ...").  In a
    chain that failed (``git commit ... && git push``), the exit code may be another command's: said so,
    with git's own line for a commit it made where the output has one."""
    outcome = call.outcome
    if outcome.state == OK:
        return f"Commit {quote(message, 300)} (its command ended ok)"
    if outcome.state in (FAILED, TERMINATED):
        ended = f"its command {outcome.text()}"
    elif outcome.state == CANCELLED:
        ended = f"its command was {outcome.text()}"
    elif outcome.state == UNKNOWN:
        ended = "how its command ended was not recorded"
    else:
        ended = f"its command was {outcome.text()}"
    chained = _chained(call)
    text = f"A commit {quote(message, 300)} was asked for; {ended}{chained}"
    made = next((line for line in call.findings if GIT_COMMIT.match(line)), "") if chained else ""
    if made:
        text += f"; its output has git's line for a commit it made: {quote(made, 200)}"
    if outcome.tail:
        text += f"; its output ended {quote(outcome.tail, 160)}"
    return text


def _in_folder(folder: str) -> str:
    """The words that say which folder a command ran in ("" for the workspace)."""
    return f" (in {code(clean(folder, COMMAND_CHARS))})" if folder else ""


def _outcomes(states: list[Outcome]) -> str:
    if len(states) == 1:
        return states[0].text()
    if len({s.text() for s in states}) == 1:
        return f"{states[0].text()} (all {len(states):,} runs)"
    counts: dict[str, int] = {}
    for state in states:
        key = state.text() if state.meaning else state.state
        counts[key] = counts.get(key, 0) + 1
    words = {OK: "ok", FAILED: "failed", CANCELLED: "cancelled", TERMINATED: "terminated by a signal",
             UNKNOWN: "not recorded"}
    tally = ", ".join(f"{n:,} {words.get(s, s)}" for s, n in counts.items())
    return f"ran {len(states):,} times: {tally}; last {states[-1].text()}"


_OPS = {"read": ("file_system_state", "READ"), "list": ("file_system_state", "LISTED"),
        "glob": ("file_system_state", "SEARCHED"), "search": ("file_system_state", "SEARCHED"),
        "write": ("artifact_trail", "WROTE"), "edit": ("artifact_trail", "EDITED")}


def _paths(out: Items, calls: list[Call], root: str | None, workspace: str | None = None) -> None:
    touched: dict[tuple[str, str], list[Call]] = {}
    last_named: dict[str, int] = {}  # a path -> the last turn a call that went as asked named it
    for call in calls:
        if (call.kind not in _OPS or call.outcome.state in NOT_AS_ASKED
                or (call.result_turn is None and call.outcome.state != OK)):
            continue  # a failed call is stated with its failure; one with no result nor status, as pending
        section, op = _OPS[call.kind]
        if call.outcome.created:
            op = "CREATED"
        for path in call.paths:
            touched.setdefault((op, path), []).append(call)
            last_named[path] = max(last_named.get(path, -1), call.turn)
    removals = shell_removals(calls, workspace) if touched else []
    for (op, path), group in touched.items():
        section = "artifact_trail" if op in ("WROTE", "EDITED", "CREATED") else "file_system_state"
        times = f" ({len(group):,} times)" if len(group) > 1 and section == "artifact_trail" else ""
        changed = section == "artifact_trail"
        shown = _display(path, root)
        gone = gone_after(path, last_named[path], removals, workspace, out.name)
        out.add(section, K_CHANGED if changed else K_READ_PATH, CHANGED if changed else READ_PATH, group[-1].turn,
                f"{code(shown)}{times}{gone[0]}", [t for c in group for t in c.turns] + gone[1], group=op,
                relative=shown != path)
        how = edit_words(group[-1]) if op == "EDITED" else ""
        if how:  # its own line, with no word of what was done: the quoted words name no file it touched
            out.add(section, K_CHANGED, CHANGED - 1, group[-1].turn,
                    f"{code(shown)}: its last change, in turn {out.name(group[-1].turn):,}, as the call put it: {how}",
                    list(group[-1].turns), relative=shown != path)
    tools = {_resolve_key(path, workspace) for _, path in touched}
    for event in final_states(shell_events(calls)):
        if _resolve_key(event.path, workspace, folder_of(event.call)) in tools:
            continue  # a file tool's line says it (and a later removal beside it)
        out.add("artifact_trail", K_SHELL_FILE, SHELL_FILE, event.call.turn,
                state_words(event, f"{out.name(event.call.turn):,}"), list(event.call.turns))


def _resolve_key(path: str, workspace: str | None, folder: str = "") -> str:
    return resolve(path, folder, workspace) or path


_MAIN_ARGS = ("query", "url", "pattern", "prompt", "fact")


def _main_arg(call: Call) -> str:
    return next((str(call.args[k]) for k in _MAIN_ARGS if isinstance(call.args.get(k), str)), "")


def _identity(call: Call) -> str:
    """The same call: the same tool with the same arguments; for a shell, the same command (whole) in
    the same folder (the ``description`` the model writes beside each run says nothing of what ran)."""
    command = call.command() if call.kind == "shell" else None
    if command:
        return f"{call.name} {json.dumps([command, folder_of(call)], ensure_ascii=False)}"
    return f"{call.name} {json.dumps(call.args, sort_keys=True, ensure_ascii=False, default=str)}"


def _on_paths(call: Call) -> str | None:
    """The same tool on the same paths (another edit of a file), where the call names paths."""
    return f"{call.name} {json.dumps(call.paths)}" if call.paths and call.kind != "shell" else None


def _subject(call: Call, root: str | None) -> tuple[str, bool]:
    """What a call did, in a few words, and whether that names a path relative to ``root``."""
    command = call.command() if call.kind == "shell" else None
    if command:
        return code(command_line(command)) + _in_folder(folder_of(call)), False
    paths = call.paths
    if paths:
        shown = _display(paths[0], root)
        return f"{code(call.name)} on {code(shown)}", shown != paths[0]
    arg = _main_arg(call)
    return (f"{code(call.name)} {quote(arg, 120)}" if arg else code(call.name)), False


def _failures(out: Items, calls: list[Call], root: str | None) -> None:
    if not any(call.outcome.went_wrong for call in calls):
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
        if not outcome.went_wrong:
            continue
        again = last_ok.get(_identity(call), -1) > n
        target = _on_paths(call)
        other = not again and target is not None and last_ok.get(target, -1) > n
        fixed = again or other
        subject, relative = _subject(call, root)
        text = f"{subject} {outcome.text()}{_chained(call)}"
        if call.said and call.said != outcome.tail and call.said not in outcome.detail:
            text += f"; its output says {quote(call.said, 160)}"
        elif outcome.tail:
            text += f"; its output ended {quote(outcome.tail, 160)}"
        if again:
            text += "; a later run of it (the same arguments) succeeded"
        elif other:
            text += f"; a later {code(call.name)} on the same {'path' if len(call.paths) == 1 else 'paths'} succeeded"
        out.add("key_knowledge", K_FIXED if fixed else K_FAILURE, FIXED if fixed else FAILURE, call.turn, text,
                call.turns, relative=relative)


def _others(out: Items, digest: Digest, root: str | None) -> None:
    for call in digest.calls:
        args = call.args
        if call.kind in ("memory", "web_search", "fetch") and call.outcome.state in NOT_AS_ASKED:
            continue  # its failure line says it, with why ("Saved to memory: ... -> failed" said it twice)
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
    plan = next((c for c in reversed(digest.calls) if c.kind == "todos" and c.outcome.state == OK), None)
    if plan is not None:  # the newest plan that was written: a cancelled or failed write_todos set none
        _plan(out, plan)
    pending = [c for c in digest.calls if c.result_turn is None and c.outcome.state == UNKNOWN]
    if pending:
        call = pending[-1]
        subject, relative = _subject(call, root)
        text = f"{subject} was called and has no result yet"
        if any(c.turn > call.turn for c in digest.calls) or any(p.turn > call.turn for p in digest.prompts):
            text += " (none was recorded, though the session went on after it)"
        out.add("task_state", K_PENDING, PENDING, call.turn, text, call.turns, relative=relative)
    for n, reason in enumerate(digest.reasons[-REASONS:]):
        out.add("key_knowledge", K_REASON, REASON + n, reason.turn,
                f"The agent said in turn {out.name(reason.turn):,}: {quote(reason.text, 300)}", [reason.turn])
    if digest.agent_last is not None:
        last: Prompt = digest.agent_last
        later = sum(1 for c in digest.calls if c.turn > last.turn)  # model turns of tool calls only, no text
        said = ("The agent's last message began" if not later else
                f"The agent's last message with text, before {plural(later, 'more tool call')}, began")
        out.add("recent_actions", K_AGENT, AGENT, last.turn, f"{said}: {lead(last.text, 200)}", [last.turn])


def _plan(out: Items, call: Call) -> None:
    todos = call.args.get("todos")
    for i, todo in enumerate(todos if isinstance(todos, list) else []):
        if isinstance(todo, dict) and isinstance(todo.get("description"), str):
            status = str(todo.get("status") or "pending")
            out.add("task_state", K_PLAN, PLAN - min(i, 50), call.turn,
                    f"Plan (write_todos): [{clean(status, 20)}] {clean(todo['description'], 160)}", call.turns)
