"""What a command's output says, for the offline snapshot: the lines that carry a result, and the line
that says what went wrong.

``result_lines`` keeps the lines of an output that state a result in a form
programs print: git's line for a commit it made ("[main 1a2b3c4] Fix"), test
and change counts ("1 failed, 240 passed", "3 files changed"), an assertion's
values ("4 != 2"), a URL, a port a service listens on, a version.
``error_line`` picks, of a failed command's output, the last line that says
what went wrong in the words programs use for it ("Error", "No such file",
"denied", a Python exception) rather than its last line, which is often noise
(a hint, a teardown message, a wrapped line).  Both quote the output's own
lines, cut to ``LINE_CHARS``.  ``chain_words`` says what the one exit code of
several commands joined by ``&&`` or ``;`` is.
"""

from __future__ import annotations

import re
import shlex

LINE_CHARS = 160
MOST = 3  # result lines kept of one output

_COUNT = re.compile(r"\b\d+ (?:passed|failed|failures?|errors?|tests?|skipped|xfailed|xpassed|deselected|"
                    r"files? changed|insertions?\(\+\)|deletions?\(-\)|vulnerabilit(?:y|ies)|packages?|warnings?)\b|"
                    r"\bRan \d+ tests?\b|\bFAILED \(|\bTests?:\s+\d+", re.I)
_ASSERT = re.compile(r"\bassert(?:ion)?\w*\b.*(?:!=|==|<|>)|\bExpected\b.*\b(?:got|received|but was)\b", re.I)
_ADDRESS = re.compile(r"https?://[^\s'\"<>]+|\b(?:localhost|127\.0\.0\.1|0\.0\.0\.0|\[::\]):\d{2,5}\b|"
                      r"\b(?:listening|running|serving|started)\b.*\b(?:port|on)\b\D{0,12}\d{2,5}\b", re.I)
GIT_COMMIT = re.compile(r"^\[[\w./-]+(?: \(root-commit\))? [0-9a-f]{7,40}\] ")  # git's line for a commit it made
_VERSION = re.compile(r"\b(?:version|v)\s*\d+\.\d+(?:\.\d+)*\b|^\S+ \d+\.\d+\.\d+\S*$", re.I)
_KINDS = (GIT_COMMIT, _COUNT, _ASSERT, _ADDRESS, _VERSION)
_ERROR = re.compile(r"\b\w*(?:Error|Exception)\b|\berror\b|\bERR!|\bfatal\b|\bFAILED\b|\bfailed\b|No such file|"
                    r"not found|[Pp]ermission denied|[Cc]onnection refused|[Cc]annot |[Uu]nable to|[Ii]nvalid |"
                    r"\bdenied\b|\brejected\b|\bconflict\b|Traceback|[Tt]imed? ?out", re.I)
_NOISE = re.compile(r"^(?:hint:|Traceback \(most recent|\s*at |\s*File \"|Destroying test database|"
                    r"Creating test database|npm notice|"
                    r"\+ *CategoryInfo|\+ *FullyQualifiedErrorId|At line:|~+$|[-=_*]{3,}$|\s*\^+\s*$)", re.I)
_FIELD = re.compile(r"^(?:Command|Directory|Output|Error|Exit Code|Signal|Background PIDs|Process Group PGID|"
                    r"Stdout|Stderr): ?")


def _lines(text: str) -> list[str]:
    out = []
    for raw in text.splitlines():
        line = _FIELD.sub("", raw.strip()) if _FIELD.match(raw.strip()) else raw.strip()
        if line and line != "(empty)" and len(line) <= 600:
            out.append(line)
    return out


def _cut(line: str) -> str:
    line = " ".join(line.split())
    return line if len(line) <= LINE_CHARS else line[: LINE_CHARS - 1].rstrip() + "…"


def result_lines(text: str) -> tuple[str, ...]:
    """The lines of an output that carry a result, the most telling kind first, at most ``MOST``."""
    lines = _lines(text)
    found: list[str] = []
    for kind in _KINDS:
        for line in lines:
            if kind.search(line) and not _NOISE.match(line) and _cut(line) not in found:
                found.append(_cut(line))
            if len(found) >= MOST:
                return tuple(found)
    return tuple(found)


def error_line(text: str) -> str:
    """The last line of a failed command's output that says what went wrong ("" when none does)."""
    said = [line for line in _lines(text) if _ERROR.search(line) and not _NOISE.match(line)]
    return _cut(said[-1]) if said else ""


# The words with which an agent states a reason, a cause or a decision (English; its other messages are
# left to the kept turns).
_REASON = re.compile(r"\b(?:because|since the|root cause|the cause|caused by|"
                     r"the (?:issue|problem|bug|error) (?:is|was)|"
                     r"this means|which means|so that|in order to|decided|I(?:'ll| will) (?:use|keep|assume|go with|"
                     r"switch|instead)|I chose|instead of|rather than|assum(?:e|ing)|the reason)\b", re.I)
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z`\"'(])|\n+")
REASON_CHARS = 300


def reason_sentences(text: str) -> list[str]:
    """The sentences of an agent's message that state a reason, a cause or a decision, whole."""
    out = []
    for piece in _SENTENCE.split(text[:20_000]):
        sentence = " ".join(piece.strip(" *-#>").split())
        if 30 <= len(sentence) <= REASON_CHARS and _REASON.search(sentence) and not sentence.startswith(("```", "|")):
            out.append(sentence)
    return out


# Programs whose output is files' or records' content: an "error" in it is text they show, not theirs.
_CONTENT = frozenset({"grep", "egrep", "fgrep", "rg", "ag", "ack", "cat", "head", "tail", "less", "more", "sed",
                      "awk", "find", "ls", "tree", "jq", "yq", "diff", "git"})


def shows_content(command: str) -> bool:
    """Whether a command's output is content it shows (a search, a file, a log): its words are not
    the command's own failure text."""
    for piece in re.split(r"&&|\|\||[;|\n]", command):
        words = piece.split()
        while words and "=" in words[0]:
            words = words[1:]
        if words and words[0].rsplit("/", 1)[-1] in _CONTENT:
            return True
    return False


_LOOK = frozenset({"grep", "egrep", "fgrep", "rg", "ag", "ack", "cat", "head", "tail", "less", "ls", "find", "wc",
                   "pwd", "which", "file", "stat", "tree", "du", "df", "whoami", "uname", "date"})
_GIT_LOOK = frozenset({"status", "log", "diff", "show", "branch", "remote", "rev-parse", "ls-files", "blame"})
_WRITES = re.compile(r">|\btee\b|-exec\b|-delete\b|-i\b|--in-place|\$\(|`")


def looks_only(command: str) -> bool:
    """Whether every part of a command only looks (a search, a listing, a file shown, git's status or
    log) and writes nothing: no redirection, ``tee``, ``-exec``, ``-delete``, in-place edit or substitution."""
    if _WRITES.search(command):
        return False
    for piece in re.split(r"&&|\|\||[;|\n]", command):
        words = piece.split()
        if not words:
            continue
        program = words[0].rsplit("/", 1)[-1]
        if program == "git":
            if len(words) < 2 or words[1] not in _GIT_LOOK:
                return False
        elif program == "cd":
            continue
        elif program not in _LOOK:
            return False
    return True


_JOINS = frozenset({"&&", "||", ";", "&"})


def chain_words(command: str) -> str:
    """For a command line of several commands joined by ``&&``, ``||`` or ``;``, what its one recorded
    exit code is ("" for one command, or a line the shell's quoting leaves unread).  Gemini CLI records
    one exit code per call: after ``a && b`` it is the first failing command's (or the last one's),
    after ``a; b`` the last one's; which command a failure came from, the record does not say."""
    try:
        lexer = shlex.shlex(command, posix=True, punctuation_chars=";&|<>")
        lexer.whitespace_split = True
        tokens = list(lexer)
    except ValueError:
        return ""
    joins = [t for t in tokens if t in _JOINS]
    if not joins or any(t == "&" for t in joins):
        return ""
    count = len(joins) + 1
    if set(joins) == {"&&"}:
        return (f"one exit code for a chain of {count} commands joined by &&: the first that failed stopped it; "
                "which one, the record does not say")
    if set(joins) == {";"} and not re.search(r"\bset\s+-\w*e", command):
        return f"the exit code of the last of {count} commands run one after another"
    joined = ", ".join(dict.fromkeys(joins))
    return f"one exit code for {count} commands joined by {joined}: which one it came from, the record does not say"
