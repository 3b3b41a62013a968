"""Getting around a session as a person does: split here, compact --agentic's split, go to turn N,
search; and session text shown literally (escape sequences, BEL, bidi overrides)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from inspector.compaction.request import CompactionRequest
from inspector.compaction.strategies import compact_session
from inspector.compaction.summarisers import pick_summariser
from inspector.session import load
from inspector.tui.app import InspectorApp
from inspector.tui.screens.ask import AskScreen
from inspector.tui.session.screen import SessionScreen
from inspector.tui.widgets.turn_table import TurnTable
from tests.snapshot_app import SAMPLES, copy_sample, settle

SAMPLE = SAMPLES / "coding-task.jsonl"
RAW_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def detail_text(view: SessionScreen) -> str:
    body = view.detail.body
    return "\n".join(strip.text for strip in body.render_lines(body.region.reset_offset))


@pytest.fixture
def session_file(tmp_path: Path) -> Path:
    return copy_sample(tmp_path, SAMPLE.name)


async def opened(pilot) -> SessionScreen:  # type: ignore[no-untyped-def]
    await settle(pilot)
    view = pilot.app.screen
    assert isinstance(view, SessionScreen) and view.loaded is not None
    return view


async def test_agentic_key_takes_the_split_compact_agentic_takes(session_file: Path) -> None:
    expected = await compact_session(load(session_file), CompactionRequest(force=True, agentic=True),
                                     pick_summariser("offline"), threshold=0.5)
    assert expected.split_kind == "agentic" and expected.split_point > 0
    app = InspectorApp(session_file, threshold=0.5, live=False)
    async with app.run_test(size=(120, 40)) as pilot:
        view = await opened(pilot)
        assert view.split != expected.split_point  # it starts at Gemini CLI's own split
        await pilot.press("A")
        assert view.split == expected.split_point
        assert view.query_one(TurnTable).cursor == expected.split_point
        assert view.split_chosen


async def test_split_here_moves_only_to_a_turn_a_split_may_start_at(session_file: Path) -> None:
    app = InspectorApp(session_file, threshold=0.5, live=False)
    async with app.run_test(size=(120, 40)) as pilot:
        view = await opened(pilot)
        analysis = view.loaded.analysis
        table = view.query_one(TurnTable)
        allowed = set(analysis.candidates) | view.loaded.agentic_set
        refused = next(i for i in range(1, len(analysis.turns)) if i not in allowed)
        chosen = next(i for i in sorted(allowed) if 0 < i != view.split)
        before = view.split
        table.move_to(refused)
        await pilot.press("h")
        assert view.split == before
        assert any(f"before turn {refused:,} would part a tool call" in n.message for n in app._notifications)
        table.move_to(chosen)
        await pilot.press("h")
        assert view.split == chosen and table.split == chosen


async def test_go_to_turn_n(session_file: Path) -> None:
    app = InspectorApp(session_file, threshold=0.5, live=False)
    async with app.run_test(size=(80, 24)) as pilot:
        view = await opened(pilot)
        count = len(view.loaded.analysis.turns)
        await pilot.press("colon")
        assert isinstance(app.screen, AskScreen)
        await pilot.press(*str(count + 5), "enter")
        assert isinstance(app.screen, AskScreen)  # refused, with the reason on screen
        assert f"no turn {count + 5:,}" in str(app.screen.query_one("#ask-error").render())
        await pilot.press(*["backspace"] * 4, "7", "enter")
        await pilot.pause()
        assert app.screen is view
        table = view.query_one(TurnTable)
        assert table.cursor == 7
        row = table.row_of(7) - int(table.scroll_y)
        assert 0 <= row < table.scrollable_content_region.height  # and on screen


def session_with(path: Path, turns: list[dict[str, object]]) -> None:
    lines = [{"sessionId": "5ea7c400-0000-4000-8000-000000000002", "projectHash": "cd" * 32,
              "startTime": "2026-11-20T09:00:00.000Z", "lastUpdated": "2026-11-20T09:00:00.000Z", "kind": "main"}]
    lines.extend(turns)
    path.write_text("".join(json.dumps(r) + "\n" for r in lines), encoding="utf-8")


def user(i: int, text: str) -> dict[str, object]:
    return {"id": f"u{i}", "timestamp": "2026-11-20T09:00:01.000Z", "type": "user", "content": [{"text": text}]}


def gemini(i: int, text: str, calls: list[dict[str, object]] | None = None) -> dict[str, object]:
    record: dict[str, object] = {"id": f"g{i}", "timestamp": "2026-11-20T09:00:02.000Z", "type": "gemini",
                                 "content": text, "model": "gemini-2.5-pro"}
    if calls:
        record["toolCalls"] = calls
    return record


async def test_search_finds_every_turn_holding_the_words_and_steps_through_them(tmp_path: Path) -> None:
    path = tmp_path / "chats" / "session-search.jsonl"
    path.parent.mkdir()
    call = {"id": "c1", "name": "read_file", "args": {"path": "src/Pelican.py"}, "status": "success",
            "timestamp": "2026-11-20T09:00:03.000Z",
            "result": [{"functionResponse": {"id": "c1", "name": "read_file",
                                             "response": {"output": "class PELICAN: pass"}}}]}
    session_with(path, [user(0, "hello"), gemini(0, "looking", [call]), user(1, "about the pelican?"),
                        gemini(1, "no birds here"), user(2, "thanks")])
    turns = load(path)
    from inspector.session import history

    contents = [t.content for t in history(turns)]
    expected = [i for i, c in enumerate(contents) if "pelican" in json.dumps(c).casefold()]
    assert len(expected) >= 3  # a tool argument, a tool output and a prompt
    app = InspectorApp(path, threshold=0.5, live=False)
    async with app.run_test(size=(120, 40)) as pilot:
        view = await opened(pilot)
        table = view.query_one(TurnTable)
        table.move_to(0)
        await pilot.press("slash")
        await pilot.press(*"Pelican", "enter")
        await settle(pilot)
        assert view.navigator.matches == expected
        assert table.cursor == expected[0]
        assert f"{len(expected):,} turns hold 'Pelican'" in view.status.get("search")
        await pilot.press("n")
        assert table.cursor == expected[1]
        await pilot.press("N", "N")
        assert table.cursor == expected[-1]  # wraps around
        await pilot.press("slash", *["backspace"] * 7, *"zebra", "enter")
        await settle(pilot)
        assert view.navigator.matches == [] and "no turn holds 'zebra'" in view.status.get("search")


HOSTILE = "title\x1b]2;pwned\x07 clip\x1b]52;c;Zm9v\x07 wipe\x1b[2J bell\x07 bidi\u202eTXT.exe"


async def test_session_text_is_shown_literally(tmp_path: Path) -> None:
    path = tmp_path / "chats" / "session-hostile.jsonl"
    path.parent.mkdir()
    call = {"id": "c1", "name": "run\x1b[2J", "args": {"cmd": HOSTILE}, "status": "success",
            "timestamp": "2026-11-20T09:00:03.000Z",
            "result": [{"functionResponse": {"id": "c1", "name": "run\x1b[2J", "response": {"output": HOSTILE}}}]}
    session_with(path, [user(0, HOSTILE), gemini(0, HOSTILE, [call]), user(1, "[bold]not markup[/] " + HOSTILE)])
    app = InspectorApp(path, threshold=0.5, live=False)
    async with app.run_test(size=(200, 50)) as pilot:
        view = await opened(pilot)
        table = view.query_one(TurnTable)
        for turn in range(len(view.loaded.analysis.turns)):
            table.move_to(turn)
            await pilot.pause()
            shown = detail_text(view)
            assert not RAW_CONTROL.search(shown), repr(shown)
            for y in range(table.size.height):
                assert not RAW_CONTROL.search(table.render_line(y).text)
        last = detail_text(view)  # turn 2, shown last
        assert "[bold]not markup[/]" in last
        assert "\\e]2;pwned\\x07" in last and "\\e[2J" in last and "\\u202eTXT.exe" in last
        table.move_to(1)
        await pilot.pause()
        shown = detail_text(view)
        assert "tool call: run\\e[2J" in shown and "\\e]52;c;Zm9v\\x07" in shown


async def test_filter_and_order_the_table(session_file: Path) -> None:
    from inspector.session import history

    contents = [t.content for t in history(load(session_file))]
    reads = [i for i, c in enumerate(contents)
             if any(isinstance(p, dict) and "functionResponse" in p and p["functionResponse"].get("name") == "read_file"
                    for p in c.get("parts", []))]
    assert reads
    app = InspectorApp(session_file, threshold=0.5, live=False)
    async with app.run_test(size=(120, 40)) as pilot:
        view = await opened(pilot)
        table = view.query_one(TurnTable)
        analysis = view.loaded.analysis
        await pilot.press("F", *"result read_file", "enter")
        await settle(pilot)
        assert table.shown == reads
        assert f"{len(reads):,} of {len(analysis.turns):,} turns match" in view.status.get("view")
        rows = [table.turn_at(r) for r in range(table.row_count)]
        assert [r for r in rows if r is not None] == reads and rows.count(None) == 1  # and the divider
        await pilot.press("home")
        assert table.cursor == reads[0]
        await pilot.press("down")
        assert table.cursor == reads[1]
        await pilot.press("o")  # largest first
        await settle(pilot)
        tokens = [analysis.turn_tokens(i) for i in table.shown]
        assert tokens == sorted(tokens, reverse=True) and sorted(table.shown) == reads
        assert None not in [table.turn_at(r) for r in range(table.row_count)]  # no divider out of turn order
        await pilot.press("escape")  # every turn again, in turn order; still in the session
        assert app.screen is view and table.shown is None and view.status.get("view") == ""
        await pilot.press("F", *">1000 user", "enter")
        await settle(pilot)
        big = [i for i in range(len(analysis.turns))
               if analysis.turns[i].role == "user" and analysis.turn_tokens(i) >= 1000]
        assert table.shown == big
        hidden = next(i for i in range(len(analysis.turns)) if i not in big)
        await pilot.press("colon", *str(hidden), "enter")  # a hidden turn: the filter goes
        await settle(pilot)
        assert table.shown is None and table.cursor == hidden and view.navigator.turn_filter is None


async def test_largest_first_puts_the_cursor_on_the_largest_turn_at_the_top(tmp_path: Path) -> None:
    """Issue 40: ``o`` left the cursor mid-list on its turn, the largest turns off screen.  Largest
    first shows them from the top, the cursor on the largest when its own turn is not among them;
    back in turn order the cursor stays on its turn, in view."""
    path = copy_sample(tmp_path, "long-migration.jsonl")
    app = InspectorApp(path, threshold=0.5, live=False)
    async with app.run_test(size=(80, 24)) as pilot:
        view = await opened(pilot)
        table = view.table
        start = table.cursor  # where the view opens: at the split, far down the list
        assert start > 20
        await pilot.press("o")
        await settle(pilot)
        assert table.by_tokens and table.shown is not None
        largest = table.shown[0]
        assert view.loaded.analysis.turn_tokens(largest) == max(map(view.loaded.analysis.turn_tokens,
                                                                    range(len(view.loaded.analysis.turns))))
        assert table.cursor == largest and largest != start
        assert table.scroll_y == 0  # the largest turns fill the view from the top
        await pilot.press("o")  # turn order again: the cursor stays on the turn, in view
        await settle(pilot)
        assert table.shown is None and table.cursor == largest
        assert 0 <= table.row_of(largest) - int(table.scroll_y) < table.scrollable_content_region.height
