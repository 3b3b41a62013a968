"""Write an Antigravity transcript made up for the project, where Antigravity's CLI keeps one:
sample_sessions/antigravity/brain/<id>/.system_generated/logs/transcript_full.jsonl
(nested, as ``~/.gemini/antigravity-cli`` holds them, so that the tests and listings that take every
Gemini CLI sample in sample_sessions/ leave it to the tests of its own).

    python scripts/make_antigravity_sample.py [OUT]

Deterministic.  One step a line as Antigravity writes its
``transcript_full.jsonl``: every kind of step the project reads (a user's
request, planner responses with thinking and tool calls, file views, edits,
searches, listings, commands that pass and fail, a background task, system and
ephemeral messages, a tool-call error), two CHECKPOINT compactions (the second
leaves out a failed command, a file and the user's rule), and one line cut
short, as committed transcripts sometimes hold.  The words are the project's
own.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
CONVERSATION = "5d1e0c2a-notes-export"
OUT = (REPO / "sample_sessions" / "antigravity" / "brain" / CONVERSATION / ".system_generated" / "logs"
       / "transcript_full.jsonl")
ROOT = "/home/dev/notes-app"
BROKEN = '{"step_index":31,"source":"MODEL","type":"VIEW_FILE","status":"DONE","content":"Created At: 2026'


class Steps:
    def __init__(self) -> None:
        self.rows: list[dict[str, Any]] = []
        self.minute = 0

    def add(self, source: str, kind: str, **fields: Any) -> None:
        self.minute += 1
        row: dict[str, Any] = {"step_index": len(self.rows), "source": source, "type": kind,
                               "status": fields.pop("status", "DONE"),
                               "created_at": f"2026-05-04T09:{self.minute // 60:02d}:{self.minute % 60:02d}Z"}
        row.update(fields)
        self.rows.append(row)

    def user(self, request: str) -> None:
        self.add("USER_EXPLICIT", "USER_INPUT", content=f"<USER_REQUEST>\n{request}\n</USER_REQUEST>\n"
                 "<ADDITIONAL_METADATA>\nThe current local time is: 2026-05-04T11:00:00+02:00.\n"
                 "</ADDITIONAL_METADATA>")

    def plan(self, text: str = "", thinking: str = "", *calls: tuple[str, dict[str, Any]]) -> None:
        fields: dict[str, Any] = {}
        if text:
            fields["content"] = text
        if thinking:
            fields["thinking"] = thinking
        if calls:
            fields["tool_calls"] = [{"name": name, "args": {**args, "toolAction": name.replace("_", " ")}}
                                    for name, args in calls]
        self.add("MODEL", "PLANNER_RESPONSE", **fields)

    def result(self, kind: str, body: str, **fields: Any) -> None:
        self.add("MODEL", kind, content=f"Created At: 2026-05-04T11:00:00+02:00\n"
                 f"Completed At: 2026-05-04T11:00:01+02:00\n{body}", **fields)

    def view(self, path: str, lines: int) -> None:
        self.plan("", f"**Reading {Path(path).name}**\n\nI want to see how the notes are stored first.",
                  ("view_file", {"AbsolutePath": path, "StartLine": 1, "EndLine": lines}))
        code = "\n".join(f"{n}: {'    ' * (n % 3)}note_line_{n} = store.get({n})" for n in range(1, lines + 1))
        self.result("VIEW_FILE", f"File Path: `file://{path}`\nTotal Lines: {lines}\n{code}")

    def run(self, command: str, code: int | None, output: str, *, running: bool = False) -> None:
        self.plan("", "", ("run_command", {"CommandLine": command, "Cwd": ROOT, "WaitMsBeforeAsync": 5000}))
        if running:
            self.result("RUN_COMMAND", "Tool is running as a background task with task id: task-7", status="RUNNING")
            return
        self.result("RUN_COMMAND", f"The command exited with code {code}.\n\t\t\t\tOutput:\n\t\t\t\t{output}",
                    exit_code=code)

    def checkpoint(self, number: int, requests: list[str], sections: dict[str, list[str]]) -> None:
        text = [f"{{{{ CHECKPOINT {number} }}}}",
                " **The earlier parts of this conversation have been truncated due to its long length. The "
                "following content summarizes the truncated context so that you may continue your work. **", "",
                "# User Requests", "The following were user requests from the truncated conversation in "
                "chronological order:"]
        text += [f"{n}. {r}" for n, r in enumerate(requests, 1)]
        text += ["", "# Previous Session Summary:"]
        for name, lines in sections.items():
            text += ["", f"## {name}", *lines]
        self.add("SYSTEM", "CHECKPOINT", content="\n".join(text))
        self.add("SYSTEM", "CONVERSATION_HISTORY")


def sample_rows() -> list[dict[str, Any]]:
    s = Steps()
    s.user("Add a CSV export to the notes app. Never change the storage format of existing notes.")
    s.plan("I will look at the storage module, then add an exporter.", "**Planning the export**\n\n"
           "The notes live in SQLite; an exporter needs the columns.")
    s.add("SYSTEM", "EPHEMERAL_MESSAGE", content="<EPHEMERAL_MESSAGE>\n<planning_mode>Plan before editing."
          "</planning_mode>\n</EPHEMERAL_MESSAGE>")
    s.plan("", "", ("list_dir", {"DirectoryPath": ROOT}))
    s.result("LIST_DIRECTORY", '{"name":"notes","isDir":true}\n{"name":"tests","isDir":true}\n'
             '{"name":"pyproject.toml","sizeBytes":"612"}')
    s.view(f"{ROOT}/notes/storage.py", 160)
    s.plan("", "", ("grep_search", {"SearchPath": ROOT, "Query": "def all_notes", "IsRegex": False}))
    s.result("GREP_SEARCH", json.dumps({"File": f"{ROOT}/notes/storage.py", "LineNumber": 41,
                                        "LineContent": "def all_notes(db):"}))
    s.plan("", "", ("write_to_file", {"TargetFile": f"{ROOT}/notes/export.py", "Overwrite": False,
                                      "CodeContent": "import csv\n\ndef export_csv(notes, out):\n"
                                                     "    writer = csv.writer(out)\n" + "    # row\n" * 40}))
    s.result("CODE_ACTION", f"Created file {ROOT}/notes/export.py with 44 lines.")
    s.run("python -m pytest tests/test_export.py -q", 1, "FAILED tests/test_export.py::test_header - "
          "AssertionError: missing title column\n1 failed in 0.31s")
    s.plan("", "", ("replace_file_content", {"TargetFile": f"{ROOT}/notes/export.py",
                                             "TargetContent": "writer = csv.writer(out)",
                                             "ReplacementContent": "writer = csv.writer(out)\n"
                                                                   "    writer.writerow(['title', 'body'])"}))
    s.result("CODE_ACTION", f"The following changes were made to: {ROOT}/notes/export.py\n[diff_block_start]\n"
             "+    writer.writerow(['title', 'body'])\n[diff_block_end]")
    s.run("python -m pytest tests/test_export.py -q", 0, "3 passed in 0.28s")
    s.add("SYSTEM", "SYSTEM_MESSAGE", content="<SYSTEM_MESSAGE>\nAll background tasks were stopped by a "
          "restart.\n</SYSTEM_MESSAGE>")
    s.checkpoint(1, ["Add a CSV export to the notes app. Never change the storage format of existing notes."], {
        "1. Outstanding User Requests": ["- CSV export: done, tests pass."],
        "2. User Knowledge": ["- Never change the storage format of existing notes."],
        "3. Work Accomplished": [f"- Created `{ROOT}/notes/export.py` with `export_csv`.",
                                 "- `python -m pytest tests/test_export.py -q` failed (missing title column), "
                                 "then passed after the header row was added."],
        "5. Files and Code": [f"- `{ROOT}/notes/storage.py` read: notes come from `all_notes(db)`."],
        "6. Current Work and Next Steps": ["- Wait for the user's next request."],
    })
    s.user("Now add a --since option to the export command, and keep the output sorted by date.")
    s.view(f"{ROOT}/notes/cli.py", 120)
    s.plan("", "", ("multi_replace_file_content", {"TargetFile": f"{ROOT}/notes/cli.py", "ReplacementChunks": [
        {"TargetContent": "def export(args):", "ReplacementContent": "def export(args, since=None):"}]}))
    s.result("CODE_ACTION", f"The following changes were made to: {ROOT}/notes/cli.py")
    s.plan("", "", ("write_to_file", {"TargetFile": f"{ROOT}/notes/cli.py", "Overwrite": True,
                                      "CodeContent": "def export(args, since=None):\n    ...\n"}))
    s.add("SYSTEM", "ERROR_MESSAGE", error="There was a problem parsing the tool call.\nError Message: "
          "Overwrite is not allowed on a file you did not create")
    s.run("python -m pytest -q", 2, "ERROR tests/test_cli.py - ImportError: cannot import name 'parse_since'")
    s.run("python -m notes.watch --serve", None, "", running=True)
    s.add("MODEL", "GENERIC", content="Task: task-7\nStatus: RUNNING\nLog output:\nwatching 12 notes")
    s.plan("The export now takes --since; one test still fails on an import, which I am fixing next.")
    s.checkpoint(2, ["Add a CSV export to the notes app. Never change the storage format of existing notes.",
                     "Now add a --since option to the export command, and keep the output sorted by date."], {
        "1. Outstanding User Requests": ["- --since option: in progress."],
        "3. Work Accomplished": [f"- Edited `{ROOT}/notes/cli.py`: `export` takes `since`."],
        "6. Current Work and Next Steps": ["- Fix the import of `parse_since` in the CLI tests."],
    })
    s.user("Show me the final diff when it is done.")
    s.plan("Here is where things stand: the export and its --since option are in place.")
    return s.rows


def sample_lines() -> list[str]:
    """The file's lines: each step as one JSON line, and a line cut short after the 30th."""
    lines = [json.dumps(row, ensure_ascii=False, separators=(",", ":")) for row in sample_rows()]
    return [*lines[:30], BROKEN, *lines[30:]]


def write(path: Path = OUT) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(sample_lines()) + "\n", encoding="utf-8")
    return path


if __name__ == "__main__":
    print(f"wrote {write(Path(sys.argv[1]) if len(sys.argv) > 1 else OUT)}")
