"""The session view, driven like a person would: open, step the split, read the detail."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from rich.console import Console, Group
from rich.text import Text
from textual.binding import Binding

from inspector.analysis import analyze
from inspector.session import load
from inspector.tui.app import InspectorApp
from inspector.tui.session.screen import SessionScreen
from inspector.tui.widgets.context_header import ContextHeader
from inspector.tui.widgets.turn_detail import TurnDetail
from inspector.tui.widgets.turn_table import TurnTable
from tests.snapshot_app import SAMPLES, build_app

SIZE = (160, 45)


def sample_files() -> list[Path]:
    return sorted(p for p in SAMPLES.glob("*.json*") if p.is_file()) if SAMPLES.is_dir() else []


def pick_sample(min_candidates: int = 3) -> Path:
    """A sample whose split has room to move both ways."""
    for path in sample_files():
        try:
            result = analyze(load(path), threshold=0.5)
        except Exception:
            continue
        if len(result.candidates) >= min_candidates and 0 < result.candidates.index(result.split_point) < len(
            result.candidates
        ) - 1 if result.split_point in result.candidates else False:
            return path
    pytest.skip("no sample session with a movable split in sample_sessions/")


def plain(renderable: object, width: int = 200) -> str:
    console = Console(width=width, record=True, color_system=None)
    console.print(renderable)
    return console.export_text()


def table_lines(table: TurnTable) -> list[str]:
    return [table.render_line(y).text for y in range(table.size.height)]


async def opened(pilot) -> SessionScreen:  # type: ignore[no-untyped-def]
    await pilot.pause()
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()
    screen = pilot.app.screen
    assert isinstance(screen, SessionScreen)
    return screen


async def test_open_step_split_and_back_to_reference() -> None:
    path = pick_sample()
    expected = analyze(load(path), threshold=0.5)
    app = build_app(path)
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(pilot)
        assert screen.loaded is not None
        analysis = screen.loaded.analysis
        assert len(analysis.turns) == len(expected.turns)
        assert screen.split == expected.split_point
        table = screen.query_one(TurnTable)
        assert table.virtual_size.height == len(expected.turns) + 1
        header = plain(screen.query_one(ContextHeader).content)
        context = expected.context
        assert f"{context.deciding_tokens:,} / {context.token_limit:,}" in header
        assert context.source in header, "the header names the figure that decides"

        await pilot.press("right_square_bracket")
        after_next = expected.step(expected.split_point, 1)
        assert after_next != expected.split_point
        assert screen.split == after_next
        figures = expected.split_figures(after_next)
        header = plain(screen.query_one(ContextHeader).content)
        assert f"{figures['summarised_tokens']:,}" in header
        assert f"{figures['kept_tokens']:,}" in header
        divider = [line for line in table_lines(table) if line.startswith("── split")]
        assert divider and f"split {after_next} " in divider[0]
        assert f"{figures['summarised_tokens']:,} tok" in divider[0]

        await pilot.press("left_square_bracket", "left_square_bracket")
        before = expected.step(expected.split_point, -1)
        assert screen.split == before
        assert table.split == before
        await pilot.press("equals_sign")
        assert screen.split == expected.split_point
        assert "(reference)" in plain(screen.query_one(ContextHeader).content)


async def test_rows_above_split_are_dimmed_and_cursor_moves_detail() -> None:
    path = pick_sample()
    app = build_app(path)
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(pilot)
        table = screen.query_one(TurnTable)
        await pilot.press("home")
        assert table.cursor == 0
        summarised = table._style("turn-table--summarised")
        kept = table._style("turn-table--kept")
        assert summarised != kept
        # the row of turn 1 (not the cursor) carries the summarised style while the split is above it
        row = table.render_line(table.row_of(1) - int(table.scroll_offset.y))
        assert any(seg.style and seg.style.bgcolor == summarised.bgcolor for seg in row)
        await pilot.press("down", "down")
        assert table.cursor == 2
        detail = plain(screen.query_one(TurnDetail).body.content)
        assert detail.startswith("turn 2 ")


def session_with_text(tmp_path: Path, texts: list[str]) -> Path:
    lines = [{"sessionId": "s1", "projectHash": "p" * 64, "startTime": "2026-01-01T00:00:00Z",
              "lastUpdated": "2026-01-01T00:00:00Z", "kind": "main"}]
    for i, text in enumerate(texts):
        lines.append({"id": f"u{i}", "timestamp": "2026-01-01T00:00:00Z", "type": "user", "content": [{"text": text}]})
        lines.append({"id": f"g{i}", "timestamp": "2026-01-01T00:00:00Z", "type": "gemini", "content": f"ok {text}",
                      "tokens": {"input": 10 + i, "output": 2, "cached": 0, "total": 12 + i},
                      "model": "gemini-2.5-pro"})
    path = tmp_path / "chats" / "session-markup.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


async def test_untrusted_markup_shows_literally(tmp_path: Path) -> None:
    nasty = "see [link=https://evil.example]here[/link] and [/] then [bold red]loud[/bold red] [@click=app.quit]x[/]"
    path = session_with_text(tmp_path, [nasty, "second"])
    app = InspectorApp(path, threshold=0.5, live=False)
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(pilot)
        await pilot.press("home")
        body = screen.query_one(TurnDetail).body
        text = plain(body.content, width=400)
        assert nasty in text
        await pilot.press("down")
        assert f"ok {nasty}" in plain(body.content, width=400)
        shown = "".join(strip.text for strip in body.render_lines(body.region.reset_offset))
        assert "[/]" in shown and "[link=" in shown
        assert app.is_running


async def test_bad_file_is_a_notification_not_a_crash(tmp_path: Path) -> None:
    bad = tmp_path / "broken.json"
    bad.write_text('{"sessionId": "x", "messages": [ {"id": 1, ', encoding="utf-8")
    app = InspectorApp(bad, threshold=0.5, live=False)
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(pilot)
        assert screen.loaded is None
        assert screen.failed is not None and "broken.json" in screen.failed
        notes = list(app._notifications)
        assert any("broken.json" in n.message and n.severity == "error" for n in notes)
        await pilot.press("right_square_bracket")  # nothing to step: no crash
        assert app.is_running


async def test_help_lists_every_key_with_its_id() -> None:
    path = pick_sample()
    app = build_app(path)
    async with app.run_test(size=SIZE) as pilot:
        await opened(pilot)
        await pilot.press("question_mark")
        from inspector.tui.screens.help import HelpScreen

        assert isinstance(app.screen, HelpScreen)
        ids = {row[4] for row in app.screen.rows}
        assert {"split.next", "split.previous", "split.reference", "app.help", "table.down"} <= ids
        await pilot.press("escape")
        assert isinstance(app.screen, SessionScreen)


async def test_help_at_80_columns_names_each_ids_and_where_each_key_works() -> None:
    """Below 110 columns the "where" and "binding id" columns go: where becomes a heading over the
    keys of each part of the screen (home is "First turn" in the table, "Scroll Home" in the detail),
    and the id follows what the key does, so a keymap can still be written from the help."""
    from inspector.tui.screens.help import HelpScreen

    app = build_app(pick_sample())
    async with app.run_test(size=(80, 24)) as pilot:
        await opened(pilot)
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen)
        width = app.screen.query_one("#help-table").content_size.width
        assert width < 80
        console = Console(width=width, record=True, file=io.StringIO())
        console.print(app.screen.key_table(narrow=True))
        text = console.export_text()
        for _where, _keys, _description, _tooltip, ident in app.screen.rows:
            assert not ident or f"({ident})" in text, ident  # ids are one word: never broken over lines
        table_at, detail_at = text.index("in the turn table"), text.index("in the turn detail")
        assert table_at < text.index("First turn") < detail_at < text.index("Scroll Home")


async def test_keymap_remaps_a_binding() -> None:
    path = pick_sample()
    app = build_app(path)
    app.set_keymap({"split.next": "n"})
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(pilot)
        reference = screen.split
        await pilot.press("n")
        assert screen.split == screen.loaded.analysis.step(reference, 1)


async def test_palette_runs_split_next() -> None:
    path = pick_sample()
    app = build_app(path)
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(pilot)
        reference = screen.split
        await pilot.press("ctrl+p")
        await pilot.press(*"next split")
        await pilot.pause()
        await pilot.press("enter")
        await pilot.pause()
        assert screen.split == screen.loaded.analysis.step(reference, 1)


async def test_the_empty_palette_lists_the_apps_commands_then_textuals_the_same_each_time() -> None:
    """One provider: the app's commands in the order of its keys, then Textual's own by name, each
    once.  (With two providers the list came in whichever order they answered.)"""
    from textual.command import CommandList, CommandPalette

    from inspector.tui.commands import palette_commands

    app = build_app(pick_sample())
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(pilot)
        ours = [command.name for command in palette_commands(screen)]
        theirs = sorted(c.title for c in app.get_system_commands(screen) if c.discover and c.title not in ours)
        assert "Quit" in ours and {"Keys", "Theme"} <= set(theirs)
        for _ in range(3):
            await pilot.press("ctrl+p")
            await pilot.pause()
            palette = app.screen
            assert isinstance(palette, CommandPalette)
            listed = palette.query_one(CommandList)
            for _ in range(50):  # the providers answer in a task: until every entry is in
                if listed.option_count >= len(ours) + len(theirs):
                    break
                await pilot.pause()
            names = [str(listed.get_option_at_index(i).prompt).split("\n")[0] for i in range(listed.option_count)]
            assert names == ours + theirs
            await pilot.press("escape")
            await pilot.pause()
        await pilot.press("ctrl+p", *"theme")
        await pilot.pause()
        assert any("Theme" in str(app.screen.query_one(CommandList).get_option_at_index(i).prompt)
                   for i in range(app.screen.query_one(CommandList).option_count))


async def test_palette_discover_offers_every_session_action() -> None:
    from inspector.tui.commands import InspectorCommands
    from inspector.tui.session.screen import SessionScreen

    path = pick_sample()
    app = build_app(path)
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(pilot)
        provider = InspectorCommands(screen)
        names = {hit.text async for hit in provider.discover()}
        # every key of the session screen that can run now, by its own description (apply and
        # undo need a preview and an apply first; subagents only where there are some)
        wanted = {b.description for b in SessionScreen.BINDINGS if isinstance(b, Binding) and b.id
                  and screen.check_action(b.action.split("(")[0], ()) is True}
        assert {"Next split", "Export", "Copy turn", "Help", "Quit", "Open a session"} <= names
        assert wanted <= names, wanted - names
        assert "Apply" not in names  # no preview yet: the palette leaves it out


async def test_a_huge_turn_shows_its_two_ends_and_what_lies_between(tmp_path: Path) -> None:
    """A 5 MB prompt: the detail pane lays out its first and last characters and says how many it
    leaves out (laying out all of it took minutes for 20 MB), literally as ever."""
    from textual.geometry import Region

    from inspector.tui.widgets.turn_detail import EDGE
    from tests.test_tui_list import write_session

    head, tail = "[bold]START " + "\x1b[31m", " END[/]"
    huge = head + "word " * 1_000_000 + tail
    path = tmp_path / "chats" / "session-huge.jsonl"
    write_session(path, ["a short question", huge], 1_700_000_000)
    app = InspectorApp(path, threshold=0.5, live=False)
    async with app.run_test(size=SIZE) as pilot:
        view = await opened(pilot)
        index = next(i for i, t in enumerate(view.loaded.analysis.turns) if "START" in json.dumps(t.content))
        detail = view.query_one(TurnDetail)
        detail.show(view.loaded.analysis, index, view.split)
        await pilot.pause()
        body = detail.body
        assert 0 < body.size.height < 2 * EDGE // 20  # two ends wrapped, not five million characters
        shown = "\n".join(s.text for s in body.render_lines(Region(0, 0, body.size.width, body.size.height)))
        hidden = len(huge) - 2 * EDGE
        assert f"{hidden:,} characters not shown here" in shown
        assert "[bold]START \\e[31m" in shown and "END[/]" in shown  # literal, escape shown as text
    # a search still marks its words in the two ends shown
    from inspector.tui.widgets.turn_detail import turn_renderable

    marked = turn_renderable(view.loaded.analysis, index, view.split, highlight="START")
    ends = [piece for line in marked.renderables if isinstance(line, Group) for piece in line.renderables]
    assert any(span.style == "reverse" for piece in ends if isinstance(piece, Text) for span in piece.spans)
