"""Paths a shell command removed or moved away, as the offline snapshot says it of a listed path.

Only a command recorded as ended ok counts, and only where every part of it
ran when the whole ended ok (parts joined by ``&&``); a path is resolved as
Gemini CLI's tools and shell resolve it, never where it holds a pattern or a
variable.
"""

from __future__ import annotations

import posixpath
import re
import shlex
from collections.abc import Callable
from dataclasses import dataclass

from inspector.compaction.outcomes import OK
from inspector.compaction.summarisers.digest import Call
from inspector.compaction.summarisers.words import code, command_line


def folder_of(call: Call) -> str:
    """The folder a shell call was asked to run in ("": the workspace, as Gemini CLI runs it then)."""
    for key in ("dir_path", "directory"):
        value = call.args.get(key)
        if isinstance(value, str) and value.strip():
            return value.strip()
    return ""



@dataclass(frozen=True)
class _Removal:
    """A shell command recorded as ended ok that removed or moved paths away."""

    call: Call
    verb: str  # "removed" or "moved away"
    targets: tuple[tuple[str, bool], ...]  # (path resolved, whether what is under it went too)


# Only commands whose every part ran when the whole ended ok: parts joined by && and nothing else that
# decides what runs or where (no ; || | & newline, substitution), and no path that is a pattern.
_NOT_PLAIN = re.compile(r"[;\n`|$]|(?<![&<>])&(?![&>])")  # not the && between parts, nor 2>&1 or &>
_PATTERN = re.compile(r"[*?\[\]{}~]")
_WORKSPACE = "/\0workspace"  # where relative paths are resolved when the session names no workspace


def resolve(path: str, folder: str, workspace: str | None) -> str | None:
    """``path`` as one absolute path, resolved as Gemini CLI's tools and shell resolve it; None for
    a pattern, a variable or a home path (what it names is not known)."""
    if not path or _PATTERN.search(path) or "$" in path:
        return None
    base = workspace or _WORKSPACE
    if folder:
        if _PATTERN.search(folder) or "$" in folder:
            return None
        base = posixpath.join(base, folder)
    return posixpath.normpath(posixpath.join(base, path))


def _removal_targets(words: list[str]) -> tuple[str, list[str], bool] | None:
    """(verb, paths, recursive) of one simple command that removes or moves paths; None: not one."""
    program, args = (f"git {words[1]}", words[2:]) if words[:1] == ["git"] and len(words) > 1 else (words[0], words[1:])
    if program not in ("rm", "git rm", "mv", "git mv"):
        return None
    options, paths, ended = [], [], False
    for arg in args:
        if not ended and arg == "--":
            ended = True
        elif not ended and arg.startswith("-") and arg != "-":
            options.append(arg)
        else:
            paths.append(arg)
    flags = "".join(o[1:] for o in options if not o.startswith("--"))
    longs = {o.split("=", 1)[0] for o in options if o.startswith("--")}
    if program in ("rm", "git rm"):
        if "i" in flags or "I" in flags or "--interactive" in longs or (program == "git rm" and (
                "--cached" in longs or "n" in flags or "--dry-run" in longs)):
            return None  # the file stays (only the index changes), nothing is done, or it asks first
        recursive = bool({"r", "R"} & set(flags)) or "--recursive" in longs
        return "removed", paths, recursive
    if set(flags) & {"n", "u", "i", "k", "t", "T", "b", "S"} or longs - {"--force", "--verbose"}:
        return None  # it may leave a source where it was, or its arguments are read otherwise
    return ("moved away", paths[:-1], True) if len(paths) >= 2 else None


def _without_redirections(words: list[str]) -> list[str]:
    """A command's words without its redirections (``2>&1``, ``> log``, ``2>/dev/null``)."""
    out: list[str] = []
    skip = False
    for word in words:
        if skip:
            skip = False
        elif "<" in word or ">" in word:
            skip = word.endswith((">", "<"))  # the file is the next word
        else:
            out.append(word)
    return out


def shell_removals(calls: list[Call], workspace: str | None) -> list[_Removal]:
    """Every shell command recorded as ended ok that removed or moved a path, oldest first."""
    out: list[_Removal] = []
    for call in calls:
        command = call.command() if call.kind == "shell" and call.outcome.state == OK else None
        if not command or not re.search(r"\b(?:rm|mv)\b", command) or _NOT_PLAIN.search(command):
            continue
        for part in command.split("&&"):
            try:
                words = shlex.split(part)
            except ValueError:
                break
            words = _without_redirections(words)
            while words and re.fullmatch(r"[A-Za-z_]\w*=\S*", words[0]):
                words = words[1:]
            if not words:
                break
            if words[0] in ("cd", "pushd", "popd", "sudo", "exec", "command", "builtin", "eval", "source", "."):
                break  # what follows runs elsewhere, or as something else
            found = _removal_targets(words)
            if found is None:
                continue
            verb, paths, recursive = found
            targets = tuple((r, recursive) for r in (resolve(p, folder_of(call), workspace) for p in paths) if r)
            if targets:
                out.append(_Removal(call, verb, targets))
    return out


def gone_after(path: str, after: int, removals: list[_Removal], workspace: str | None,
               name: Callable[[int], int]) -> tuple[str, list[int]]:
    """The words saying that a later command removed or moved ``path`` away, and its turns; ("", [])."""
    resolved = resolve(path, "", workspace)
    if resolved is None:
        return "", []
    for removal in removals:
        if removal.call.turn <= after:
            continue
        for target, below in removal.targets:
            if resolved == target or (below and resolved.startswith(target.rstrip("/") + "/")):
                command = removal.call.command() or ""
                return (f" ({removal.verb} later by {code(command_line(command))} in turn "
                        f"{name(removal.call.turn):,})", list(removal.call.turns))
    return "", []


def path_root(calls: list[Call]) -> str | None:
    """The folder above the common folder of the paths (so every shown path keeps two parts), where
    every path a call names is absolute: one given relative to the workspace, shown as it was given,
    would read as relative to that folder (None: paths are shown whole)."""
    paths = [p for c in calls for p in c.paths]
    if not all(p.startswith("/") for p in paths):
        return None
    dirs = {posixpath.dirname(p) for p in paths}
    if len(dirs) < 2:
        return None
    common = posixpath.commonpath(sorted(dirs))
    parent = posixpath.dirname(common)
    return parent if parent.count("/") >= 2 else None
