"""Outcomes as Gemini CLI recorded them, in the cases its format makes easy to misread.

* an output Gemini CLI cut to its size limit when recording it (each
  version's envelope, ``utils/fileUtils.js``): its own trailing field lines
  survive in the kept end, and are read there, and only there;
* the ``Error:`` line, which only the earlier shell form (``Command: ...``
  first, every field always written) carries as a field: in the 0.27+ form
  a command that could not run makes the whole result ``{"error": ...}``, so
  an ``Error: ...`` line in its text is the command's own output;
* a result recorded apart from its call (the call's record has the status,
  a user message the result), two calls sharing an id in one turn, and a
  null ``error`` field.

Sessions are written to files the way Gemini CLI writes them and read back
with the loader; the summariser's digest and the independent fact reader
must both say what was recorded.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from inspector.compaction.outcomes import (
    CANCELLED,
    FAILED,
    OK,
    TERMINATED,
    UNKNOWN,
    Kept,
    kept_text,
    read_outcome,
    shell_fields,
)
from inspector.compaction.pairs import pair_calls, repair_pairs
from inspector.compaction.statuses import ToolStatuses, tool_statuses
from inspector.compaction.summarisers.digest import collect
from inspector.quality import extract
from inspector.quality.ground import outcome_class
from inspector.session import history, load

T0 = "2026-11-22T05:22:27.397Z"
SAVED = "/home/dev/.gemini/tmp/proj/tool-outputs/session-x/run_shell_command_1.txt"


def wrap(text: str) -> str:
    """Gemini CLI's wrapUntrusted (utils/textUtils.js)."""
    return "<untrusted_context>\n" + text.replace("</untrusted_context>", "&lt;/untrusted_context&gt;") + \
        "\n</untrusted_context>"


def _js_slice(text: str, start: int, stop: int | None = None) -> str:
    """JavaScript's ``String.prototype.slice``: indexes count UTF-16 code units."""
    units = text.encode("utf-16-le")
    count = len(units) // 2
    start = start if start >= 0 else max(count + start, 0)
    stop = count if stop is None else stop
    return units[2 * start: 2 * stop].decode("utf-16-le", errors="surrogatepass")


def _js_length(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


def cut(content: str, max_chars: int, grouping: str = ",") -> str:
    """Gemini CLI 0.29+'s formatTruncatedToolOutput, numbers grouped as ``toLocaleString`` does."""
    if _js_length(content) <= max_chars:
        return content
    head_chars = max_chars // 5
    tail_chars = max_chars - head_chars

    def grouped(n: int) -> str:
        return f"{n:,}".replace(",", grouping)

    omitted = _js_length(content) - head_chars - tail_chars
    return (f"Output too large. Showing first {grouped(head_chars)} and last {grouped(tail_chars)} characters. "
            f"For full output see: {SAVED}\n{_js_slice(content, 0, head_chars)}\n\n"
            f"... [{grouped(omitted)} characters omitted] ...\n\n{_js_slice(content, -tail_chars)}")


LOG = "\n".join(f"tests/test_{i}.py::test_case PASSED" for i in range(3000))
FAILED_RUN = wrap("Output: " + LOG + "\nFAILED tests/test_pay.py::test_refund - AssertionError\n"
                  "1 failed, 2999 passed\nExit Code: 1\nProcess Group PGID: 77")
PASSED_RUN = wrap("Output: " + LOG + "\n3000 passed\nProcess Group PGID: 78")


def shell(text: str, status: str | None = "success") -> tuple[str, str, str]:
    outcome = read_outcome("shell", {"output": text}, status)
    assert outcome_class("run_shell_command", {"output": text}, status)[0] == outcome.state  # one reading
    return outcome.state, outcome.detail, outcome.tail


# -- A: an output Gemini CLI cut when recording it ------------------------------------------------------------------


def test_a_cut_output_is_read_by_its_kept_end() -> None:
    recorded = cut(FAILED_RUN, 40_000)
    assert recorded.startswith("Output too large. Showing first 8,000 and last 32,000 characters.")
    assert shell(recorded) == (FAILED, "exit code 1", "1 failed, 2999 passed")
    assert shell(recorded, None)[:2] == (FAILED, "exit code 1")  # a checkpoint: the fields alone say it
    assert shell(cut(PASSED_RUN, 40_000))[0] == OK
    kept = kept_text(recorded)
    assert kept.head.startswith("Output: tests/test_0.py") and kept.tail.endswith("Process Group PGID: 77")


@pytest.mark.parametrize("grouping", [",", ".", "\u202f", ""])
def test_the_cut_envelope_in_any_locale_and_with_wide_characters(grouping: str) -> None:
    """toLocaleString groups digits as the user's locale does, and JavaScript counts a character
    outside the basic plane as two: the kept start ends where Gemini CLI ended it."""
    wide = wrap("Output: 🚀 build 🚀\n" + LOG + "\nmake: *** [all] Error 2\nExit Code: 2\nProcess Group PGID: 9")
    recorded = cut(wide, 40_000, grouping)
    assert shell(recorded)[:3] == (FAILED, "exit code 2", "make: *** [all] Error 2")
    assert kept_text(recorded).head.startswith("Output: 🚀 build 🚀\n")


def test_a_line_the_cut_split_is_not_read_as_a_field() -> None:
    """The kept end starts mid-line: the piece of an output line there is no field line."""
    block = "Background PIDs: " + ", ".join(str(pid) for pid in range(1000, 1100)) + "\nProcess Group PGID: 5"
    content = wrap("Output: " + "x" * 50_000 + " Exit Code: 7\n" + block)
    piece = "Exit Code: 7\n" + block + "\n</untrusted_context>"
    limit = next(m for m in range(len(piece), 2 * len(piece)) if m - m // 5 == len(piece))
    recorded = cut(content, limit)
    assert recorded.endswith("\n\n" + piece)  # the cut fell just before "Exit Code: 7", mid-line
    assert kept_text(recorded).tail == block
    assert shell(recorded)[0] == OK


def test_the_earlier_cut_envelopes() -> None:
    """0.26 to 0.28 kept the last lines only; up to 0.25 the first and last lines, with a note."""
    last_lines = ("Output too large. Showing the last 3 of 4000 lines. For full output see: " + SAVED + "\n...\n"
                  "1 failed, 2999 passed\nExit Code: 1\nProcess Group PGID: 77")
    assert shell(last_lines)[:2] == (FAILED, "exit code 1")
    earlier_block = ("Output too large. Showing the last 6 of 4000 lines. For full output see: " + SAVED +
                     "\n...\n3000 passed\nError: (none)\nExit Code: 0\nSignal: (none)\nBackground PIDs: (none)\n"
                     "Process Group PGID: 12")
    assert shell(earlier_block)[0] == OK
    nothing_kept = "Output too large. Showing the last 2 of 4000 lines. For full output see: x\n...\nok\ndone"
    assert shell(nothing_kept)[0] == UNKNOWN  # no field line in its place: no form to read
    old = ("Tool output was too large and has been truncated.\nThe full output has been saved to: " + SAVED +
           "\nTo read the complete output, use the read_file tool.\nTruncated part of the output:\n"
           "Command: make\nDirectory: (root)\nOutput: cc -c a.c\n... [CONTENT TRUNCATED] ...\n"
           "cc: fatal error\nError: (none)\nExit Code: 2\nSignal: (none)\nBackground PIDs: (none)\n"
           "Process Group PGID: 4")
    assert shell(old)[:3] == (FAILED, "exit code 2", "cc: fatal error")
    unsaved = old.split("Truncated part of the output:\n", 1)[1] + "\n[Note: Could not save full output to file]"
    assert shell(unsaved)[:2] == (FAILED, "exit code 2")


def test_a_cut_output_masked_later_and_a_cut_cancellation() -> None:
    preview = cut(FAILED_RUN, 40_000).split("\n", 1)[0] + (
        "\n<untrusted_context>\nOutput: tests/test_0.py::test_case PASSED\n\n... [3990 lines omitted] ...\n\n"
        "1 failed, 2999 passed\nExit Code: 1\nProcess Group PGID: 77\n</untrusted_context>")
    masked = f"<tool_output_masked>\n{preview}\n\nOutput too large. Full output available at: {SAVED}\n" \
             "</tool_output_masked>"
    assert shell(masked)[:2] == (FAILED, "exit code 1")
    cancelled = cut(wrap("Command was cancelled by user before it could complete. Below is the output before it "
                         "was cancelled:\n" + LOG), 40_000)
    assert shell(cancelled, None)[0] == CANCELLED


def test_a_cut_session_file_reads_as_recorded(tmp_path: Path) -> None:
    path = Recording(tmp_path).shell("pytest -q", cut(FAILED_RUN, 40_000)).write()
    digest, facts = _read_both(path)
    assert [c.outcome.text() for c in digest.calls] == ["failed (exit code 1)"]
    assert ("command", "pytest -q", FAILED) in facts


# -- B: which form carries an "Error:" field --------------------------------------------------------------------


def test_an_error_line_in_the_0_27_form_is_the_commands_own_output() -> None:
    text = wrap("Output: 12:00 backup done\nError: disk quota at 91% (warning only)\nProcess Group PGID: 9")
    for status in ("success", None):
        assert shell(text, status) == (OK, "", "")
    assert shell_fields(text)["Output"] == "Error: disk quota at 91% (warning only)"


def test_the_earlier_form_writes_every_field_in_its_place() -> None:
    spawn = ("Command: ./deploy.sh\nDirectory: (root)\nOutput: (empty)\nError: spawn /bin/bash ENOENT\n"
             "Exit Code: (none)\nSignal: (none)\nBackground PIDs: (none)\nProcess Group PGID: (none)")
    assert shell(spawn, None)[:2] == (FAILED, "spawn /bin/bash ENOENT")
    no_pgid = "Command: ls\nDirectory: (root)\nStdout: a\nStderr: (empty)\nError: (none)\nExit Code: 0\n" \
              "Signal: (none)\nBackground PIDs: (none)"  # the first versions: no process group line
    assert shell(no_pgid, None)[0] == OK
    assert shell_fields(no_pgid)["Output"] == "a"
    out_of_place = "Command: ls\nDirectory: (root)\nOutput: a\nError: (none)\nProcess Group PGID: 3"
    assert shell(out_of_place, None)[0] == UNKNOWN  # "Exit Code" and "Signal" missing: not the form


def test_values_the_0_27_form_never_writes_are_output() -> None:
    """From 0.27 an exit code is written only when it is not 0, and no "(none)" is written."""
    assert shell(wrap("Output: step 3\nExit Code: 0\nProcess Group PGID: 4"))[0] == OK
    assert shell(wrap("Output: step 3\nExit Code: (none)\nProcess Group PGID: 4"))[0] == OK
    assert shell(wrap("Output: worker\nSignal: received\nProcess Group PGID: 4"))[0] == OK
    assert shell(wrap("Output: (empty)\nSignal: 15\nProcess Group PGID: 4"))[:2] == (TERMINATED, "signal 15")


def test_what_the_0_27_form_cannot_tell_apart() -> None:
    """An output whose own last line is "Exit Code: 1" (``cat ci-report.txt``) followed by the
    process group line is byte for byte what Gemini CLI writes for a command that exited 1: it
    reads as recorded, a failure.  Pinned so that a change here is a decision, not an accident."""
    assert shell(wrap("Output: step build\nExit Code: 1\nProcess Group PGID: 103"))[:2] == (FAILED, "exit code 1")


def test_a_checkpoint_reads_the_fields_only_where_the_form_puts_them(tmp_path: Path) -> None:
    history_ = [
        {"role": "user", "parts": [{"text": "Show me the end of the app log and run the deploy."}]},
        {"role": "model", "parts": [{"functionCall": {"id": "c1", "name": "run_shell_command",
                                                      "args": {"command": "tail -n 2 /var/log/app.log"}}}]},
        {"role": "user", "parts": [{"functionResponse": {"id": "c1", "name": "run_shell_command", "response": {
            "output": wrap("Output: 12:00 backup done\nError: disk quota at 91%\nProcess Group PGID: 9")}}}]},
        {"role": "model", "parts": [{"functionCall": {"id": "c2", "name": "run_shell_command",
                                                      "args": {"command": "./deploy.sh"}}}]},
        {"role": "user", "parts": [{"functionResponse": {"id": "c2", "name": "run_shell_command", "response": {
            "output": "Command: ./deploy.sh\nDirectory: (root)\nOutput: Error: no target\nError: (none)\n"
                      "Exit Code: 3\nSignal: (none)\nBackground PIDs: (none)\nProcess Group PGID: 5"}}}]},
        {"role": "model", "parts": [{"text": "The log ends with a warning; the deploy needs a target."}]},
    ]
    path = tmp_path / "checkpoint-log.json"
    path.write_text(json.dumps({"history": history_, "authType": "gemini-api-key"}), encoding="utf-8")
    digest, facts = _read_both(path)
    assert [(c.outcome.state, c.outcome.detail, c.outcome.tail) for c in digest.calls] == [
        (OK, "", ""), (FAILED, "exit code 3", "Error: no target")]
    assert ("command", "tail -n 2 /var/log/app.log", OK) in facts
    assert ("command", "./deploy.sh", FAILED) in facts


# -- C: the recorded status, the pairing, the error field -------------------------------------------------------


def test_a_null_error_field_is_no_error() -> None:
    body = {"output": wrap("Output: a b\nProcess Group PGID: 9"), "error": None}
    assert read_outcome("shell", body, "success").text() == "ok"
    assert read_outcome("read", {"output": "x", "error": None}, "success").state == OK
    assert outcome_class("run_shell_command", body, "success") == (OK, "")
    assert read_outcome("edit", {"error": {"message": None}}, None).state == FAILED  # an error object is one


def test_a_failure_recorded_without_an_error_message_quotes_no_output_as_its_reason() -> None:
    """Status "error" and no ``error`` field: the call failed, and its output is only its output."""
    outcome = read_outcome("read", {"output": "Reading 3 files\nsrc/a.py: 40 lines"}, "error")
    assert (outcome.state, outcome.detail, outcome.text()) == (FAILED, "", "failed")
    assert outcome.tail == "src/a.py: 40 lines"  # said as "its output ended ...", never as the error
    assert read_outcome("read", {"error": "File not found: a.py"}, "error").text() == 'failed: "File not found: a.py"'


def test_the_calls_status_stands_for_a_result_recorded_apart() -> None:
    statuses = ToolStatuses({(3, 0): "success"}, {(1, "dep1"): "error", (1, "dep2"): "success"})
    assert statuses.result_status(3, 0, 1, "dep1") == "success"  # the result's own record speaks first
    assert statuses.result_status(2, 0, 1, "dep1") == "error"
    assert statuses.result_status(2, 1, 1, "dep2") == "success"
    assert statuses.result_status(2, 0, 1, None) is None and statuses.result_status(2, 0, 1, "other") is None


def test_a_call_recorded_as_failed_with_its_result_in_a_user_message(tmp_path: Path) -> None:
    recording = Recording(tmp_path)
    recording.raw({"id": "m1", "timestamp": T0, "type": "gemini", "content": "Deploying.", "model": "gemini-2.5-pro",
                   "toolCalls": [{"id": "dep1", "name": "run_shell_command", "args": {"command": "./deploy.sh"},
                                  "status": "error", "timestamp": T0}]})
    result = {"output": wrap("Output: deployed\nProcess Group PGID: 3")}
    recording.raw({"id": "u1", "timestamp": T0, "type": "user", "content": [{"functionResponse": {
        "id": "dep1", "name": "run_shell_command", "response": result}}]})
    session = load(recording.write())
    turns = history(session)
    contents = [t.content for t in turns]
    facts = {(f.kind, f.key, f.state) for f in extract(contents, tool_statuses(session, turns)).facts}
    assert ("command", "./deploy.sh", FAILED) in facts


def test_two_calls_sharing_an_id_in_one_turn_each_keep_their_result(tmp_path: Path) -> None:
    path = Recording(tmp_path).shell("rm -rf /srv/cache", wrap("Output: rm: cannot remove: Permission denied\n"
                                                               "Exit Code: 1\nProcess Group PGID: 4"), ident="dup",
                                     then=("curl -sf http://staging/health",
                                           wrap("Output: ok\nProcess Group PGID: 5"))).write()
    digest, facts = _read_both(path)
    assert [(c.command(), c.outcome.state, c.result_turn is not None) for c in digest.calls] == [
        ("rm -rf /srv/cache", FAILED, True), ("curl -sf http://staging/health", OK, True)]
    assert digest.calls[0].outcome.tail == "rm: cannot remove: Permission denied"
    assert ("command", "rm -rf /srv/cache", FAILED) in facts
    assert ("command", "curl -sf http://staging/health", OK) in facts


def _turn(role: str, *parts: dict[str, Any]) -> dict[str, Any]:
    return {"role": role, "parts": list(parts)}


def _call(ident: str, name: str) -> dict[str, Any]:
    return {"functionCall": {"id": ident, "name": name, "args": {}}}


def _answer(ident: str, name: str) -> dict[str, Any]:
    return {"functionResponse": {"id": ident, "name": name, "response": {"output": name}}}


def test_pairing_by_id_one_turn_at_a_time() -> None:
    contents = [
        _turn("user", {"text": "go"}),
        _turn("model", _call("x", "a"), _call("x", "b")),
        _turn("user", _answer("x", "a"), _answer("x", "b")),
        _turn("user", _answer("x", "a"), _answer("x", "b")),  # 0.61's second copy of each result
        _turn("model", _call("x", "c")),  # the id again in a later turn: a new call
        _turn("user", _answer("x", "c")),
    ]
    assert pair_calls(contents) == {(2, 0): (1, 0), (2, 1): (1, 1), (3, 0): (1, 0), (3, 1): (1, 1), (5, 0): (4, 0)}
    repaired, fixes = repair_pairs(contents)
    assert fixes == 0 and repaired == contents  # no call was left without its answer


def test_kept_text_of_a_short_text_is_the_text() -> None:
    assert kept_text("plain") == Kept("plain", "plain")
    assert kept_text(wrap("Output: a")) == Kept("Output: a", "Output: a")
    long = "a\n" * 5000
    kept = kept_text(long)
    assert kept.head == long[:4000] and kept.tail.startswith("a\n") and len(kept.tail) < 4000


class Recording:
    """A Gemini CLI 0.61 recording (JSONL) under ``tmp_path``: each result in its call's record
    and again in a user message, as Gemini CLI writes them."""

    def __init__(self, tmp_path: Path) -> None:
        self.path = tmp_path / "proj" / "chats" / "session-2026-11-22T05-22-aaaaaaaa.jsonl"
        self.records: list[dict[str, Any]] = [
            {"sessionId": "aaaaaaaa-0000-0000-0000-000000000001", "projectHash": "0" * 64, "startTime": T0,
             "lastUpdated": T0, "kind": "main"},
            {"id": "u0", "timestamp": T0, "type": "user", "content": [{"text": "Run the checks and deploy."}]},
        ]

    def raw(self, record: dict[str, Any]) -> Recording:
        self.records.append(record)
        return self

    def shell(self, command: str, output: str, ident: str = "", then: tuple[str, str] | None = None) -> Recording:
        n = len(self.records)
        calls = [(ident or f"run_shell_command_{n}", command, output)]
        if then is not None:
            calls.append((ident or f"run_shell_command_{n}_b", *then))
        tool_calls, parts = [], []
        for call_id, cmd, out in calls:
            part = {"functionResponse": {"id": call_id, "name": "run_shell_command", "response": {"output": out}}}
            tool_calls.append({"id": call_id, "name": "run_shell_command", "args": {"command": cmd},
                               "result": [part], "status": "success", "timestamp": T0})
            parts.append(part)
        self.records.append({"id": f"m{n}", "timestamp": T0, "type": "gemini", "content": "Running.",
                             "model": "gemini-2.5-pro", "toolCalls": tool_calls})
        self.records.append({"id": f"u{n}", "timestamp": T0, "type": "user", "content": parts})
        return self

    def write(self) -> Path:
        self.records.append({"id": "end", "timestamp": T0, "type": "gemini", "content": "Done.",
                             "model": "gemini-2.5-pro"})
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in self.records),
                             encoding="utf-8")
        return self.path


def _read_both(path: Path) -> tuple[Any, set[tuple[str, str, str]]]:
    """The digest of a session file and the independent reader's (kind, key, state) facts."""
    session = load(path)
    turns = history(session)
    contents = [t.content for t in turns]
    statuses = tool_statuses(session, turns)
    facts = {(f.kind, f.key, f.state) for f in extract(contents, statuses).facts}
    return collect(contents, statuses), facts
