"""The app, on a session that attacks the terminal, from a folder whose name does too (issue 12.2).

What reaches the terminal is checked, not a widget's text: after each step
the whole screen is drawn as the driver would write it (the compositor's
full update, rendered to the escape sequences a real terminal receives) and
that text must hold none of the session's escapes raw: no BEL, no OSC 2
(window title) or OSC 52 (clipboard), no C1 controls, no bidi overrides, no
lone surrogate.  Textual's own sequences are CSI colour and cursor codes,
which never contain those.  The walk goes through the session list, the
session view over every turn, the compaction preview and its tabs, apply,
the timeline, undo, help, the export dialog and search.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from textual.pilot import Pilot

from inspector.tui.app import InspectorApp
from inspector.tui.screens.dialogs import ConfirmScreen
from inspector.tui.screens.session_list import SessionListScreen
from inspector.tui.screens.snapshot import SnapshotScreen
from inspector.tui.screens.timeline import TimelineScreen
from inspector.tui.session.screen import SessionScreen
from inspector.tui.widgets.turn_table import TurnTable
from tests.hostile import hostile_copy
from tests.snapshot_app import idle

SIZE = (160, 50)
# Raw in what is written to the terminal: BEL, an OSC, any C0 control Textual never writes (it writes
# ESC only to start CSI "[" codes), DEL, C1, bidi overrides, surrogates.
RAW = re.compile("[\x00-\x08\x0b-\x1a\x1c-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069\ud800-\udfff]"
                 "|\x1b[^\\[]")


def _written(pilot: Pilot[None], where: str) -> str:
    """The whole screen as the terminal would receive it; fails if session text drives it."""
    app = pilot.app
    sequence = app.screen._compositor.render_full_update().render_segments(app.console)
    found = [repr(sequence[max(0, m.start() - 40):m.end() + 20]) for m in RAW.finditer(sequence)][:3]
    assert not found, f"{where}: raw control characters reach the terminal: {found}"
    return sequence


async def test_no_session_text_drives_the_terminal(tmp_path: Path) -> None:
    path = hostile_copy(tmp_path / "root")
    original = path.read_bytes()
    app = InspectorApp(path.parent, threshold=0.5, live=False)
    async with app.run_test(size=SIZE) as pilot:
        await idle(pilot)
        assert isinstance(app.screen, SessionListScreen)
        shown = _written(pilot, "session list")
        assert "\\e]2;PWNED\\x07" in shown, "the file name is shown, escaped"
        await pilot.press("enter")
        await idle(pilot)
        view = app.screen
        assert isinstance(view, SessionScreen) and view.loaded is not None
        _written(pilot, "session view")
        table = view.query_one(TurnTable)
        for turn in range(len(view.loaded.analysis.turns)):
            table.move_to(turn)
            await pilot.pause()
            _written(pilot, f"turn {turn}")
        for key in ("question_mark", "w", "x", "b"):  # help, warnings, export, subagents: each shown, then closed
            await pilot.press(key)
            await idle(pilot)
            _written(pilot, f"after {key}")
            if app.screen is not view:
                await pilot.press("escape")
                await idle(pilot)
            assert app.screen is view
        await pilot.press("c")
        await idle(pilot)
        assert isinstance(app.screen, SnapshotScreen)
        for tab in "12345":
            await pilot.press(tab)
            await pilot.pause()
            _written(pilot, f"preview tab {tab}")
        await pilot.press("a")
        await idle(pilot)
        assert isinstance(app.screen, ConfirmScreen)
        _written(pilot, "apply confirmation")
        await pilot.press("y")
        await idle(pilot)
        assert app.screen is view and path.read_bytes() != original
        _written(pilot, "after apply (notification shown)")
        await pilot.press("t")
        await idle(pilot)
        assert isinstance(app.screen, TimelineScreen)
        _written(pilot, "timeline")
        await pilot.press("escape", "u")
        await idle(pilot)
        assert isinstance(app.screen, ConfirmScreen)
        _written(pilot, "undo confirmation")
        await pilot.press("y")
        await idle(pilot)
        _written(pilot, "after undo (notification shown)")
        assert path.read_bytes() == original
        await pilot.press("escape")
        await idle(pilot)
        assert isinstance(app.screen, SessionListScreen)
        await pilot.press("s", *"discount", "enter")
        await idle(pilot)
        _written(pilot, "search hits")


async def test_a_session_opened_directly_shows_its_path_escaped(tmp_path: Path) -> None:
    path = hostile_copy(tmp_path / "root")
    app = InspectorApp(path, threshold=0.5, live=False)
    async with app.run_test(size=SIZE) as pilot:
        _written(pilot, "while opening")
        await idle(pilot)
        shown = _written(pilot, "opened")
        assert "\\e]2;PWNED\\x07" in shown


async def test_a_file_that_cannot_be_opened_says_why_without_driving_the_terminal(tmp_path: Path) -> None:
    """The reason names the file (its hostile folder and name) and the line: shown escaped."""
    folder = hostile_copy(tmp_path / "root").parent
    broken = folder / "session-broken\x1b]2;PWNED\x07.jsonl"
    broken.write_text('{"sessionId": "s", "projectHash": "p"}\n{"id": "m1", "type": "user", "content": 5}\n',
                      encoding="utf-8")
    app = InspectorApp(broken, threshold=0.5, live=False)
    async with app.run_test(size=SIZE) as pilot:
        await idle(pilot)
        view = app.screen
        assert isinstance(view, SessionScreen) and view.failed is not None and ".jsonl:2: " in view.failed
        shown = _written(pilot, "cannot open")
        assert "Cannot open this file" in shown and "\\e]2;PWNED\\x07" in shown


async def test_a_damaged_journal_under_a_path_with_markup_is_told_not_raised(tmp_path: Path) -> None:
    folder = tmp_path / "a[" / "x]b"  # the path holds "[/x]", a closing tag nothing opened
    folder.mkdir(parents=True)
    path = folder / "s.json"
    path.write_bytes((Path(__file__).parents[1] / "sample_sessions" / "legacy-pomodoro.json").read_bytes())
    done = subprocess.run([sys.executable, "-m", "inspector", "compact", str(path), "--provider", "offline", "--force",
                           "--apply"], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    journal = folder / ".session-inspector" / "s.json" / "journal.jsonl"
    assert journal.is_file()
    with journal.open("a", encoding="utf-8") as handle:
        handle.write('{"event": \n')
    app = InspectorApp(path, threshold=0.5, live=False)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await idle(pilot)
        await pilot.press("t")
        await idle(pilot)
        assert not isinstance(app.screen, TimelineScreen)  # refused, the session view stays
        said = [n.message for n in app._notifications]
        assert any(str(journal.name) in message or "journal" in message for message in said), said
        assert any("[/x]" in message for message in said), said  # the path, literally, not read as markup
