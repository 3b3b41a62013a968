"""Export and copy from the app, as a person does it: x writes a file, y copies to the clipboard.

The file the dialog writes must be what ``session-inspector export`` writes
for the same session (both call ``inspector.export``), the preview goes in
when asked, the session itself is never written over, and ``y`` puts the
turn at the cursor (or, on the preview, the snapshot) on the clipboard.
"""

from __future__ import annotations

from pathlib import Path

from textual.widgets import Checkbox, Input, Select, Static

from inspector.analysis import analyze
from inspector.export import build, render, turn_markdown
from inspector.format import visible
from inspector.session import load
from inspector.tui.app import InspectorApp
from inspector.tui.screens.export import ExportScreen
from inspector.tui.screens.snapshot import SnapshotScreen
from inspector.tui.session.screen import SessionScreen
from tests.snapshot_app import idle, screen_after, settle

SIZE = (100, 32)


def notes(app: InspectorApp) -> list[str]:
    return [str(note.message) for note in app._notifications]




async def exported(pilot, out: Path) -> None:  # type: ignore[no-untyped-def]
    """Open the session, export it to ``out`` with the dialog's defaults, and wait for the write."""
    await settle(pilot)
    await export_dialog(pilot, out)
    await pilot.press("enter")
    await idle(pilot)


async def export_dialog(pilot, out: Path) -> ExportScreen:  # type: ignore[no-untyped-def]
    await pilot.press("x")
    await pilot.pause()
    dialog = pilot.app.screen
    assert isinstance(dialog, ExportScreen)
    dialog.query_one("#export-path", Input).value = str(out)
    return dialog


async def test_x_writes_the_same_markdown_as_the_cli(session_file: Path, tmp_path: Path) -> None:
    out = tmp_path / "exports" / "session.md"
    out.parent.mkdir()
    app = InspectorApp(session_file, threshold=0.5, live=False)
    async with app.run_test(size=SIZE) as pilot:
        await exported(pilot, out)
        assert isinstance(app.screen, SessionScreen)
        written = out.read_text(encoding="utf-8")
        session = load(session_file)
        analysis = analyze(session, threshold=0.5)
        assert written == render(build(session, analysis), "md")
        assert f"| estimated tokens | {analysis.total_estimated_tokens:,} |" in written
        assert f"### Turn {len(analysis.turns) - 1:,}:" in written
        assert any(note.startswith(f"Wrote {out} ") for note in notes(app)), notes(app)


async def test_choosing_html_renames_the_file_and_writes_a_page(session_file: Path, tmp_path: Path) -> None:
    app = InspectorApp(session_file, threshold=0.5, live=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        dialog = await export_dialog(pilot, tmp_path / "page.md")
        dialog.query_one("#export-format", Select).value = "html"
        await pilot.pause()
        path_field = dialog.query_one("#export-path", Input)
        assert path_field.value == str(tmp_path / "page.html")
        path_field.focus()
        await pilot.press("enter")
        await settle(pilot)
    text = (tmp_path / "page.html").read_text(encoding="utf-8")
    assert text.lstrip().lower().startswith("<!doctype html>")
    assert session_file.name in text


async def test_the_previewed_compaction_goes_in_when_asked(session_file: Path, tmp_path: Path) -> None:
    out = tmp_path / "with-preview.md"
    app = InspectorApp(session_file, threshold=0.5, live=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        snapshot = (await screen_after(pilot, "c", SnapshotScreen)).preview.result.snapshot
        assert snapshot
        await pilot.press("y")  # the preview's own copy key: the snapshot as text
        assert app.clipboard == visible(snapshot)
        await pilot.press("escape")
        await pilot.pause()
        dialog = await export_dialog(pilot, out)
        assert dialog.query_one("#export-preview", Checkbox).value is True
        dialog.query_one("#export-path", Input).focus()
        await pilot.press("enter")
        await settle(pilot)
    written = out.read_text(encoding="utf-8")
    assert "## Compaction snapshot" in written
    assert visible(snapshot).splitlines()[1] in written


async def test_the_session_itself_is_never_the_target(session_file: Path) -> None:
    before = session_file.read_bytes()
    app = InspectorApp(session_file, threshold=0.5, live=False)
    async with app.run_test(size=SIZE) as pilot:
        await exported(pilot, session_file)
        assert any("that is the session itself" in note for note in notes(app))
    assert session_file.read_bytes() == before


async def test_y_copies_the_turn_at_the_cursor(session_file: Path) -> None:
    app = InspectorApp(session_file, threshold=0.5, live=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        view = app.screen
        assert isinstance(view, SessionScreen)
        await pilot.press("home", "down", "down")
        cursor = view.table.cursor
        assert cursor == 2
        await pilot.press("y")
        assert view.loaded is not None
        assert app.clipboard == turn_markdown(view.loaded.analysis, cursor)
        assert app.clipboard.startswith(f"### Turn {cursor:,}: ")


async def test_an_empty_name_is_said_until_a_name_is_typed(session_file: Path, tmp_path: Path) -> None:
    app = InspectorApp(session_file, threshold=0.5, live=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        dialog = await export_dialog(pilot, tmp_path / "x.md")
        field = dialog.query_one("#export-path", Input)
        field.value = ""
        await pilot.press("enter")
        await pilot.pause()
        error = dialog.query_one("#export-error", Static)
        assert "give a file name" in str(error.content)
        await pilot.press(*"a.md")
        await pilot.pause()
        assert str(error.content) == ""  # no longer true: not said any more
