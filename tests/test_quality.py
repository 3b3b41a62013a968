"""The independent quality check: ground truth, recall per kind, false claims, and the benchmark rows."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from inspector import quality
from inspector.compaction.prompts import GEMINI_CLI_ACKNOWLEDGEMENT
from inspector.compaction.statuses import tool_statuses
from inspector.compaction.summarisers.gemini import GeminiSummariser
from inspector.compaction.summarisers.offline import OfflineSummariser
from inspector.quality.evaluate import evaluate
from inspector.quality.planted import FORMS, planted_sessions
from inspector.session import history, load
from tests.gemini_server import GeminiServer, reply


def call(turn_id: str, name: str, args: dict) -> dict:
    return {"role": "model", "parts": [{"functionCall": {"id": turn_id, "name": name, "args": args}}]}


def result(turn_id: str, name: str, output: str | None = None, error: str | None = None) -> dict:
    body = {"output": output} if error is None else {"error": error}
    return {"role": "user", "parts": [{"functionResponse": {"id": turn_id, "name": name, "response": body}}]}


HISTORY = [
    {"role": "user", "parts": [{"text": "Fix the importer. Never touch vendor/. What is wrong?"}]},
    call("1", "read_file", {"file_path": "/home/me/proj/src/importer.py"}),
    result("1", "read_file", "raise ValueError('Error: bad row')"),
    call("2", "run_shell_command", {"command": "grep -c error app.log"}),
    result("2", "run_shell_command",
           "<untrusted_context>\nOutput: 12 errors\nProcess Group PGID: 1\n</untrusted_context>"),
    call("3", "run_shell_command", {"command": "pytest -q"}),
    result("3", "run_shell_command", "<untrusted_context>\nOutput: E   KeyError: 'row'\nExit Code: 1\n"
                                     "Process Group PGID: 2\n</untrusted_context>"),
    call("4", "run_shell_command", {"command": 'git commit -am "Skip empty rows in the importer"'}),
    result("4", "run_shell_command", "<untrusted_context>\nOutput: [main 1a2b] Skip\nProcess Group PGID: 3\n"
                                     "</untrusted_context>"),
    {"role": "user", "parts": [{"text": "Now update the changelog."}]},
]


def facts() -> quality.Ground:
    return quality.extract(HISTORY)


def test_ground_truth_kinds() -> None:
    found = {(f.kind, f.key, f.state) for f in facts().facts}
    assert ("path", "/home/me/proj/src/importer.py", "read") in found
    assert ("command", "grep -c error app.log", "ok") in found  # the word "error" in output is not an outcome
    assert ("command", "pytest -q", "failed") in found
    assert ("error", "E KeyError: 'row'", "") in found
    assert ("constraint", "Never touch vendor/.", "") in found
    assert ("step", "Now update the changelog.", "") in found
    assert not any(kind == "constraint" and "wrong" in key for kind, key, _ in found)  # a question is no rule
    assert not any("ValueError" in key for _, key, _ in found)  # a read file's text is no error


def test_recall_needs_the_operation_and_the_recorded_outcome() -> None:
    good = ("<state_snapshot>\n<file_system_state>\n- READ: `src/importer.py`\n</file_system_state>\n<recent_actions>\n"
            "- `grep -c error app.log` -> ok\n- `pytest -q` -> failed (exit code 1)\n"
            '- `git commit -am "Skip empty rows in the importer"` -> ok\n</recent_actions>\n<key_knowledge>\n'
            "- pytest: E KeyError: 'row'\n</key_knowledge>\n<active_constraints>\n- Never touch vendor/\n"
            "</active_constraints>\n<task_state>\n- update the changelog\n</task_state>\n</state_snapshot>")
    report = quality.grade(facts(), good)
    assert report.recall == 1.0 and not report.false_claims
    bare = good.replace("- READ: `src/importer.py`", "- `src/importer.py`").replace(" -> failed (exit code 1)", "")
    lost = {(f.kind, f.key) for f in quality.grade(facts(), bare).lost}
    assert lost == {("path", "/home/me/proj/src/importer.py"), ("command", "pytest -q")}
    assert quality.grade(facts(), good).recall_of(["path", "command"]) == 1.0


def test_false_claims() -> None:
    wrong = ("<state_snapshot>\n<recent_actions>\n- `grep -c error app.log` failed\n- `pytest -q` passed\n"
             "- `pytest -q --lf` failed\n</recent_actions>\n<file_system_state>\n- DELETED: `src/importer.py`\n"
             "- READ: `src/missing.py`\n</file_system_state>\n</state_snapshot>")
    report = quality.grade(facts(), wrong, history_text=quality.history_text(HISTORY))
    reasons = " | ".join(c.reason for c in report.false_claims)
    assert "says `grep -c error app.log` failed; the history records ok" in reasons  # a success called a failure
    assert "says `pytest -q` ok; the history records failed" in reasons
    assert "`pytest -q --lf`, a command the history does not record" in reasons
    assert "says `/home/me/proj/src/importer.py` was deleted" in reasons  # only read, never deleted
    assert "names `src/missing.py`, which the history never mentions" in reasons
    assert len(report.false_claims) == 5
    assert all(c.turns for c in report.false_claims if "records" in c.reason)


def test_words_inside_backticks_and_quotes_are_data() -> None:
    snapshot = '<state_snapshot><recent_actions>\n- `grep -c error app.log` -> ok: "12 errors"\n</recent_actions>' \
               "</state_snapshot>"
    report = quality.grade(facts(), snapshot)
    assert not report.false_claims
    assert any(c.kept and c.fact.key == "grep -c error app.log" for c in report.checks)


def test_an_earlier_snapshot_grounds_what_it_said() -> None:
    earlier = ("<state_snapshot>\n<file_system_state>\n- READ: `src/app.py`\n</file_system_state>\n"
               "</state_snapshot>")
    history = [{"role": "user", "parts": [{"text": earlier}]},
               {"role": "model", "parts": [{"text": GEMINI_CLI_ACKNOWLEDGEMENT}]},  # as a compaction answers it
               call("1", "replace", {"file_path": "src/app.py"}),
               result("1", "replace", "Successfully modified file: src/app.py (1 replacements).")]
    ground = quality.extract(history)
    report = quality.grade(ground, "<state_snapshot><file_system_state>\n- READ: `src/app.py`\n- EDITED: `src/app.py`"
                                   "\n</file_system_state></state_snapshot>")
    assert not report.false_claims and report.recall == 1.0
    assert [f.kind for f in ground.facts].count("previous") == 1


@pytest.mark.parametrize("continuation", ["Please continue.", "System: Please continue."])
def test_gemini_clis_continuation_prompt_is_no_step_of_the_users(continuation: str) -> None:
    """The summariser does not take Gemini CLI's own next-speaker prompt for a request; neither does the
    check, or it would count it as the user's last step, lost from every snapshot."""
    history = [{"role": "user", "parts": [{"text": "Port the billing service to the new queue."}]},
               {"role": "model", "parts": [{"text": "Consumer ported."}]},
               {"role": "user", "parts": [{"text": continuation}]},
               {"role": "model", "parts": [{"text": "Producer ported too."}]}]
    steps = [f.value for f in quality.extract(history).facts if f.kind == "step"]
    assert steps == ["Port the billing service to the new queue."]


@pytest.mark.parametrize("planted", planted_sessions(len(FORMS) * 2), ids=lambda s: s.name)
def test_the_extractor_finds_exactly_the_planted_facts(planted, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    session = load(planted.write(tmp_path))
    turns = history(session)
    ground = quality.extract([t.content for t in turns], tool_statuses(session, turns))
    assert {(f.kind, f.key, f.state) for f in ground.facts} == {(a.kind, a.key, a.state) for a in planted.answers}


@pytest.mark.parametrize("planted", planted_sessions(len(FORMS) * 2), ids=lambda s: s.name)
async def test_offline_on_planted_sessions(planted, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    row = await evaluate(planted.write(tmp_path), OfflineSummariser(), planted=planted.answers)
    assert row.status == "COMPRESSED" and row.extractor_misses == 0
    assert row.false_claims == ()
    assert row.target_recall is not None and row.target_recall >= 0.95, row.recall


async def test_gemini_rows_through_the_loopback_server(tmp_path: Path) -> None:
    planted = planted_sessions(1)[0]
    path = planted.write(tmp_path)
    command = next(a.key for a in planted.answers if a.kind == "command" and a.state == "ok")
    claim = f"<state_snapshot><recent_actions>\n- `{command}` failed\n</recent_actions></state_snapshot>"
    with GeminiServer([reply(claim), reply(claim)]) as server:
        summariser = GeminiSummariser("gemini-2.5-flash", api_key="AIza-test-key-000", base_url=server.url)
        row = await evaluate(path, summariser, planted=planted.answers)
    assert row.provider == "gemini" and len(server.bodies()) == 2
    assert [c.reason for c in row.false_claims] == [f"says `{command.lower()}` failed; the history records ok"]
    assert row.target_recall is not None and row.target_recall < 0.5


def test_the_benchmark_runs_the_gemini_path_against_the_loopback_stand_in(tmp_path: Path) -> None:
    import subprocess
    import sys

    path = planted_sessions(1)[0].write(tmp_path)
    repo = Path(__file__).resolve().parent.parent
    out = subprocess.run([sys.executable, str(repo / "bench" / "snapshot_quality.py"), "--serve-loopback", str(path)],
                         check=True, capture_output=True, text=True, env={**os.environ, "GEMINI_API_KEY": ""}).stdout
    assert "through the loopback stand-in at http://127.0.0.1:" in out
    row = next(line for line in out.splitlines() if line.startswith(path.name))
    cells = row.split()
    assert cells[1] == "gemini-loopback" and "%" in cells[-3]  # graded, with a size
    assert "false claims: 0" in out


async def test_a_compaction_flags_a_path_its_snapshot_invents(tmp_path: Path) -> None:
    """The model's snapshot names a file the summarised turns never mention: the compaction's own fact
    check (what ``compact --json`` and the app's Lost facts tab show) calls it a false claim.  A path the
    history does name, written from the project (``./``) or lower-case, is not one."""
    from inspector.compaction.request import CompactionRequest
    from inspector.compaction.strategies import compact_session

    planted = planted_sessions(1)[0]
    path = planted.write(tmp_path)
    session = load(path)
    real = next(a.key for a in planted.answers if a.kind == "path")
    relative = "./" + real.lstrip("/").split("/", 1)[-1] if real.startswith("/") else "./" + real
    snapshot = ("<state_snapshot>\n<file_system_state>\n"
                f"- READ: `{relative}`\n"
                "- MODIFIED: `src/invented_module.py`\n</file_system_state>\n</state_snapshot>")
    with GeminiServer([reply(snapshot), reply(snapshot)]) as server:
        summariser = GeminiSummariser("gemini-2.5-flash", api_key="AIza-test-key-000", base_url=server.url)
        result = await compact_session(session, CompactionRequest(force=True, split=len(history(session))),
                                       summariser, threshold=0.5)
    assert result.facts is not None and result.snapshot == snapshot
    reasons = [c.reason for c in result.facts.false_claims]
    assert "names `src/invented_module.py`, which the history never mentions" in reasons, reasons
    assert not [r for r in reasons if "never mentions" in r and "invented" not in r], reasons
