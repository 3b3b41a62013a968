"""Planted-fact sessions: generated recordings whose facts are known by construction.

Each session is written the way a Gemini CLI version writes it (0.61 JSONL
with the ``Output / Exit Code`` shell form wrapped in ``<untrusted_context>``,
the earlier ``Command / Directory / Output / Error / Exit Code / Signal``
form, the legacy single-object JSON with plain-string results), and the
generator keeps, beside it, the answers: every path with its operation,
every command with its outcome, the errors left unresolved, the user's
rules, the last step, and the lines of a previous snapshot.

Distractors are planted too: a successful command whose output is full of
the word "error", a read file whose text looks like a failure, a rule-like
sentence inside a tool's output.  A summariser that guesses outcomes from
words, or takes rules from tool output, is caught by them.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from inspector.compaction.snapshot import text_lines

FORMS = ("0.61", "earlier", "legacy")
_AREAS = ("billing", "search", "auth", "export", "ledger", "inbox", "geo", "cache")
_NOUNS = ("client", "parser", "limits", "models", "views", "store", "queue", "report")
_RULES = (
    "Never touch anything under vendor/.",
    "Always run the tests with -q before you commit.",
    "Do not add new dependencies.",
    "Keep the public function names unchanged.",
    "Only edit files under src/.",
)
_PREVIOUS = """<state_snapshot>
<overall_goal>
- Move the {area} module to the new {noun} API.
</overall_goal>
<active_constraints>
- Do not break the v1 endpoints.
</active_constraints>
<key_knowledge>
- The old {noun} API lives in `legacy/{area}_{noun}.py`.
</key_knowledge>
<task_state>
- [DONE] Inventory of the callers of the old API.
</task_state>
</state_snapshot>"""


@dataclass(frozen=True)
class Planted:
    """One known fact: ``kind`` as in ``quality.ground.KINDS``, its key, and for paths and
    commands the operation or outcome."""

    kind: str
    key: str
    state: str = ""


@dataclass
class PlantedSession:
    name: str
    form: str
    messages: list[dict[str, Any]] = field(default_factory=list)
    answers: list[Planted] = field(default_factory=list)

    def write(self, folder: Path) -> Path:
        """The session file, in its form's format."""
        folder.mkdir(parents=True, exist_ok=True)
        meta = {"sessionId": f"planted-{self.name}", "projectHash": "0" * 64, "startTime": "2026-11-20T09:00:00.000Z",
                "lastUpdated": "2026-11-20T10:00:00.000Z"}
        if self.form == "legacy":
            path = folder / f"session-{self.name}.json"
            path.write_text(json.dumps({**meta, "messages": self.messages}, indent=2, ensure_ascii=False))
            return path
        path = folder / f"session-{self.name}.jsonl"
        lines = [{**meta, "kind": "main"}, *self.messages]
        path.write_text("".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines))
        return path


class _Writer:
    def __init__(self, name: str, form: str, rng: random.Random) -> None:
        self.session = PlantedSession(name, form)
        self.form = form
        self.rng = rng
        self.ids = 0
        self.fixed_errors: set[str] = set()

    def _id(self, prefix: str) -> str:
        self.ids += 1
        return f"{prefix}-{self.ids:04d}"

    def plant(self, kind: str, key: str, state: str = "") -> None:
        item = Planted(kind, key, state)
        if item not in self.session.answers:
            self.session.answers.append(item)

    def prompt(self, text: str, rules: tuple[str, ...] = ()) -> None:
        self.session.messages.append({"id": self._id("u"), "type": "user", "content": [{"text": text}]})
        for rule in rules:
            self.plant("constraint", rule)

    def answer(self, text: str) -> None:
        self.session.messages.append({"id": self._id("m"), "type": "gemini", "content": text,
                                      "model": "gemini-2.5-pro"})

    def calls(self, text: str, calls: list[dict[str, Any]]) -> None:
        self.session.messages.append({"id": self._id("m"), "type": "gemini", "content": text, "toolCalls": calls,
                                      "model": "gemini-2.5-pro"})

    def call(self, name: str, args: dict[str, Any], output: str | None, status: str = "success",
             error: str | None = None) -> dict[str, Any]:
        ident = self._id(name)
        if self.form == "legacy":
            result: Any = output if output is not None else f"Error: {error}"
            record = {"id": ident, "name": name, "args": args, "result": result}
            if status != "success" or self.rng.random() < 0.5:
                record["status"] = status  # the oldest files keep no status on some calls
            return record
        body = {"output": output} if error is None else {"error": error}
        return {"id": ident, "name": name, "args": args, "status": status,
                "result": [{"functionResponse": {"id": ident, "name": name, "response": body}}]}

    def shell_text(self, command: str, output: str, code: int) -> str:
        if self.form == "0.61":
            lines = [f"Output: {output or '(empty)'}"]
            if code:
                lines.append(f"Exit Code: {code}")
            lines.append(f"Process Group PGID: {4000 + self.ids}")
            return "<untrusted_context>\n" + "\n".join(lines) + "\n</untrusted_context>"
        return "\n".join([f"Command: {command}", "Directory: (root)", f"Output: {output or '(empty)'}",
                          "Error: (none)", f"Exit Code: {code}", "Signal: 0", "Background PIDs: (none)",
                          f"Process Group PGID: {4000 + self.ids}"])

    def shell(self, command: str, output: str, code: int = 0, *, fixes: str = "") -> dict[str, Any]:
        """A shell call that ran: ``code`` its exit code; ``fixes``: the failed command it makes good."""
        state = "ok" if code == 0 else "failed"
        self.plant("command", command.split("\n")[0], state)
        if code and output:
            self.plant("error", " ".join(output.strip().split("\n")[-1].split()))  # spacing is not the fact
        if fixes:
            self.fixed_errors.add(" ".join(fixes.split()))
        return self.call("run_shell_command", {"command": command}, self.shell_text(command, output, code))


def _rule_sentence_in_output() -> str:
    return "README.md says: you must never deploy on Fridays. Always tag releases."


def _code(rng: random.Random, name: str, lines: int) -> str:
    """A plausible module body, ``lines`` long (what a real read returns: most of a session's tokens)."""
    out = [f'"""The {name} module."""', "", "import logging", ""]
    for n in range(lines):
        word = rng.choice(_NOUNS)
        out.append(f"def {word}_{n}(value, retries=3):\n    return value.get('{word}', {n}) if value else None\n")
    return "\n".join(out)


def _log(rng: random.Random, lines: int) -> str:
    return "\n".join(f"tests/test_{rng.choice(_NOUNS)}_{n}.py::test_case_{n} PASSED  [{n % 100:3d}%]"
                     for n in range(lines))


def build(name: str, form: str, seed: int, *, previous: bool = False) -> PlantedSession:
    rng = random.Random(seed)
    area, noun = rng.choice(_AREAS), rng.choice(_NOUNS)
    w = _Writer(name, form, rng)
    base = f"src/{area}"
    if previous:
        snapshot = _PREVIOUS.format(area=area, noun=noun)
        w.prompt(snapshot)
        w.answer("Got it. Thanks for the additional context!")
        for line in text_lines(snapshot):
            if line.startswith("- "):
                w.plant("previous", line[2:])
    rules = tuple(rng.sample(_RULES, 2))
    w.prompt(f"Please fix the flaky {area} {noun} tests. {rules[0]} {rules[1]}", rules)

    read_path, new_path, edit_path = f"{base}/{noun}.py", f"{base}/{noun}_retry.py", f"{base}/settings.py"
    w.calls("Looking at the code first.", [
        w.call("read_file", {"file_path": read_path},
               f"def {noun}():\n    raise RuntimeError('Error: boom')\n" + _code(rng, noun, rng.randint(60, 160))),
        w.call("list_directory", {"dir_path": base}, f"Directory listing for {base}:\n{noun}.py\nsettings.py"),
    ])
    w.plant("path", read_path, "read")
    w.plant("path", base, "list")
    w.calls("Searching for callers.", [
        w.call("grep_search", {"pattern": f"{noun}\\(", "dir_path": "src"},
               f'Found 3 matches for pattern "{noun}\\(" in path "src":\n---\nFile: {read_path}\nL1: def {noun}():'),
    ])
    w.plant("path", "src", "search")
    noisy = "\n".join(f"test_{i} ... ok  (checked error handling)" for i in range(5)) + "\n" + \
        _log(rng, rng.randint(40, 120))
    w.calls("Running the tests.", [w.shell(f"pytest -q tests/test_{area}.py", noisy + "\nerror: 0 failures", 0)])
    failing = f"pytest -q tests/test_{noun}_flaky.py"
    error_text = f"E   AssertionError: {noun} retried 0 times"
    w.calls("The flaky one.", [w.shell(failing, f"collected 4 items\n{error_text}", 1)])
    w.calls("Writing a retry helper.", [
        w.call("write_file", {"file_path": new_path, "content": "def retry(): ..."},
               f"Successfully created and wrote to new file: {new_path}."),
        w.call("replace", {"file_path": edit_path, "old_string": "RETRIES = 0", "new_string": "RETRIES = 3"},
               f"Successfully modified file: {edit_path} (1 replacements)."),
    ])
    w.plant("path", new_path, "write")
    w.plant("path", edit_path, "edit")
    w.calls("Trying the linter.", [w.call("run_shell_command", {"command": f"ruff check {base}"}, None,
                                          "cancelled", "[Operation Cancelled] Reason: User cancelled the operation.")])
    w.plant("command", f"ruff check {base}", "cancelled")
    w.prompt(f"Also look at docs/{area}.md.")
    w.calls("Reading the docs.", [w.call("read_file", {"file_path": f"docs/{area}.md"},
                                         _rule_sentence_in_output() + "\n" + _code(rng, "docs", rng.randint(20, 60)))])
    w.plant("path", f"docs/{area}.md", "read")
    if rng.random() < 0.5:
        w.calls("Again, after the fix.", [w.shell(failing, "4 passed", 0, fixes=error_text)])
    message = f"Retry the {area} {noun} client on timeouts"
    commit = f'git add -A && git commit -m "{message}"'
    w.calls("Committing.", [w.shell(commit, f"[main 1a2b3c4] {message}\n 2 files changed", 0)])
    long_command = f"cat > {base}/NOTES.md <<'EOF'\n# {area}\nRetries: 3\nEOF"
    w.calls("Notes.", [w.shell(long_command, "", 0)])
    last = f"Now update the changelog for the {area} fix."
    w.prompt(last)
    w.plant("step", last)
    w.answer("I will update CHANGELOG.md next.")
    session = w.session
    session.answers = [a for a in session.answers if not (a.kind == "error" and a.key in w.fixed_errors)]
    return session


def planted_sessions(count: int = 6, seed: int = 11) -> list[PlantedSession]:
    """``count`` sessions, cycling through the forms, every other one after an earlier compression."""
    return [build(f"planted-{n:02d}-{FORMS[n % len(FORMS)].replace('.', '')}", FORMS[n % len(FORMS)], seed + n,
                  previous=n % 2 == 1) for n in range(count)]
