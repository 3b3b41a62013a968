"""A session that attacks whatever shows it: escape sequences, markup and odd characters everywhere.

Used by tests/test_hostile_cli.py and tests/test_hostile_app.py.  The text
is put in every place a session can hold text (prompts, replies, thoughts,
tool arguments and results, the ``model`` field, the title), in the file's
name and in the name of its folder.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

SAMPLE = Path(__file__).resolve().parents[1] / "sample_sessions" / "coding-task.jsonl"

TITLE = "\x1b]2;PWNED\x07"  # sets the window title
CLIPBOARD = "\x1b]52;c;cm0gLXJmIH4K\x07"  # writes "rm -rf ~" to the clipboard
BLANK = "\x1b[2J"  # blanks the screen
C1 = "\x9b31m\x85"  # a one-character CSI, and NEL
BIDI = "\u202eevil\u202c"  # reorders what a reader sees
LONE = "\ud800"  # not a character: writing it raises UnicodeEncodeError
MARKUP = "[bold red]not markup[/] [/x] :warning:"  # Rich markup, a closing tag nothing opened, an emoji code
HOSTILE = f"{TITLE}{CLIPBOARD}{BLANK}\x07{C1}{BIDI}{LONE}\x7f {MARKUP}"

# What must never reach a terminal: C0 controls but tab and newline, DEL, C1, bidi overrides, surrogates.
UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
BIG_OUTPUT = 260_000  # characters: one tool result over the 50,000-token budget, so it is cut and saved

_TEXT_KEYS = {"text", "content", "output", "subject", "description", "resultDisplay", "pattern", "dir_path"}


def _taint(value: Any, key: str = "") -> Any:
    if isinstance(value, str):
        return value + " " + HOSTILE if key in _TEXT_KEYS else value
    if isinstance(value, list):
        return [_taint(item, key) for item in value]
    if isinstance(value, dict):
        return {k: _taint(v, k) for k, v in value.items()}
    return value


def hostile_folder(root: Path) -> Path:
    """``root/[/x]odd<escapes>/chats``: its path holds markup and escapes (created)."""
    folder = root / "[" / f"x]odd {TITLE}{BIDI} :warning:" / "chats"
    folder.mkdir(parents=True)
    return folder


def hostile_session(folder: Path, *, big_output: bool = True) -> Path:
    """coding-task.jsonl with hostile text in every field that holds text, saved under a hostile name."""
    path = folder / f"session-{TITLE}{BIDI}[red].jsonl"
    lines = []
    for number, line in enumerate(SAMPLE.read_text(encoding="utf-8").splitlines()):
        record = json.loads(line)
        if number >= 2:
            record = _taint(record)
            if record.get("type") == "gemini":
                record["model"] = f"gemini-2.5-pro{HOSTILE}"
        lines.append(record)
    if big_output:
        calls = [r for r in lines if isinstance(r, dict) and r.get("toolCalls")]
        response = calls[0]["toolCalls"][0]["result"][0]["functionResponse"]["response"]
        response["output"] = (HOSTILE + "\n") + "a line of a long log\n" * (BIG_OUTPUT // 21)
    lines.append({"$set": {"summary": f"title {HOSTILE}"}})
    # json.dumps writes the lone surrogate as \ud800, as Node does
    path.write_text("".join(json.dumps(r) + "\n" for r in lines), encoding="utf-8")
    return path


def hostile_copy(root: Path) -> Path:
    """A fresh hostile session in a fresh hostile folder under ``root``."""
    root.mkdir(parents=True, exist_ok=True)
    return hostile_session(hostile_folder(root))


def unsafe_in(text: str) -> list[str]:
    """The unsafe characters in ``text``, each with a little of what surrounds it."""
    return [repr(text[max(0, m.start() - 30):m.end() + 10]) for m in UNSAFE.finditer(text)][:5]


def copy_into(path: Path, folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    return Path(shutil.copy(path, folder / path.name))
