"""What the live view tells a person while Gemini CLI keeps writing, and that it keeps up.

Each test meets one way the live view used to mislead or stall (stop 30's
audit, F1-F8): a line that cannot be read, appends during a long read,
masking and cost that never came back on a busy run, keys that said nothing,
a search that forgot to look again, a skipped line nobody was told of, and
the words for what changed.  Real files, the real watcher (watchfiles) and
Textual's Pilot; the tests wait for the app's own messages, with deadlines.
"""

from __future__ import annotations

import asyncio
import json
import os
import threading
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from textual.worker import Worker, WorkerState

from inspector.analysis import analyze
from inspector.session import load
from inspector.tui.app import InspectorApp
from inspector.tui.loading import read_session
from inspector.tui.messages import FileChanged, NotesReady, SessionLoaded, WholeRead
from inspector.tui.session import screen as screen_module
from inspector.tui.session.screen import LOAD_GROUP, SessionScreen
from inspector.tui.session_notes import Noted, noted
from tests.snapshot_app import settle
from tests.test_tui_live import (
    SIZE,
    THRESHOLD,
    answer,
    conversation,
    head,
    opened,
    prompt,
    session_file,
    shown_as_read_again,
)


class Seen:
    """Every message the app handles, to wait on (the hook runs as each arrives)."""

    def __init__(self) -> None:
        self.messages: list[object] = []
        self.arrived = asyncio.Event()
        self.on_message: Callable[[object], None] | None = None

    def hook(self, message: object) -> None:
        if any(message is known for known in self.messages[-8:]):
            return  # the same message again, bubbling up from the screen to the app
        self.messages.append(message)
        if self.on_message is not None:
            self.on_message(message)
        self.arrived.set()

    def count(self, test: Callable[[object], bool]) -> int:
        return sum(1 for message in self.messages if test(message))

    async def until(self, pilot: Any, test: Callable[[], bool], what: str, timeout: float = 20) -> None:
        """Wait until ``test()`` holds, looking again after each message the app handles."""

        async def wait() -> None:
            while True:
                await pilot.pause()
                if test():
                    return
                self.arrived.clear()
                await self.arrived.wait()

        try:
            await asyncio.wait_for(wait(), timeout)
        except TimeoutError:
            raise AssertionError(f"not within {timeout:g} s: {what}") from None


@asynccontextmanager
async def watched(tmp_path: Path, name: str, text: str, seen: Seen) -> AsyncIterator[tuple[Any, SessionScreen, Path]]:
    """The app on a session file written with ``text``, live, its messages seen by ``seen``: (pilot, view, path)
    once the session is on screen, watched and primed."""
    path = session_file(tmp_path, name, text)
    app = InspectorApp(path, threshold=THRESHOLD, live=True)
    async with app.run_test(size=SIZE, message_hook=seen.hook) as pilot:
        yield pilot, await opened(pilot), path


async def idle(pilot: Any) -> None:
    """Wait for every worker but the watcher's, and the messages they posted; notifications are kept."""
    await pilot.pause()
    while busy := [w for w in pilot.app.workers if w.group != "watch" and not w.is_finished]:
        await pilot.app.workers.wait_for_complete(busy)
        await pilot.pause()


def load_workers(state: WorkerState) -> Callable[[object], bool]:
    return lambda m: (isinstance(m, Worker.StateChanged) and m.worker.group == LOAD_GROUP and m.state == state)


def whole_read(started: bool) -> Callable[[object], bool]:
    return lambda m: isinstance(m, WholeRead) and m.started == started


def appends(message: object) -> bool:
    return isinstance(message, FileChanged) and message.appended is not None


def live_loads(message: object) -> bool:
    return isinstance(message, SessionLoaded) and message.reason == "live"


def notes(app: InspectorApp, title: str) -> list[str]:
    return [n.message for n in app._notifications if n.title == title]


def append(path: Path, text: str) -> None:
    with path.open("a", encoding="utf-8") as handle:
        handle.write(text)


def line_count(path: Path) -> int:
    return path.read_bytes().count(b"\n")


async def test_a_line_that_cannot_be_read_is_said_once_and_later_appends_wait_for_a_rewrite(
        tmp_path: Path, machine_load: str) -> None:
    """F1: Gemini CLI (or anything) appends a message this reader refuses.  The last version stays
    on screen, one notification names the file and the line, the status line stops saying
    "reading…", and the appends after it are not read again each time: a rewrite is."""
    seen = Seen()
    async with watched(tmp_path, "session-broken.jsonl", conversation(6), seen) as (pilot, view, path):
        app = pilot.app
        shown = view.loaded
        bad_line = line_count(path) + 1
        append(path, json.dumps({"id": "bad-1", "timestamp": "2026-11-20T09:00:09.000Z", "type": "user",
                                 "content": 42}) + "\n")
        title = "Changed on disk, cannot be read"
        await seen.until(pilot, lambda: bool(notes(app, title)), "the failed read was not told")
        await idle(pilot)
        told = notes(app, title)
        assert len(told) == 1 and f"{path}:{bad_line}: " in told[0], told
        assert "not a number" in told[0] and "r reads the file again" in told[0]
        assert not [n for n in app._notifications if n.title.startswith("Failed")]  # said once, in its words
        assert view.loaded is shown  # the last version read stays
        assert view.status.get("load") == ""  # no "reading…" left behind
        assert "cannot read" in view.status.get("live")
        reads = seen.count(load_workers(WorkerState.RUNNING))

        append(path, prompt(50))  # Gemini CLI goes on writing after the line
        await seen.until(pilot, lambda: seen.count(appends) >= 2, "the second append was not seen")
        await idle(pilot)
        assert seen.count(load_workers(WorkerState.RUNNING)) == reads, "the file was read again for an append"
        assert len(notes(app, title)) == 1
        assert "still cannot be read" in view.status.get("live") and "r reads it again" in view.status.get("live")

        spare = path.with_name("spare.tmp")
        spare.write_text(conversation(7), encoding="utf-8")
        os.replace(spare, path)  # the file is written again whole, readable
        await seen.until(pilot, lambda: seen.count(live_loads) >= 1, "the rewrite was not read")
        await idle(pilot)
        shown_as_read_again(view, path)
        said = notes(app, "Live")
        assert said and "was rewritten on disk; read again: 14 turns (was 12)" in said[-1], said
        assert view.status.get("live") == "live: read again"


async def test_lines_appended_during_a_long_read_wait_for_it_and_are_not_read_twice(
        tmp_path: Path, machine_load: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """F3: a rewritten session is read whole while Gemini CLI keeps appending, a turn every few
    milliseconds.  The read is not restarted by the appends (each used to cancel it, so it never
    finished); they wait for it, and what it already read of them is not extended again.

    The read is held at its start until appends arrived (the view says when a whole read starts
    and ends, ``WholeRead``): the case is met on any machine, however fast the read or slow the
    watcher."""
    text = head() + "".join(prompt(i, 8_000) + answer(i, size=2_000) for i in range(240))
    path = session_file(tmp_path, "session-long.jsonl", text)
    seen = Seen()
    read_whole = asyncio.Event()
    held, release = threading.Event(), threading.Event()
    app = InspectorApp(path, threshold=THRESHOLD, live=True)

    def held_read(*args: Any, **kwargs: Any) -> Any:
        held.set()
        release.wait(120)  # the appends below arrive while the read has not ended
        return read_session(*args, **kwargs)

    def watch(message: object) -> None:
        if live_loads(message) and isinstance(message, SessionLoaded) and message.loaded.changed_from is None:
            read_whole.set()

    async def gemini_cli_writes(first: int) -> None:
        i = first
        while not read_whole.is_set():
            append(path, answer(i - 1) + prompt(i))
            i += 1
            await asyncio.sleep(0.005)  # the writer's pace, not a wait for the app

    seen.on_message = watch
    async with app.run_test(size=SIZE, message_hook=seen.hook) as pilot:
        view = await opened(pilot)
        monkeypatch.setattr(screen_module, "read_session", held_read)
        spare = path.with_name("spare.tmp")
        spare.write_text(text + prompt(240), encoding="utf-8")
        os.replace(spare, path)  # written again whole: read whole
        await seen.until(pilot, lambda: seen.count(whole_read(True)) >= 1, "the whole read did not start")
        assert await asyncio.to_thread(held.wait, 60), "the read never began"
        for i in range(241, 244):  # appends while the read is under way: each waits for it
            append(path, answer(i - 1) + prompt(i))
            await seen.until(pilot, lambda i=i: seen.count(appends) >= i - 240, "the append was not seen")
            assert view.follower.reading
        release.set()
        await asyncio.wait_for(gemini_cli_writes(244), 60)
        expected = len(analyze(load(path), threshold=THRESHOLD).turns)  # the file as it is now, read fresh
        await seen.until(pilot, lambda: view.loaded is not None and len(view.loaded.analysis.turns) == expected
                         and view.follower.settled, "the appends never reached the screen", timeout=60)
        await idle(pilot)
        ended = [m for m in seen.messages if isinstance(m, WholeRead) and not m.started]
        assert ended and ended[0].waiting >= 3, "the appends during the read did not wait for it"
        assert seen.count(load_workers(WorkerState.CANCELLED)) == 0, "an append restarted the read"
        shown_as_read_again(view, path)


async def test_masking_and_cost_come_back_on_a_run_that_never_pauses_and_say_they_are_older(
        tmp_path: Path, machine_load: str) -> None:
    """F2: after an append the masking plan and cost shown are the previous version's, said to be
    (the turns they were worked out for); they are worked out again when the appends pause, and
    at the latest ``NOTES_LONGEST`` after, however busy the run."""
    seen = Seen()
    async with watched(tmp_path, "session-busy.jsonl", conversation(6), seen) as (pilot, view, path):
        view.notes.NOTES_QUIET = 3_600.0  # the appends never pause...
        view.notes.NOTES_LONGEST = 0.2  # ...so only the longest wait brings them back
        before = len(view.loaded.analysis.turns)
        worked_out = seen.count(lambda m: isinstance(m, NotesReady))  # (once already, after the first read)
        shown: list[Noted | None] = []  # the notes the extended version came with, as it arrived
        seen.on_message = lambda m: shown.append(noted(m.loaded.analysis)) if live_loads(m) else None
        append(path, prompt(6) + answer(6))
        await seen.until(pilot, lambda: seen.count(live_loads) >= 1, "the append was not shown")
        carried = shown[0]  # (looked at after, on a busy machine they may be worked out again already)
        assert carried is not None and carried.as_of == before
        view.table.move_to(before)
        await pilot.pause()
        await seen.until(pilot, lambda: seen.count(lambda m: isinstance(m, NotesReady)) > worked_out,
                         "masking and cost were not worked out again", timeout=15)
        await idle(pilot)
        own = noted(view.loaded.analysis)
        assert own is not None and own.as_of is None
        assert own.cost.switch == carried.cost.switch


async def test_an_append_after_the_longest_wait_has_masking_and_cost_worked_out_at_once(
        tmp_path: Path, machine_load: str) -> None:
    """A run busy for longer than ``NOTES_LONGEST``: the next append finds the longest wait over and
    has masking and cost worked out at once (a timer of no delay died on a division by zero inside
    Textual, and they stayed the older version's for the rest of the run)."""
    seen = Seen()
    async with watched(tmp_path, "session-long-run.jsonl", conversation(6), seen) as (pilot, view, path):
        view.notes.NOTES_QUIET = 3_600.0  # the appends never pause
        view.notes.NOTES_LONGEST = 3_600.0
        before = len(view.loaded.analysis.turns)
        worked_out = seen.count(lambda m: isinstance(m, NotesReady))
        append(path, prompt(6) + answer(6))
        await seen.until(pilot, lambda: seen.count(live_loads) >= 1, "the first append was not shown")
        carried = noted(view.loaded.analysis)
        assert carried is not None and carried.as_of == before  # carried over, waiting for a pause
        view.notes.NOTES_LONGEST = 0.0  # the run has now gone on for longer than the longest wait
        append(path, prompt(7) + answer(7))
        await seen.until(pilot, lambda: seen.count(live_loads) >= 2, "the second append was not shown")
        await seen.until(pilot, lambda: seen.count(lambda m: isinstance(m, NotesReady)) > worked_out,
                         "masking and cost were not worked out again", timeout=15)
        await idle(pilot)
        own = noted(view.loaded.analysis)
        assert own is not None and own.as_of is None
        assert len(view.loaded.analysis.turns) > before


async def test_keys_that_cannot_act_now_say_why(tmp_path: Path, machine_load: str) -> None:
    """F6: a, u, p and b are left out of the footer when they cannot act, but pressed they say why."""
    path = session_file(tmp_path, "session-keys.jsonl", conversation(4))
    app = InspectorApp(path, threshold=THRESHOLD, live=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        view = app.screen
        assert isinstance(view, SessionScreen) and view.loaded is not None
        assert view.preview is None and not view.check_action("apply", ())
        for key, words in (("a", "Nothing to apply"), ("p", "No preview yet"), ("u", "Nothing to undo"),
                           ("b", "No subagent sessions")):
            app.clear_notifications()
            await pilot.press(key)
            await idle(pilot)
            said = [n.message for n in app._notifications]
            assert len(said) == 1 and said[0].startswith(words), (key, said)
            assert app.screen is view


async def test_a_search_that_found_nothing_looks_again_at_what_is_appended(tmp_path: Path, machine_load: str) -> None:
    """F7: the search shown runs again after an append, found or not, over the new turns only."""
    seen = Seen()
    async with watched(tmp_path, "session-find.jsonl", conversation(5), seen) as (pilot, view, path):
        app = pilot.app
        await pilot.press("slash", *"zebra", "enter")
        await settle(pilot)
        assert view.navigator.matches == [] and "no turn holds 'zebra'" in view.status.get("search")
        count = len(view.loaded.analysis.turns)
        append(path, json.dumps({"id": "u-z", "timestamp": "2026-11-20T09:00:05.000Z", "type": "user",
                                 "content": [{"text": "a Zebra crossed"}]}) + "\n")
        await seen.until(pilot, lambda: seen.count(live_loads) >= 1, "the append was not shown")
        await idle(pilot)
        assert view.navigator.matches == [count]
        assert "1 turn holds 'zebra'" in view.status.get("search")
        append(path, answer(77) + prompt(78))
        await seen.until(pilot, lambda: seen.count(live_loads) >= 2, "the second append was not shown")
        await idle(pilot)
        assert view.navigator.matches == [count]  # kept, and nothing new matched
        assert not [n for n in app._notifications if "No turn holds" in n.message]  # no toast per append


async def test_a_skipped_line_and_a_rewind_are_told(tmp_path: Path, machine_load: str) -> None:
    """F8, F5: a live line that is not JSON is skipped (as Gemini CLI skips it) and the person is told
    which; a rewind appended is read whole and said so, with the turns before and after."""
    seen = Seen()
    async with watched(tmp_path, "session-rewind.jsonl", conversation(6), seen) as (pilot, view, path):
        app = pilot.app
        skipped_line = line_count(path) + 1
        append(path, '{"id": "half-written", "type": \n')
        await seen.until(pilot, lambda: seen.count(live_loads) >= 1, "the skipped line was not read")
        await idle(pilot)
        said = notes(app, "Skipped while reading")
        assert len(said) == 1 and f"line {skipped_line}: not valid JSON" in said[0], said
        assert not notes(app, "Live")  # one line skipped, one notification
        await seen.until(pilot, lambda: view.loaded is not None and view.loaded.live is not None, "not primed")

        app.clear_notifications()
        rewind_line = line_count(path) + 1
        append(path, json.dumps({"$rewindTo": "u-3"}) + "\n")  # /rewind to before prompt 3
        await seen.until(pilot, lambda: seen.count(live_loads) >= 2, "the rewind was not read")
        await idle(pilot)
        shown_as_read_again(view, path)
        told = notes(app, "Live")
        assert len(told) == 1 and "changed on disk other than by new turns at its end" in told[0], told
        assert f"line {rewind_line} rewinds to message 'u-3' ($rewindTo)" in told[0]  # which line, and what it does
        assert "read again: 6 turns (was 12)" in told[0]
        assert not notes(app, "Skipped while reading")  # the line skipped before is not told again


async def test_a_preview_made_stale_says_what_changed(tmp_path: Path, machine_load: str) -> None:
    """F4: a preview goes stale on any change, and says which: a metadata line appended is not
    "0 turns appended"."""
    seen = Seen()
    async with watched(tmp_path, "session-stale.jsonl", conversation(8), seen) as (pilot, view, path):
        await pilot.press("c")
        await settle(pilot)
        await pilot.press("escape")
        await settle(pilot)
        assert view.preview is not None and not view.preview.stale
        append(path, json.dumps({"$set": {"summary": "Migrating the parser"}}) + "\n")
        await seen.until(pilot, lambda: seen.count(live_loads) >= 1, "the metadata line was not shown")
        await idle(pilot)
        assert view.loaded is not None and view.loaded.changed_from is not None  # extended, not read whole
        stale = view.preview.stale
        assert "changes no turn" in stale and "0 turns" not in stale, stale
