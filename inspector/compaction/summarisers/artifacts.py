"""Files the shell made, copied, moved or deleted, and how an edit changed a file, for the offline
snapshot's artifact trail.

Only a command recorded as ended ok is read, and only where its ending ok
says each part ran: parts joined by ``&&`` (a pipeline's last part: ``... |
tee file``), with no ``;``, ``||``, background ``&``, substitution or
variable.  What each part does to a file is read from its words: a
redirection (``>``, ``>>``, a heredoc's ``cat > file``), ``tee``, ``curl -o``
/ ``--output``, ``wget -O``, ``gpg --output``, ``touch``, ``cp``, ``mv``,
``rm``.  Each path gets one line, its final state (the last of these
events), with the turn; a path a file tool also wrote or edited is left to
that tool's line.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass

from inspector.compaction.outcomes import OK
from inspector.compaction.summarisers.digest import Call
from inspector.compaction.summarisers.removals import folder_of
from inspector.compaction.summarisers.words import clean, code, quote

_NOT_PLAIN = re.compile(r"[;\n`$]|\|\||(?<![&<>|])&(?![&>])")
_PATTERN = re.compile(r"[*?\[\]{}~]")
_OUTPUT_OPTIONS = {"curl": ("-o", "--output"), "wget": ("-O", "--output-document"), "gpg": ("-o", "--output")}


@dataclass(frozen=True)
class Event:
    path: str  # as the command wrote it
    how: str  # "made", "copied", "moved", "deleted"
    call: Call
    other: str = ""  # where it was copied or moved to, or from


def _targets(words: list[str]) -> list[tuple[str, str, str]]:
    """(path, how, other) of one simple command's words."""
    out: list[tuple[str, str, str]] = []
    plain: list[str] = []
    skip = False
    for n, word in enumerate(words):
        if skip:
            skip = False
            continue
        found = re.fullmatch(r"\d?(>>?|&>)(.*)", word)
        if found:
            target = found.group(2) or (words[n + 1] if n + 1 < len(words) else "")
            skip = not found.group(2)
            if target and not target.startswith(("&", "/dev/")):
                out.append((target, "made", ""))
            continue
        if "<" in word:
            skip = word in ("<", "<<", "<<<") or word.startswith("<<")
            continue
        plain.append(word)
    if not plain:
        return out
    program, args = plain[0].rsplit("/", 1)[-1], plain[1:]
    names = [a for a in args if not a.startswith("-")]
    if program == "tee" or program == "touch":
        out.extend((a, "made", "") for a in names)
    elif program in _OUTPUT_OPTIONS:
        short, long = _OUTPUT_OPTIONS[program]
        for n, arg in enumerate(args):
            if arg in (short, long) and n + 1 < len(args):
                out.append((args[n + 1], "made", ""))
            elif arg.startswith(long + "="):
                out.append((arg.split("=", 1)[1], "made", ""))
    elif program in ("cp", "mv") and len(names) == 2 and not any(a in ("-t", "--target-directory") for a in args):
        how = "copied" if program == "cp" else "moved"
        out.append((names[1], "made", f"{how} from {names[0]}"))
        if program == "mv":
            out.append((names[0], "moved", names[1]))
    elif program == "rm" and not any(a in ("-i", "-I", "--interactive") for a in args):
        out.extend((a, "deleted", "") for a in names)
    return out


def shell_events(calls: list[Call]) -> list[Event]:
    """What the successful shell commands did to files, oldest first (see the module doc)."""
    out: list[Event] = []
    for call in calls:
        command = call.command() if call.kind == "shell" and call.outcome.state == OK else None
        if not command or _NOT_PLAIN.search(command.split("<<", 1)[0]):
            continue
        line = command.split("\n", 1)[0] if "<<" in command else command  # a heredoc's body is no command
        for part in line.split("&&"):
            piece = part.rsplit("|", 1)[-1] if "|" in part else part  # a pipeline's last part, whose status it is
            try:
                words = shlex.split(piece)
            except ValueError:
                break
            while words and re.fullmatch(r"[A-Za-z_]\w*=\S*", words[0]):
                words = words[1:]
            if not words or words[0] in ("cd", "pushd", "popd", "sudo", "exec", "eval", "source", ".", "ssh"):
                break  # what follows runs elsewhere, or as something else
            for path, how, other in _targets(words):
                if path and not _PATTERN.search(path):
                    out.append(Event(path, how, call, other))
    return out


def final_states(events: list[Event]) -> list[Event]:
    """The last event of each path (as written, in the folder its command ran in), in order."""
    last: dict[tuple[str, str], Event] = {}
    for event in events:
        key = (folder_of(event.call), event.path)
        last.pop(key, None)
        last[key] = event
    return list(last.values())


def state_words(event: Event, name: str) -> str:
    """One artifact line: the path, its final state, the command and the turn (``name``: the turn's number)."""
    command = code(clean(event.call.command() or "", 120))
    where = f" (in {code(folder_of(event.call))})" if folder_of(event.call) else ""
    if event.how == "deleted":
        said = "deleted"
    elif event.how == "moved":
        said = f"moved to {code(event.other)}"
    elif event.other:  # "copied from a", "moved from a"
        verb, source = event.other.split(" from ", 1)
        said = f"{verb} here from {code(source)}"
    else:
        said = "made or overwritten"
    return f"{code(event.path)}{where}: {said} by {command} in turn {name}"


def edit_words(call: Call) -> str:
    """How an edit changed its file, in the call's own words: its ``instruction``, else old -> new."""
    instruction = call.args.get("instruction")
    if isinstance(instruction, str) and instruction.strip():
        return quote(instruction, 160)
    old, new = call.args.get("old_string"), call.args.get("new_string")
    if isinstance(old, str) and isinstance(new, str) and (old.strip() or new.strip()):
        before, after = (text.strip().split("\n")[0] or "(empty)" for text in (old, new))
        if "/" in before + after:
            return ""  # a path inside the text would read as one more file the edit touched
        return f"{quote(before, 70)} -> {quote(after, 70)}"
    return ""
