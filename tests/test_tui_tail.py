"""A big session opens on its newest turns, read from the end of the file, while the rest is read:
figures that need the whole history say ``reading…``, keys that need them say so, and the whole
table then replaces the rows with the cursor on the same turn."""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot
from textual.strip import Strip
from textual.worker import WorkerFailed

from inspector.catalog.listing import human_size
from inspector.session import loader
from inspector.session.tail import TAIL_BYTES
from inspector.tui import loading
from inspector.tui.app import InspectorApp
from inspector.tui.messages import SessionLoaded, TailShown
from inspector.tui.session.loading_pane import LoadingPane
from inspector.tui.session.screen import SessionScreen
from inspector.tui.widgets.context_header import ContextHeader
from inspector.tui.widgets.turn_detail import TurnDetail
from inspector.tui.widgets.turn_table import PENDING, TurnTable
from tests.test_tui_view import plain

SIZE = (160, 45)


def recording(path: Path, *, early: dict[str, Any] | None = None) -> Path:
    """A recording a little over the tail's size: prompts, answers with tool calls written twice
    (without, then with results and usage), non-ASCII text; ``early``: a record near the start."""
    path.parent.mkdir(parents=True, exist_ok=True)
    filler = "lorem ipsum δέλτα 🙂 dolor sit amet " * 12
    with path.open("w", encoding="utf-8") as out:
        out.write(json.dumps({"sessionId": "tail", "projectHash": "h" * 64, "startTime": "t", "lastUpdated": "t"})
                  + "\n")
        if early is not None:
            out.write(json.dumps(early) + "\n")
        n = 0
        while out.tell() < TAIL_BYTES * 3 // 2:
            n += 1
            out.write(json.dumps({"id": f"u{n}", "timestamp": "t", "type": "user",
                                  "content": [{"text": f"prompt {n} {filler}"}]}, ensure_ascii=False) + "\n")
            call = {"id": f"c{n}", "name": "read_file", "args": {"file_path": f"src/{n}.py"}, "status": "success"}
            answer = {"id": f"g{n}", "timestamp": "t", "type": "gemini", "content": f"answer {n}",
                      "model": "gemini-2.5-pro", "toolCalls": [call]}
            out.write(json.dumps(answer) + "\n")
            answer["toolCalls"] = [{**call, "result": f"contents of {n} " + filler}]
            answer["tokens"] = {"input": 100 + n, "output": 3, "cached": n, "thoughts": 0, "tool": 0,
                                "total": 103 + 2 * n}
            out.write(json.dumps(answer, ensure_ascii=False) + "\n")
    return path


@pytest.fixture
def held(monkeypatch: pytest.MonkeyPatch) -> threading.Event:
    """The whole read waits until the test sets this event (the tail is read before it)."""
    gate = threading.Event()
    real = loading.read_open

    def read_open(path: Path, fd: int, watch: Any = loader.QUIET) -> loader.Session:
        assert gate.wait(60), "the test never let the whole read go on"
        return real(path, fd, watch)

    monkeypatch.setattr(loading, "read_open", read_open)
    return gate


def text_of(strip: Strip) -> str:
    return "".join(segment.text for segment in strip)


def cells(table: TurnTable, row: int) -> dict[str, str]:
    """A row's cells by column, as drawn."""
    line = text_of(table._row(row, 400))
    found: dict[str, str] = {}
    at = 0
    for column, width in table.columns:
        found[column.key] = line[at:at + width].strip()
        at += width + 1
    return found


def notes(app: InspectorApp) -> list[str]:
    return [str(n.message) for n in app._notifications]


def hook_for(seen: list[object], tail_shown: asyncio.Event) -> Callable[[object], None]:
    def hook(message: object) -> None:
        if isinstance(message, (TailShown, SessionLoaded)):
            seen.append(message)
        if isinstance(message, TailShown):
            tail_shown.set()
    return hook


async def test_newest_turns_at_once_then_the_whole_table_with_the_cursor_kept(tmp_path: Path,
                                                                             held: threading.Event) -> None:
    path = recording(tmp_path / "chats" / "session-big.jsonl")
    seen: list[object] = []
    tail_shown = asyncio.Event()
    app = InspectorApp(path, threshold=0.5, live=False)
    async with app.run_test(size=SIZE, message_hook=hook_for(seen, tail_shown)) as pilot:
        await asyncio.wait_for(tail_shown.wait(), 60)
        for _ in range(3):  # the body is laid out, then the rows are given to the table (after a refresh)
            await pilot.pause()
        screen = app.screen
        assert isinstance(screen, SessionScreen)
        assert screen.loaded is None and screen.tail is not None  # the whole read is held
        tail = screen.tail
        table = screen.query_one(TurnTable)
        assert table.turn_count == len(tail.turns) > 50
        assert table.cursor == len(tail.turns) - 1  # the newest turn
        assert not screen.has_class("-loading")
        header = str(screen.query_one(ContextHeader).render())
        assert header.count("reading…") >= 3 and human_size(path.stat().st_size) in header
        newest = cells(table, table.cursor)
        assert newest["index"] == PENDING and newest["share"] == PENDING and newest["mask"] == PENDING
        assert newest["role"] == "user" and newest["tokens"]
        detail = plain(screen.query_one(TurnDetail).body.content)
        assert "turn …" in detail and "masking and cost: reading…" in detail and tail.turns[-1].record_id in detail

        # keys that need a figure of the whole history say so, and change nothing
        for key, words in (("right_square_bracket", "split is still being read"), ("s", "split is still being read"),
                           ("c", "Compaction needs the whole history"), ("v", "breakdown is still being read"),
                           ("i", "figures"), ("slash", "Turn numbers are still being read")):
            app.clear_notifications()
            await pilot.press(key)
            await pilot.pause()
            assert any(words in n for n in notes(app)), (key, notes(app))
        assert screen.split == 0 and screen.loaded is None and isinstance(app.screen, SessionScreen)

        await pilot.press("up", "up", "up")
        chosen = tail.turns[table.cursor]
        chosen_cells = cells(table, table.cursor)
        tail_rows = {(t.record_id, t.is_tool_result): cells(table, k) for k, t in enumerate(tail.turns)}

        held.set()
        await app.workers.wait_for_complete()
        await pilot.pause()
        loaded = screen.loaded
        assert loaded is not None and screen.tail is None and table.analysis is loaded.analysis
        turns = loaded.analysis.turns
        at = table.cursor
        assert (turns[at].record_id, turns[at].is_tool_result) == (chosen.record_id, chosen.is_tool_result)
        assert at > len(turns) - len(tail.turns)
        assert "reading…" not in str(screen.query_one(ContextHeader).render())
        # every turn the tail showed has, in the whole table, the figures it showed
        for i in range(len(turns) - len(tail.turns), len(turns)):
            whole = cells(table, i)
            shown = tail_rows[(turns[i].record_id, turns[i].is_tool_result)]
            assert whole["index"] == f"{i:,}"
            for key in ("role", "kind", "tokens", "usage"):
                assert shown[key] == whole[key], (i, key)
        assert cells(table, at)["tokens"] == chosen_cells["tokens"]
    kinds = [type(m) for k, m in enumerate(seen) if all(m is not n for n in seen[:k])]  # (seen at each node)
    assert kinds == [TailShown, SessionLoaded]


async def test_the_whole_table_is_the_one_shown_without_the_tail(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    path = recording(tmp_path / "chats" / "session-big.jsonl")

    async def whole_rows() -> tuple[list[str], str, int]:
        app = InspectorApp(path, threshold=0.5, live=False)
        async with app.run_test(size=SIZE) as pilot:

            async def shown_whole() -> SessionScreen:
                """The screen once the whole read is shown and its masking worked out (the notes' worker
                starts after the load's has ended: waiting for the workers once may come before it)."""
                while True:
                    await app.workers.wait_for_complete()
                    await pilot.pause()
                    screen = app.screen
                    if isinstance(screen, SessionScreen) and screen.loaded is not None \
                            and not screen.query_one(TurnTable).notes_pending:
                        return screen

            screen = await asyncio.wait_for(shown_whole(), 60)
            table = screen.query_one(TurnTable)
            rows = [text_of(table._row(i, 200)) for i in range(table.turn_count)] + [text_of(table._divider(200))]
            return rows, str(screen.query_one(ContextHeader).render()), table.cursor

    with_tail, header, cursor = await whole_rows()
    monkeypatch.setattr(loading, "read_tail", lambda path, fd: None)  # the app as it was: no tail step
    without, header_before, cursor_before = await whole_rows()
    assert with_tail == without and header == header_before
    assert cursor == cursor_before  # at the split, as without a tail (the cursor was not moved meanwhile)


async def tail_handled(pilot: Pilot[None], tail_shown: asyncio.Event) -> SessionScreen:
    """The session screen once it has handled the tail read (shown or not)."""
    await asyncio.wait_for(tail_shown.wait(), 60)
    for _ in range(3):  # the body is laid out, then the rows are given to the table (after a refresh)
        await pilot.pause()
    screen = pilot.app.screen
    assert isinstance(screen, SessionScreen)
    return screen


async def test_a_file_the_whole_read_refuses_shows_why_after_its_tail(tmp_path: Path, held: threading.Event) -> None:
    bad = {"id": "bad", "timestamp": "t", "type": "gemini", "content": 5}  # content that is no part
    path = recording(tmp_path / "chats" / "session-bad.jsonl", early=bad)
    tail_shown = asyncio.Event()
    app = InspectorApp(path, threshold=0.5, live=False)
    async with app.run_test(size=SIZE, message_hook=hook_for([], tail_shown)) as pilot:
        screen = await tail_handled(pilot, tail_shown)
        assert screen.tail is not None
        held.set()
        with contextlib.suppress(WorkerFailed):  # the whole read fails, as it should
            await app.workers.wait_for_complete()
        await pilot.pause()
        assert screen.failed is not None and screen.tail is None and screen.has_class("-loading")
        label = str(screen.query_one(LoadingPane).query_one("#loading-label").render())
        assert "Cannot open this file" in label and "session-bad.jsonl:2: message 'bad'" in label
        assert "reading…" not in str(screen.query_one(ContextHeader).render())


async def test_a_legacy_document_shows_the_reading_mark_and_the_progress(tmp_path: Path,
                                                                         held: threading.Event) -> None:
    messages = [{"id": f"m{n}", "timestamp": "t", "type": "user" if n % 2 == 0 else "gemini",
                 "content": f"message {n} " + "words " * 60} for n in range(4000)]
    path = tmp_path / "chats" / "session-legacy.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"sessionId": "legacy", "projectHash": "h" * 64, "messages": messages}, indent=2))
    assert path.stat().st_size > TAIL_BYTES
    tail_shown = asyncio.Event()
    app = InspectorApp(path, threshold=0.5, live=False)
    async with app.run_test(size=SIZE, message_hook=hook_for([], tail_shown)) as pilot:
        screen = await tail_handled(pilot, tail_shown)
        assert screen.tail is None and screen.has_class("-loading")  # no rows: the progress stays
        assert "reading…" in str(screen.query_one(ContextHeader).render())
        held.set()
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert screen.loaded is not None and len(screen.loaded.analysis.turns) == 4000
        assert "reading…" not in str(screen.query_one(ContextHeader).render())


async def test_masking_is_pending_until_it_is_worked_out(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """After the whole read, masking and cost take another pass: until it ends the masking column
    says ``…`` and the detail pane says they are being worked out, never that nothing is masked."""
    from inspector.tui.session import notes as notes_part

    path = recording(tmp_path / "chats" / "session-big.jsonl")
    gate, started = threading.Event(), threading.Event()
    real = notes_part.note_session

    def note_session(analysis: Any, session: Any) -> Any:
        started.set()  # the whole table is on screen: its masking is being worked out
        assert gate.wait(60), "the test never let masking be worked out"
        return real(analysis, session)

    monkeypatch.setattr(notes_part, "note_session", note_session)
    app = InspectorApp(path, threshold=0.5, live=False)
    async with app.run_test(size=SIZE) as pilot:
        assert await asyncio.get_running_loop().run_in_executor(None, started.wait, 60)
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, SessionScreen) and screen.loaded is not None
        table = screen.query_one(TurnTable)
        assert cells(table, table.cursor)["mask"] == PENDING
        assert "masking and cost: being worked out…" in plain(screen.query_one(TurnDetail).body.content)
        gate.set()
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert all(cells(table, i)["mask"] != PENDING for i in range(table.turn_count))
        table.move_to(table.turn_count - 1)
        await pilot.pause()
        await pilot.press("up")  # the model turn before the newest tool results: its cost
        detail = plain(screen.query_one(TurnDetail).body.content)
        assert "being worked out" not in detail and "cost: $" in detail
