"""Live updates as a person meets them: Gemini CLI writes to the open session, the app follows.

Real files, the real watcher (watchfiles) and Textual's Pilot.  An append is
extended (the new rows and figures come from ``inspector.live.extend``, not from a
new read); a rewrite or a truncation is read again whole.  Either way what is
shown equals a fresh ``analyze`` of the file.  Nothing sleeps: the tests wait
for the app's own ``SessionLoaded`` messages, with a deadline.
"""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

from rich.console import Console

from inspector.analysis import analyze
from inspector.session import load
from inspector.tui.app import InspectorApp
from inspector.tui.messages import SessionLoaded
from inspector.tui.session.screen import SessionScreen
from inspector.tui.widgets.context_header import ContextHeader
from inspector.tui.widgets.turn_table import TurnTable
from tests.snapshot_app import settle

SIZE = (160, 45)
THRESHOLD = 0.5


def plain(renderable: object) -> str:
    console = Console(width=200, record=True, color_system=None)
    console.print(renderable)
    return console.export_text()


def head() -> str:
    return json.dumps({"sessionId": "live-0001", "projectHash": "p" * 64, "startTime": "2026-11-20T09:00:00.000Z",
                       "lastUpdated": "2026-11-20T09:00:00.000Z", "kind": "main"}) + "\n"


def prompt(i: int, size: int = 600) -> str:
    return json.dumps({"id": f"u-{i}", "timestamp": "2026-11-20T09:00:01.000Z", "type": "user",
                       "content": [{"text": f"prompt {i} " + "x" * size}]}) + "\n"


def answer(i: int, *, calls: int = 0, done: bool = True, size: int = 400) -> str:
    record: dict[str, Any] = {"id": f"g-{i}", "timestamp": "2026-11-20T09:00:02.000Z", "type": "gemini",
                              "content": "answer " + "y" * size, "model": "gemini-2.5-pro",
                              "tokens": {"input": 1000 + i, "output": 100, "cached": 0, "thoughts": 0, "tool": 0,
                                         "total": 1100 + i}}
    if calls:
        record["toolCalls"] = [{"id": f"call-{i}-{k}", "name": "read_file", "args": {"path": f"f{k}.py"},
                                "status": "success" if done else "executing",
                                **({"result": [{"functionResponse": {"id": f"call-{i}-{k}", "name": "read_file",
                                                                     "response": {"output": "z" * 900}}}]}
                                   if done else {})} for k in range(calls)]
    return json.dumps(record) + "\n"


def conversation(count: int) -> str:
    return head() + "".join(prompt(i) + answer(i) for i in range(count))


class Loads:
    """The app's SessionLoaded messages, to wait on."""

    def __init__(self) -> None:
        self.seen: list[SessionLoaded] = []
        self.arrived = asyncio.Event()

    def hook(self, message: object) -> None:
        if isinstance(message, SessionLoaded) and message.reason == "live":
            self.seen.append(message)
            self.arrived.set()

    async def next(self, pilot: Any) -> SessionLoaded:
        await asyncio.wait_for(self.arrived.wait(), 20)
        self.arrived.clear()
        await settle(pilot)
        return self.seen[-1]


async def ready_to_watch(pilot: Any, view: SessionScreen) -> None:
    """The watch is in place and the live state primed (both are reported, not waited out)."""
    await asyncio.wait_for(view.watch_ready.wait(), 10)
    await settle(pilot)
    assert view.loaded is not None and view.loaded.live is not None, "the live state was not primed"


def shown_as_read_again(view: SessionScreen, path: Path) -> None:
    """What the view shows is what a fresh read of the file gives."""
    assert view.loaded is not None
    fresh = analyze(load(path), threshold=THRESHOLD)
    shown = view.loaded.analysis
    assert shown.to_json(path, "jsonl", None) == fresh.to_json(path, "jsonl", None)
    assert shown.context == fresh.context
    assert view.loaded.session.sha256 == load(path).sha256


def session_file(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / "chats" / name
    path.parent.mkdir()
    path.write_text(text, encoding="utf-8")
    return path


async def opened(pilot: Any) -> SessionScreen:  # the session on screen, watched, live state primed
    await settle(pilot)
    view = pilot.app.screen
    assert isinstance(view, SessionScreen) and view.loaded is not None
    await ready_to_watch(pilot, view)
    return view


def row_text(table: TurnTable, turn: int) -> str:
    """The row of ``turn`` as drawn (it must be in view)."""
    y = table.row_of(turn) - int(table.scroll_y)
    assert 0 <= y < table.size.height, f"turn {turn} is not in view"
    return table.render_line(y).text


async def test_an_appended_turn_shows_as_new_rows_with_the_header_and_split_following(
        tmp_path: Path, machine_load: str) -> None:
    path = session_file(tmp_path, "session-live.jsonl", conversation(8))
    loads = Loads()
    app = InspectorApp(path, threshold=THRESHOLD, live=True)
    async with app.run_test(size=SIZE, message_hook=loads.hook) as pilot:
        view = await opened(pilot)
        before = view.loaded
        header_before = plain(view.query_one(ContextHeader).content)
        table = view.query_one(TurnTable)
        table.scroll_end(animate=False, immediate=True)  # at the bottom: the view follows new rows
        await pilot.pause()

        with path.open("a", encoding="utf-8") as handle:  # Gemini CLI: a prompt, then its answer
            handle.write(prompt(8, 6_000) + answer(8, size=5_000))
        loaded = (await loads.next(pilot)).loaded
        assert loaded.changed_from == len(before.analysis.turns), "the append was not extended"
        assert loaded.session.messages is not before.session.messages
        assert len(loaded.analysis.turns) == len(before.analysis.turns) + 2
        shown_as_read_again(view, path)
        assert table.row_count == len(loaded.analysis.turns) + 1  # the turns and the split marker
        newest = len(loaded.analysis.turns) - 1
        row = row_text(table, newest)
        assert row.lstrip("◆ ").split()[0] == f"{newest:,}", row
        assert f"{loaded.analysis.turn_tokens(newest):,}" in row, row
        header = plain(view.query_one(ContextHeader).content)
        assert header != header_before
        assert f"{loaded.analysis.context.deciding_tokens:,}" in header
        assert loaded.analysis.split_point != before.analysis.split_point  # the append moved the reference...
        assert view.split == loaded.analysis.split_point and not view.split_chosen  # ...and the view followed
        # compact --agentic's split reads every turn: looked for when asked (A), not on every append
        assert view.agentic.point is None
        await pilot.press("A")
        await settle(pilot)
        assert view.agentic.point is not None


async def test_the_last_message_written_again_is_extended(tmp_path: Path, machine_load: str) -> None:
    """Gemini CLI writes a model message when its tool calls start and again, same id, when they end."""
    started = conversation(4) + prompt(4) + answer(4, calls=2, done=False)
    path = session_file(tmp_path, "session-tools.jsonl", started)
    loads = Loads()
    app = InspectorApp(path, threshold=THRESHOLD, live=True)
    async with app.run_test(size=SIZE, message_hook=loads.hook) as pilot:
        view = await opened(pilot)
        count = len(view.loaded.analysis.turns)
        with path.open("a", encoding="utf-8") as handle:
            handle.write(answer(4, calls=2, done=True))
        loaded = (await loads.next(pilot)).loaded
        assert loaded.changed_from == count - 1  # the model turn written again, then its tool results
        assert len(loaded.analysis.turns) == count + 1
        shown_as_read_again(view, path)


async def test_a_rewrite_is_read_again_whole(tmp_path: Path, machine_load: str) -> None:
    path = session_file(tmp_path, "session-rewrite.jsonl", conversation(8))
    loads = Loads()
    app = InspectorApp(path, threshold=THRESHOLD, live=True)
    async with app.run_test(size=SIZE, message_hook=loads.hook) as pilot:
        view = await opened(pilot)
        spare = path.with_name("spare.tmp")
        spare.write_text(conversation(3) + prompt(99, 9_000) + answer(99), encoding="utf-8")
        os.replace(spare, path)  # another writer replaces the file
        loaded = (await loads.next(pilot)).loaded
        assert loaded.changed_from is None, "a rewrite must not be extended"
        assert len(loaded.analysis.turns) == 8
        shown_as_read_again(view, path)


async def test_a_truncate_and_restore_keeps_following_gemini_clis_split(tmp_path: Path, machine_load: str) -> None:
    """Issue 14.3: the file cut short in place, then its lines written back: the split the user did not
    move follows the reference each time, and is never called "chosen"."""
    whole = conversation(10)
    path = session_file(tmp_path, "session-restore.jsonl", whole)
    reference = analyze(load(path), threshold=THRESHOLD).split_point
    loads = Loads()
    app = InspectorApp(path, threshold=THRESHOLD, live=True)
    async with app.run_test(size=SIZE, message_hook=loads.hook) as pilot:
        view = await opened(pilot)
        assert view.split == reference
        short = head() + "".join(prompt(i) + answer(i) for i in range(4))
        with path.open("r+b") as handle:  # in place: the same file, shorter
            handle.truncate(len(short.encode()))
        await loads.next(pilot)
        cut_reference = analyze(load(path), threshold=THRESHOLD).split_point
        assert cut_reference != reference
        assert view.split == cut_reference and not view.split_chosen
        await ready_to_watch(pilot, view)
        with path.open("ab") as handle:  # restored: the cut lines appended again
            handle.write(whole.encode()[len(short.encode()):])
        loaded = (await loads.next(pilot)).loaded
        assert loaded.changed_from is not None, "the restoring append was not extended"
        assert view.split == reference and not view.split_chosen
        shown_as_read_again(view, path)
        context = plain(view.query_one(ContextHeader).content)
        assert "chosen" not in context and "(reference)" in context


async def test_turn_after_turn_each_comes_from_copies_made_ahead(tmp_path: Path, machine_load: str) -> None:
    """Gemini CLI appends turn after turn.  Each is shown as it comes, extended from copies made
    once the one before was drawn (nothing of the session is copied on the way to the screen),
    and equals a fresh read; the turn open in the detail pane keeps its place."""
    path = session_file(tmp_path, "session-stream.jsonl",
                        head() + prompt(0, 30_000) + answer(0) + "".join(prompt(i) + answer(i) for i in range(1, 6))
                        + prompt(6) + answer(6, calls=1, done=False))
    loads = Loads()
    app = InspectorApp(path, threshold=THRESHOLD, live=True)
    async with app.run_test(size=SIZE, message_hook=loads.hook) as pilot:
        view = await opened(pilot)
        view.table.move_to(0)  # a long prompt, read further down in the detail pane
        await settle(pilot)
        view.detail.scroll_to(y=20, animate=False, immediate=True)
        await pilot.pause()
        place = view.detail.scroll_y
        assert place > 0
        for i in range(7, 10):
            state = view.loaded.live if view.loaded is not None else None
            assert state is not None and state.index is not None
            assert state.index.spare is not None, "nothing was copied ahead once the last version was drawn"
            with path.open("a", encoding="utf-8") as handle:  # the call finishes, the next prompt and answer
                handle.write(answer(i - 1, calls=1) + prompt(i) + answer(i, calls=1, done=False))
            loaded = (await loads.next(pilot)).loaded
            assert loaded.changed_from is not None, f"append {i} was not extended"
            shown_as_read_again(view, path)
            assert view.detail.scroll_y == place, "the detail pane was drawn again for a turn that did not change"
