"""Watching a session: the pure classifier, the debouncer, and real watchfiles."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from inspector.live.watch import (
    Appended,
    Debouncer,
    Deleted,
    Observation,
    Rewritten,
    Truncated,
    Unreadable,
    WatchOptions,
    classify,
    initial_state,
    observe,
    state_of,
    watch_session,
)

HEAD = b'{"sessionId":"s","projectHash":"p"}\n{"id":"m1","type":"user","content":"hi"}\n'


# -- classify: pure --------------------------------------------------------------


def test_append_reports_new_records_with_line_numbers() -> None:
    old = state_of("s.jsonl", HEAD)
    event, state = classify(old, HEAD + b'{"id":"m2"}\n\n{"id":"m3"}\n')
    assert isinstance(event, Appended)
    assert [(r.line, r.record) for r in event.records] == [(3, {"id": "m2"}), (5, {"id": "m3"})]
    assert event.start == len(HEAD) and state.lines == 5 and state.pending == b""


def test_partial_last_line_waits_for_its_newline() -> None:
    old = state_of("s.jsonl", HEAD)
    event, state = classify(old, HEAD + b'{"id":"m2"}\n{"id":"m')
    assert isinstance(event, Appended) and [r.record for r in event.records] == [{"id": "m2"}]
    assert event.pending == b'{"id":"m' and event.pending_line == 4
    event, state = classify(state, HEAD + b'{"id":"m2"}\n{"id":"m3"')
    assert isinstance(event, Appended) and event.records == () and event.data == b"", "no new complete line"
    assert event.pending == b'{"id":"m3"' and event.pending_line == 4
    assert event.start == len(HEAD) + len(b'{"id":"m2"}\n'), "where the line being written starts"
    event, state = classify(state, HEAD + b'{"id":"m2"}\n{"id":"m3"}\n')
    assert isinstance(event, Appended)
    assert [(r.line, r.record) for r in event.records] == [(4, {"id": "m3"})]
    assert event.start == len(HEAD) + len(b'{"id":"m2"}\n')
    assert event.pending == b"" and event.pending_line == 0


def test_same_length_written_again_in_place_is_a_rewrite() -> None:
    """An edit that keeps the length, anywhere in the file: the new modification time says it."""
    old = state_of("s.jsonl", HEAD, inode=7, mtime_ns=1_000)
    edited = HEAD.replace(b"hi", b"ho")
    event, _ = classify(old, Observation(True, 7, len(edited), 2_000, 0, edited))
    assert isinstance(event, Rewritten)
    assert classify(old, Observation(True, 7, len(HEAD), 1_000, 0, HEAD))[0] is None, "same time: nothing"


def test_a_file_that_cannot_be_read_is_said_once_then_read_whole() -> None:
    old = state_of("s.jsonl", HEAD, inode=7, mtime_ns=1_000)
    event, state = classify(old, Observation(True, error="permission denied"))
    assert isinstance(event, Unreadable) and event.reason == "permission denied"
    again, state = classify(state, Observation(True, error="permission denied"))
    assert again is None, "said once"
    event, state = classify(state, Observation(True, 7, len(HEAD), 1_000, 0, HEAD))
    assert isinstance(event, Rewritten), "readable again: what changed meanwhile is not known"
    assert state.unreadable is None and state.size == len(HEAD)


def test_a_bad_line_is_reported_not_raised() -> None:
    event, _ = classify(state_of("s.jsonl", HEAD), HEAD + b"{broken\n")
    assert isinstance(event, Appended) and event.records[0].record is None and event.records[0].error


def test_rewrite_truncate_delete_and_nothing() -> None:
    old = state_of("s.jsonl", HEAD, inode=7)
    assert classify(old, HEAD)[0] is None
    changed = HEAD.replace(b"hi", b"ho") + b'{"id":"m2"}\n'
    assert isinstance(classify(old, changed)[0], Rewritten), "bytes before the old end changed"
    assert isinstance(classify(old, Observation(True, 8, len(HEAD), 0, 0, HEAD))[0], Rewritten), "new inode"
    event, state = classify(old, HEAD[:10])
    assert isinstance(event, Truncated) and event.size == 10 and state.size == 10
    event, state = classify(old, None)
    assert isinstance(event, Deleted) and not state.exists
    assert classify(state, None)[0] is None, "a deletion is reported once"
    event, _ = classify(state, Observation(True, 9, len(HEAD), 0, 0, HEAD))
    assert isinstance(event, Rewritten), "a file that comes back is a rewrite"


def test_observe_reads_only_the_end(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    body = HEAD + b'{"id":"x","pad":"' + b"p" * 20_000 + b'"}\n'
    path.write_bytes(body)
    state = initial_state(path)
    with path.open("ab") as handle:
        handle.write(b'{"id":"y"}\n')
    seen = observe(path, state)
    assert seen.offset == len(body) - len(state.check) and seen.offset > 0
    event, _ = classify(state, seen)
    assert isinstance(event, Appended) and event.records[0].record == {"id": "y"}


# -- the debouncer, on a fake clock ------------------------------------------------


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_debouncer_quiet_period_and_max_wait() -> None:
    clock = FakeClock()
    d = Debouncer(quiet=0.5, max_wait=2.0, clock=clock)
    assert not d.due() and d.remaining() is None
    d.touch()
    clock.now += 0.4
    assert not d.due() and d.remaining() == pytest.approx(0.1)
    d.touch()  # still changing: the quiet period starts again
    clock.now += 0.4
    assert not d.due()
    clock.now += 0.1
    assert d.due()
    d.reset()
    d.touch()
    for _ in range(5):  # a file that never goes quiet still fires at max_wait
        clock.now += 0.45
        d.touch()
    assert d.due() and clock.now - 100.0 >= 2.0


# -- real watchfiles -----------------------------------------------------------------


class Watch:
    """Runs watch_session in a task; events go to a queue."""

    def __init__(self, path: Path, **options: object) -> None:
        self.events: asyncio.Queue[object] = asyncio.Queue()
        self.stop = asyncio.Event()
        self.ready = asyncio.Event()
        self.options = WatchOptions(quiet=0, max_wait=0, **options)  # type: ignore[arg-type]
        self.path = path

    async def __aenter__(self) -> Watch:
        async def run() -> None:
            async for event in watch_session(self.path, options=self.options, stop_event=self.stop,
                                             ready=self.ready):
                await self.events.put(event)

        self.task = asyncio.create_task(run())
        await asyncio.wait_for(self.ready.wait(), 10)
        return self

    async def next(self) -> object:
        return await asyncio.wait_for(self.events.get(), 10)

    async def __aexit__(self, *exc: object) -> None:
        self.stop.set()
        await asyncio.wait_for(self.task, 10)


async def test_each_change_is_reported_once(tmp_path: Path, machine_load: str) -> None:
    # The OS's own notifications (inotify): watchfiles' polling fallback
    # compares modification times too coarsely to see changes made within
    # the same second, so it cannot be tested fast.
    path = tmp_path / "session-2026-01-01T00-00-abcd1234.jsonl"
    path.write_bytes(HEAD)
    async with Watch(path) as watch:
        with path.open("ab") as gemini:
            gemini.write(b'{"id":"m2"}\n{"id":"m3"}\n{"id":"m4"')
        event = await watch.next()
        assert isinstance(event, Appended)
        assert [(r.line, r.record) for r in event.records] == [(3, {"id": "m2"}), (4, {"id": "m3"})]

        with path.open("ab") as gemini:
            gemini.write(b"}\n")
        event = await watch.next()
        assert isinstance(event, Appended) and [(r.line, r.record) for r in event.records] == [(5, {"id": "m4"})]

        # noise the watcher must ignore: our temp files and the store folder
        (tmp_path / ".session-inspector").mkdir()
        (tmp_path / ".session-inspector" / "journal.jsonl").write_bytes(b"{}\n")
        (tmp_path / "other-session.jsonl").write_bytes(b"{}\n")
        temp = tmp_path / f".{path.name}.si-tmp-1-abcd"
        temp.write_bytes(HEAD)
        os.replace(temp, path)  # a rewrite by rename, as every atomic writer does
        event = await watch.next()
        assert isinstance(event, Rewritten) and event.size == len(HEAD)

        os.truncate(path, 10)
        event = await watch.next()
        assert isinstance(event, Truncated) and event.size == 10

        path.unlink()
        event = await watch.next()
        assert isinstance(event, Deleted)
    assert watch.events.empty(), "nothing reported twice"


async def test_an_append_is_reported_at_once_and_a_rewrite_after_the_quiet_period(
        tmp_path: Path, machine_load: str) -> None:
    """New complete lines need no quiet period (the user sees them as soon as they are written);
    a change the app must read whole waits until the file has been quiet (the injected clock)."""
    path = tmp_path / "s.jsonl"
    path.write_bytes(HEAD)
    clock = FakeClock()
    batch = asyncio.Event()
    watch = Watch(path, on_batch=lambda changes: batch.set())
    watch.options.quiet, watch.options.max_wait, watch.options.clock = 5.0, 30.0, clock
    watch.options.tick_ms = 20  # the watcher looks at the injected clock each tick, not after 5 real seconds
    async with watch:
        with path.open("ab") as gemini:
            gemini.write(b'{"id":"m2"}\n')
        event = await watch.next()  # the clock never moved
        assert isinstance(event, Appended) and event.records[0].record == {"id": "m2"}

        batch.clear()
        os.truncate(path, 10)
        # The watcher sees the change and decides in one go, before it waits again (when this resumes).
        await asyncio.wait_for(batch.wait(), 10)
        assert watch.events.empty(), "a truncation was reported before the quiet period passed"
        clock.now += 5.0
        event = await watch.next()
        assert isinstance(event, Truncated) and event.size == 10


async def test_own_writes_are_marked(tmp_path: Path, machine_load: str) -> None:
    from inspector.session import history, load
    from inspector.store import apply_history, revert
    from tests.test_store import PATHS, compacted, copy_session

    matches = [p for p in PATHS if p.name == "legacy-pomodoro.json"]
    if not matches:
        pytest.skip("sample legacy-pomodoro.json not present")
    path = copy_session(matches[0], tmp_path)
    async with Watch(path) as watch:
        session = load(path)
        turns = history(session)
        new, sources = compacted(turns, 2)
        apply_history(session, turns, new, sources)
        event = await watch.next()
        assert isinstance(event, Rewritten) and event.own
        path.write_bytes(path.read_bytes() + b"\n")  # someone else's edit
        event = await watch.next()
        assert not getattr(event, "own", True)
        revert(path, force=True)
        event = await watch.next()
        assert isinstance(event, Rewritten) and event.own



async def test_a_file_that_cannot_be_read_keeps_being_watched(tmp_path: Path, machine_load: str) -> None:
    """A folder takes the session's name (or its permissions change): the watch says so once and
    goes on; when a readable session is back, it is read whole."""
    path = tmp_path / "s.jsonl"
    path.write_bytes(HEAD)
    async with Watch(path) as watch:
        path.unlink()
        path.mkdir()
        event = await watch.next()
        if isinstance(event, Deleted):  # the two changes may come in one batch or two
            event = await watch.next()
        assert isinstance(event, Unreadable) and event.reason == "Is a directory"
        path.rmdir()
        path.write_bytes(HEAD + b'{"id":"m2"}\n')
        event = await watch.next()
        if isinstance(event, Deleted):
            event = await watch.next()
        assert isinstance(event, Rewritten) and event.size == len(HEAD) + len(b'{"id":"m2"}\n')
        with path.open("ab") as gemini:
            gemini.write(b'{"id":"m3"}\n')
        event = await watch.next()
        assert isinstance(event, Appended) and event.records[0].record == {"id": "m3"}, "still watching"
