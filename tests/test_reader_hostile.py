"""The reader against hostile files: one line naming the file, the line and what is wrong; never a hang.

Each case is met as a person meets it: ``analyze`` and ``compact`` on the
command line (exit 2, one line on stderr, nothing written), and the app
(a notification, and the app still answers ``q``).
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import pytest

from inspector.cli import main
from inspector.session import SessionError, load
from inspector.tui.app import InspectorApp
from inspector.tui.session.screen import SessionScreen

META = {"sessionId": "s-1", "projectHash": "p", "startTime": "2026-01-01T00:00:00.000Z",
        "lastUpdated": "2026-01-01T00:00:02.000Z", "kind": "main"}


def records(tokens: str) -> list[str]:
    """A small JSONL session whose model message records ``tokens`` (raw JSON text) as its usage."""
    user = {"id": "u1", "timestamp": "2026-01-01T00:00:01.000Z", "type": "user", "content": [{"text": "hi"}]}
    model = json.dumps({"id": "g1", "timestamp": "2026-01-01T00:00:02.000Z", "type": "gemini", "content": "ok",
                        "model": "gemini-2.5-pro", "tokens": "TOKENS"}).replace('"TOKENS"', tokens)
    return [json.dumps(META), json.dumps(user), model]


BAD_USAGE = [
    ('{"input": 1e400, "output": 1, "cached": 0, "total": 2}', "tokens.input must be a finite number"),
    ('{"input": 1' + "0" * 400 + ', "output": 1}', "tokens.input must be a finite number"),
    ('{"input": 1' + "0" * 5000 + ', "output": 1}', "tokens.input must be a finite number"),  # past Python's int
    ('{"input": "12", "output": 1, "cached": 0, "total": 2}', "tokens.input must be a number, not text"),
    ('{"input": true, "output": 1, "cached": 0, "total": 2}', "tokens.input must be a number, not true/false"),
]


@pytest.mark.parametrize(("tokens", "words"), BAD_USAGE, ids=[w for _, w in BAD_USAGE])
@pytest.mark.parametrize("command", ["analyze", "compact"])
def test_bad_usage_figures_are_one_line_naming_file_and_line(
    tokens: str, words: str, command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "session.jsonl"
    path.write_text("\n".join(records(tokens)) + "\n", encoding="utf-8")
    before = sorted(tmp_path.iterdir())
    code = main([command, str(path)] + (["--provider", "offline", "--apply"] if command == "compact" else []))
    err = capsys.readouterr().err.strip()
    assert code == 2
    assert err.splitlines() == [err] and f"{path}:3:" in err and words in err, err
    assert sorted(tmp_path.iterdir()) == before  # nothing written


def test_bad_usage_in_a_legacy_file_names_the_message(tmp_path: Path) -> None:
    path = tmp_path / "session-2026.json"
    doc = {**META, "messages": [{"id": "g1", "type": "gemini", "content": "ok", "tokens": {"input": "lots"}}]}
    path.write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(SessionError) as caught:
        load(path)
    assert "messages[0]" in str(caught.value) and "tokens.input must be a number" in str(caught.value)


@pytest.mark.parametrize("value", [2**53, 2**70, -5, 1e30, 0.5])
def test_odd_but_finite_counts_load_as_gemini_cli_reads_them(value: float, tmp_path: Path) -> None:
    """Gemini CLI resumes these; so must the project (tests/reference generates such files too)."""
    path = tmp_path / "session.jsonl"
    path.write_text("\n".join(records(json.dumps({"input": value, "output": 0}))) + "\n", encoding="utf-8")
    session = load(path)
    assert session.messages[-1]["tokens"]["input"] == value


def not_a_file_cases(tmp_path: Path) -> list[tuple[Path, str]]:
    fifo = tmp_path / "pipe.jsonl"
    os.mkfifo(fifo)
    cases = [(fifo, "is a FIFO (named pipe), not a session file"), (tmp_path, "is a folder, not a session file")]
    for device in ("/dev/zero", "/dev/null", "/dev/urandom"):
        if os.path.exists(device):
            cases.append((Path(device), "is a character device, not a session file"))
    return cases


@pytest.mark.parametrize("command", ["analyze", "compact"])
def test_a_fifo_a_folder_or_a_device_is_refused_at_once(
    command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Nothing here writes to the FIFO: reading it would wait forever, so a hang fails the test by timing out
    in a thread that is then abandoned (the assertion on ``finished`` catches it)."""
    for path, words in not_a_file_cases(tmp_path):
        outcome: list[int] = []
        runner = threading.Thread(target=lambda p=path, out=outcome: out.append(main([command, str(p)])),
                                  daemon=True)
        runner.start()
        runner.join(timeout=30)
        finished = not runner.is_alive()
        assert finished, f"{command} {path} hung"
        err = capsys.readouterr().err.strip()
        assert outcome == [2] and err == f"session-inspector: {path}: {words}", err


def test_a_file_over_a_gibibyte_is_refused_without_reading_it(tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "huge.jsonl"
    with path.open("wb") as out:
        out.truncate(2**30 + 1)  # sparse: takes no disk
    assert main(["analyze", str(path)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"session-inspector: {path}: is 1.0 GiB; session files over 1 GiB are not read")


@pytest.mark.parametrize("case", ["fifo", "device", "usage", "text"])
async def test_the_app_shows_a_notification_and_still_quits(case: str, tmp_path: Path) -> None:
    if case == "fifo":
        path = tmp_path / "pipe.jsonl"
        os.mkfifo(path)
        words = "FIFO"
    elif case == "device":
        path = tmp_path / "zero.jsonl"
        path.symlink_to("/dev/zero")
        words = "is a character device"
    else:
        path = tmp_path / "session.jsonl"
        tokens = '{"input": 1e400}' if case == "usage" else '{"input": "12", "output": 1}'
        path.write_text("\n".join(records(tokens)) + "\n", encoding="utf-8")
        words = "tokens.input must be a " + ("finite number" if case == "usage" else "number, not text")
    app = InspectorApp(path, threshold=0.5, live=False)
    async with app.run_test(size=(100, 30)) as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, SessionScreen) and screen.loaded is None
        notes = [n for n in app._notifications if n.severity == "error"]
        assert any(path.name in n.message and words in n.message for n in notes), [n.message for n in notes]
        await pilot.press("q")
    assert not app.is_running


def test_records_gemini_cli_passes_over_are_named_not_dropped_in_silence(tmp_path: Path) -> None:
    """A line that is JSON but no record Gemini CLI reads (a bare value, or an id, $rewindTo or $set of
    the wrong type) is passed over by both readers, and said here; a record one of its keys still
    makes one of the four kinds (an update whose id is a number) counts as that kind."""
    sample = Path(__file__).resolve().parents[1] / "sample_sessions" / "gemini-cli-0.61-three-prompts.jsonl"
    base = sample.read_text(encoding="utf-8")
    odd = ['5', '[1, 2]', 'null', '"text"', '{"id": 7, "type": "user", "content": "hi"}', '{"$rewindTo": 5}',
           '{"$set": 5}', '{"id": 5, "$set": {"summary": "still applied"}}', '{"someLaterKind": true}']
    path = tmp_path / "odd.jsonl"
    path.write_text(base + "\n".join(odd) + "\n", encoding="utf-8")
    plain = load(sample)
    session = load(path)
    first = base.count("\n") + 1
    said = {warning.line: warning.message for warning in session.warnings}
    assert sorted(said) == list(range(first, first + 7)), said  # the last two lines are no warning
    assert said[first] == "a number where a record belongs: ignored, as Gemini CLI ignores it"
    assert said[first + 4].startswith("its 'id' is a number")
    assert said[first + 6].startswith("its '$set' is a number")
    assert len(session.messages) == len(plain.messages)
    assert session.metadata.get("summary") == "still applied"
    assert not any(warning.gemini_reads for warning in session.warnings)  # an apply stays allowed


@pytest.mark.parametrize("name", ["bom.jsonl", "bom.json"])
def test_a_byte_order_mark_is_named_in_a_persons_words(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                        name: str) -> None:
    path = tmp_path / name
    path.write_bytes(b"\xef\xbb\xbf" + b'{"sessionId": "s", "projectHash": "p", "messages": []}\n')
    assert main(["analyze", str(path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and f"{name}:1: the file begins with a byte order mark (EF BB BF)" in err[0]
    assert "utf-8-sig" not in err[0]
