"""Issue 37.8: every bidirectional control in session text reaches the terminal escaped, never raw.

U+061C (Arabic letter mark) reached the terminal raw from ``analyze``,
``compact``, ``history``, ``export`` and the app while the other bidi controls
were escaped: one table (``format.TERMINAL_DRIVERS``) now holds them all, and
both ways to the terminal (``visible`` for text, the JSON writer's byte
pattern) read it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from inspector.cli import main
from inspector.format import TERMINAL_DRIVERS, visible
from inspector.session import history, load
from inspector.store import JournalInfo, apply_history
from tests.test_store import compacted, sample_copy

# Every bidi control Unicode lists (Bidi_Control=Yes): ALM, LRM, RLM, LRE..RLO, LRI..PDI.
BIDI = "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
MODEL = f"gemini{BIDI}-pro"


def _raw(text: str) -> list[str]:
    return [f"U+{ord(c):04X}" for c in BIDI if c in text]


def _bidi_session(tmp_path: Path) -> Path:
    """coding-task.jsonl with every bidi control in each model name and each user prompt."""
    path = sample_copy(tmp_path, "coding-task.jsonl")
    lines = []
    for line in path.read_text().splitlines():
        record = json.loads(line)
        if record.get("type") == "gemini":
            record["model"] = MODEL
        if record.get("type") == "user" and isinstance(record.get("content"), list):
            record["content"] = [{"text": f"Fix {BIDI} the login in src/auth{BIDI}.py"}]
        lines.append(json.dumps(record))
    path.write_text("\n".join(lines) + "\n")
    return path


def test_the_one_table_holds_every_bidi_control() -> None:
    for char in BIDI:
        assert any(low <= ord(char) <= high for low, high in TERMINAL_DRIVERS), f"U+{ord(char):04X}"
        assert visible(char) == f"\\u{ord(char):04x}"


@pytest.mark.parametrize("argv", [
    ["analyze"], ["analyze", "--json"], ["compact", "--provider", "offline", "--force"],
    ["compact", "--provider", "offline", "--force", "--json"], ["export", "--format", "md"],
    ["export", "--format", "md", "--compaction"],
], ids=" ".join)
def test_no_command_sends_a_bidi_control_raw(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                            monkeypatch: pytest.MonkeyPatch, argv: list[str]) -> None:
    path = _bidi_session(tmp_path)
    monkeypatch.setattr("sys.stdout.isatty", lambda: True, raising=False)  # the --json writer escapes for a terminal
    code = main([*argv, str(path)])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert not _raw(out + err), (_raw(out + err), out[-2000:])
    assert "\\u061c" in out or "\\u061C" in out, "the mark is shown, escaped"


def test_history_sends_no_bidi_control_raw(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _bidi_session(tmp_path)
    session = load(path)
    turns = history(session)
    new, sources = compacted(turns, 2)
    apply_history(session, turns, new, sources, journal=JournalInfo(
        provider=f"offline{BIDI}", model=MODEL, status=f"COMPRESSED{BIDI}",
        snapshot=f"<state_snapshot>{BIDI}</state_snapshot>"))
    for argv in (["history"], ["history", "--snapshots"], ["revert", "--list"]):
        assert main([*argv, str(path)]) == 0, argv
        out, err = capsys.readouterr()
        assert not _raw(out + err), (argv, _raw(out + err))
        assert "\\u061c" in out, argv


async def test_the_app_shows_no_bidi_control_raw(tmp_path: Path) -> None:
    from inspector.tui.app import InspectorApp
    from tests.snapshot_app import idle

    path = _bidi_session(tmp_path)
    app = InspectorApp(path, threshold=0.5, live=False)
    async with app.run_test(size=(160, 50)) as pilot:
        await idle(pilot)
        shown = [str(app.screen._compositor.render_full_update().render_segments(app.console))]
        await pilot.press("d")
        await idle(pilot)
        shown.append(str(app.screen._compositor.render_full_update().render_segments(app.console)))
    text = "\n".join(shown)
    assert not _raw(text), _raw(text)
    assert "\\u061c" in text, "the mark is shown, escaped"
