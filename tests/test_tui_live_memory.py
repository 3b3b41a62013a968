"""A version of the session the view no longer shows is freed, whatever the workers that read it did:
a worker that keeps what it built out of the collector's scans (``keep_long_lived``) is frozen with it,
and a version it was given or gave back would otherwise live as long as the app."""

from __future__ import annotations

import asyncio
import gc
import weakref
from pathlib import Path
from typing import Any

from inspector.tui.app import InspectorApp
from inspector.tui.session.live import WATCH_GROUP
from tests.snapshot_app import settle
from tests.test_tui_live import SIZE, THRESHOLD, Loads, answer, conversation, opened, prompt, session_file


async def quiet(pilot: Any, seconds: float = 30.0) -> None:
    """Every worker but the watcher has finished (the passes after a load, the copies made ahead)."""
    deadline = asyncio.get_running_loop().time() + seconds
    while any(w.group != WATCH_GROUP and not w.is_finished for w in pilot.app.workers):
        assert asyncio.get_running_loop().time() < deadline, "the app's workers did not finish"
        await pilot.pause(0.05)
    await settle(pilot)


async def test_the_version_read_whole_is_freed_once_appends_replaced_it(tmp_path: Path, machine_load: str) -> None:
    path = session_file(tmp_path, "session-freed.jsonl", conversation(30) + prompt(30) + answer(30, calls=2))
    loads = Loads()
    app = InspectorApp(path, threshold=THRESHOLD, live=True)
    async with app.run_test(size=SIZE, message_hook=loads.hook) as pilot:
        view = await opened(pilot)
        await quiet(pilot)  # masking and cost, the agentic split, the live state: each froze what it built
        first = view.loaded
        assert first is not None and first.changed_from is None and view.agentic.point is not None
        read_whole = weakref.ref(first)
        del first
        for i in range(31, 33):
            with path.open("a", encoding="utf-8") as handle:
                handle.write(prompt(i) + answer(i))
            shown = (await loads.next(pilot)).loaded
            assert shown.changed_from is not None, f"append {i} was not extended"
            await quiet(pilot)
        del shown
        gc.collect()
        assert read_whole() is None, "the version read whole is still held after two appends replaced it"
