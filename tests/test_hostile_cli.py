"""Every command, on a session that attacks the terminal, from a folder whose name does too (issue 12.2).

The session (tests/hostile.py) holds window-title and clipboard escapes,
a screen wipe, BEL, C1 controls, bidi overrides, a lone surrogate, DEL,
Rich markup and an emoji code in its prompts, replies, thoughts, tool
results, ``model`` field and title, in its file name and in its folder's
path.  Whatever a command prints must be valid UTF-8 holding none of those
characters raw (each shown as a visible escape, or a JSON ``\\u`` escape
that reads back as the same text), with the exit code it always has, and
never a traceback.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from inspector.cli import main
from inspector.commands.output import WARNINGS_SHOWN
from inspector.format import visible
from tests.hostile import HOSTILE, LONE, MARKUP, SAMPLE, TITLE, hostile_copy, unsafe_in


def _run(capsys: pytest.CaptureFixture[bytes], argv: list[str], *, terminal: bool = False) -> tuple[int, str, str]:
    """``main(argv)``; its output must be strict UTF-8 without raw control characters.  ``terminal``: stdout
    says it is a terminal (JSON output escapes more there); else Rich draws no colours, so any ESC is text."""
    with pytest.MonkeyPatch.context() as patch:
        if terminal:
            patch.setattr(sys.stdout, "isatty", lambda: True)
        code = main(argv)
    out, err = capsys.readouterr()
    where = " ".join(a[-40:] for a in argv)
    texts = []
    for name, data in (("stdout", out), ("stderr", err)):
        try:
            text = data.decode("utf-8")  # strict: a raw surrogate would have been written as invalid UTF-8
        except UnicodeDecodeError as exc:
            raise AssertionError(f"{where}: {name} is not UTF-8: {exc}") from None
        assert not unsafe_in(text), f"{where}: raw control characters reached {name}: {unsafe_in(text)}"
        assert "Traceback" not in text, f"{where}: {text[-2000:]}"
        texts.append(text)
    return code, texts[0], texts[1]


@pytest.fixture
def hostile(tmp_path: Path) -> Path:
    return hostile_copy(tmp_path / "root")


def test_reports_show_session_text_literally(hostile: Path, capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    path = str(hostile)
    shown = visible(HOSTILE, one_line=True)
    code, out, _ = _run(capsysbinary, ["analyze", "--all", path, "--model", "gemini-2.5-pro"])
    assert code == 0 and visible(hostile.name, one_line=True) in out
    code, out, err = _run(capsysbinary, ["compact", path, "--provider", "offline", "--force"])
    assert code == 0 and "nothing was written (use --apply to write it)" in out
    assert "cut to an excerpt" in out, "the line naming the output folder (markup in its path)"
    assert MARKUP in out, "markup and emoji codes are shown as they are written"
    assert shown[:60] in out.replace("\n", "")  # the snapshot holds the user's words, escaped
    code, _, _ = _run(capsysbinary, ["compact", path, "--provider", "offline", "--force", "--compare"])
    assert code in (0, 1)
    code, _, _ = _run(capsysbinary, ["compact", path, "--provider", "offline", "--force", "--strategy", "staged"])
    assert code in (0, 1)
    for form in ("md", "html"):
        code, out, _ = _run(capsysbinary, ["export", path, "--format", form])
        assert code == 0 and out
    out_file = hostile.parent / f"export {HOSTILE[:20]}.md"
    code, _, err = _run(capsysbinary, ["export", path, "--out", str(out_file)])
    assert code == 0 and "wrote " in err and out_file.is_file()


def test_json_output_escapes_and_reads_back_the_same_text(
    hostile: Path, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    code, out, _ = _run(capsysbinary, ["analyze", "--json", str(hostile)], terminal=True)
    assert code == 0
    data = json.loads(out)
    assert data["model"] == f"gemini-2.5-pro{HOSTILE}", "the JSON escapes are the same text once read"
    assert data["path"] == str(hostile)
    code, out, _ = _run(capsysbinary, ["compact", "--json", str(hostile), "--provider", "offline", "--force"],
                        terminal=True)
    assert code == 0
    assert any(HOSTILE in text for text in _strings(json.loads(out)["new_history"]))


def test_json_to_a_program_is_the_text_as_it_is(hostile: Path, capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    """Not on a terminal, JSON keeps C1 and bidi characters as they are (JSON escapes C0 itself), and a lone
    surrogate is written as ``\\ud800`` (the output stays UTF-8, as ``JSON.stringify`` writes it)."""
    assert main(["analyze", "--json", str(hostile)]) == 0
    out = capsysbinary.readouterr().out
    assert "\x9b".encode() in out and "\u202e".encode() in out and b"\\ud800" in out
    assert json.loads(out.decode("utf-8"))["model"] == f"gemini-2.5-pro{HOSTILE}"


def _strings(value: object) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        value = list(value.values())
    return [s for item in value for s in _strings(item)] if isinstance(value, list) else []


def test_apply_history_revert_show_journal_text_literally(
    hostile: Path, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    path = str(hostile)
    original = hostile.read_bytes()
    for _ in range(2):
        code, out, _ = _run(capsysbinary, ["compact", path, "--provider", "offline", "--force", "--apply"])
        assert code == 0 and "applied: appended a checkpoint" in out
        assert "nothing was written" not in out, "an apply must not first say nothing was written (12.8)"
    for argv in (["history", path], ["revert", "--list", path]):  # the offline digest is named, not the model
        code, out, _ = _run(capsysbinary, argv)
        assert code == 0 and "offline digest (no model was called)" in out and not unsafe_in(out), argv
    code, out, _ = _run(capsysbinary, ["history", path])
    assert visible(TITLE, one_line=True) in out  # the folder's name, as text
    argv = ["history", "--snapshots", path]
    code, out, _ = _run(capsysbinary, argv)  # 80 columns: the long text is wrapped, still shown, never sent
    assert code == 0 and visible(HOSTILE, one_line=True)[:40] in out, argv
    with pytest.MonkeyPatch.context() as wide:  # wide enough to hold it on one line
        wide.setenv("COLUMNS", "1000")
        code, out, _ = _run(capsysbinary, argv)
    assert code == 0 and visible(HOSTILE, one_line=True) in out, argv
    code, out, _ = _run(capsysbinary, ["history", "--json", path], terminal=True)
    assert code == 0 and json.loads(out)["entries"][0]["info"]["model"] == f"gemini-2.5-pro{HOSTILE}"
    code, out, _ = _run(capsysbinary, ["revert", "--list", "--json", path], terminal=True)
    assert code == 0 and len(json.loads(out)) == 2
    code, out, _ = _run(capsysbinary, ["revert", "--json", path], terminal=True)
    assert code == 0 and len(json.loads(out)) == 1
    code, out, _ = _run(capsysbinary, ["revert", path])
    assert code == 0 and "restored" in out
    assert hostile.read_bytes() == original
    code, _, err = _run(capsysbinary, ["revert", path])
    assert code == 2 and "already reverted" in err


def test_diff_and_search_show_text_literally(hostile: Path, capsysbinary: pytest.CaptureFixture[bytes],
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(hostile.parent.parent / "cache"))
    old = hostile.parent / f"old {HOSTILE[:30]}.txt"
    new = hostile.parent / f"new {HOSTILE[:30]}.txt"
    old.write_text("<state_snapshot><overall_goal>ship it</overall_goal></state_snapshot>")
    words = HOSTILE.replace(LONE, "")  # (a snapshot file is UTF-8 text: a raw surrogate is refused)
    new.write_text(f"<state_snapshot><overall_goal>ship {words} it</overall_goal></state_snapshot>")
    code, out, _ = _run(capsysbinary, ["diff", str(old), str(new)])
    assert code == 0 and "  + " in out and "overall_goal" in out
    code, out, _ = _run(capsysbinary, ["diff", "--json", str(old), str(new)], terminal=True)
    assert code == 0 and json.loads(out)["b"] == str(new)
    code, out, _ = _run(capsysbinary, ["search", "discount", "--folder", str(hostile.parent)])
    assert code == 0 and visible(str(hostile), one_line=True) in out
    code, out, _ = _run(capsysbinary, ["search", "discount", "--json", "--folder", str(hostile.parent)],
                        terminal=True)
    assert code == 0 and {h["path"] for h in json.loads(out)["hits"]} == {str(hostile)}


def test_refusals_name_a_hostile_path_literally(hostile: Path, capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    fifo = hostile.with_name(f"pipe {HOSTILE[:30]}.jsonl")
    os.mkfifo(fifo)
    folder = hostile.with_name(f"folder {HOSTILE[:30]}.jsonl")
    folder.mkdir()
    for target in (fifo, folder, hostile.with_name(f"gone {HOSTILE[:30]}.jsonl")):
        for argv in (["analyze"], ["compact", "--apply"], ["history"], ["revert"], ["revert", "--list"],
                     ["export"]):
            code, out, err = _run(capsysbinary, [*argv, str(target)])
            assert code == 2 and out == "" and len(err.splitlines()) == 1, (argv, target, err)
            assert visible(str(target), one_line=True) in err


@pytest.mark.parametrize("encoding", ["ascii", "latin-1", "cp1252"])
def test_an_output_that_is_not_utf8_gets_escapes_not_a_traceback(encoding: str) -> None:
    env = {**os.environ, "PYTHONIOENCODING": encoding}
    done = subprocess.run([sys.executable, "-m", "inspector", "analyze", str(SAMPLE)], capture_output=True,
                          env=env, check=False)
    assert done.returncode == 0 and b"Traceback" not in done.stderr, done.stderr[-500:]
    assert b"\\u2588" in done.stdout  # the bars, written as escapes the output can take
    done.stdout.decode(encoding)  # and nothing it cannot


def test_many_skipped_lines_are_counted_not_each_printed(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "broken-tail.jsonl"
    path.write_text(SAMPLE.read_text(encoding="utf-8") + "{bad\n" * 500, encoding="utf-8")
    assert main(["analyze", str(path)]) == 0
    err = capsys.readouterr().err.splitlines()
    assert len(err) == WARNINGS_SHOWN + 1 and err[-1].endswith("… and 480 more (analyze --json lists every one)")
    assert main(["analyze", "--json", str(path)]) == 0
    assert len(json.loads(capsys.readouterr().out)["warnings"]) == 500
