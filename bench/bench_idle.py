"""What watching an idle session costs: CPU time per second of wall time, and how fast an append arrives.

    .venv/bin/python bench/bench_idle.py [--seconds 20]

Watches a small session in a temporary folder with ``watch.watch_session``
(what the app runs), lets it sit idle for ``--seconds``, and reports the
process's CPU time over that span as a share of one core (issue 14.9: was
about 2%, goal ~0).  Then appends a line and reports how long the event
took to arrive.  ``--app``: the same for the whole app (headless) with the
session open, after the passes that follow the load.
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from inspector.live.watch import WatchOptions, watch_session  # noqa: E402

SAMPLE = ROOT / "sample_sessions" / "coding-task.jsonl"


async def measure(path: Path, seconds: float, options: WatchOptions) -> tuple[float, float]:
    stop = asyncio.Event()
    ready = asyncio.Event()
    events: asyncio.Queue[object] = asyncio.Queue()

    async def run() -> None:
        async for event in watch_session(path, options=options, stop_event=stop, ready=ready):
            events.put_nowait(event)

    task = asyncio.create_task(run())
    await asyncio.wait_for(ready.wait(), 30)
    cpu, wall = time.process_time(), time.perf_counter()
    await asyncio.sleep(seconds)  # the idle span being measured
    idle = (time.process_time() - cpu) / (time.perf_counter() - wall)
    with path.open("a", encoding="utf-8") as out:
        out.write('{"id":"bench","type":"user","content":[{"text":"one more"}]}\n')
    appended = time.perf_counter()
    await asyncio.wait_for(events.get(), 30)
    latency = time.perf_counter() - appended
    stop.set()
    await task
    return idle, latency


async def measure_app(path: Path, seconds: float) -> float:
    """The whole app (headless, the same screens and timers) with the session open and watched."""
    from inspector.tui.app import InspectorApp
    from inspector.tui.session.screen import SessionScreen

    app = InspectorApp(path, live=True)
    async with app.run_test(size=(120, 40)) as pilot:
        while not isinstance(app.screen, SessionScreen) or app.screen.loaded is None:
            await pilot.pause(0.05)
        view = app.screen
        await asyncio.wait_for(view.watch_ready.wait(), 30)
        while any(w.group != "watch" and not w.is_finished for w in view.workers):
            await pilot.pause(0.05)
        cpu, wall = time.process_time(), time.perf_counter()
        await asyncio.sleep(seconds)  # the idle span being measured
        return (time.process_time() - cpu) / (time.perf_counter() - wall)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--app", action="store_true", help="also the whole app with the session open, idle")
    parser.add_argument("--step-ms", type=int, default=WatchOptions.step_ms,
                        help="how often watchfiles' thread looks for changes (the app's default unless given)")
    parser.add_argument("--tick-ms", type=int, default=WatchOptions.tick_ms,
                        help="how long watchfiles waits before saying 'nothing yet' (the app's default unless given)")
    args = parser.parse_args(argv)
    folder = Path(tempfile.mkdtemp(prefix="bench-idle-"))
    try:
        path = folder / SAMPLE.name
        shutil.copyfile(SAMPLE, path)
        options = WatchOptions(step_ms=args.step_ms, tick_ms=args.tick_ms)
        idle, latency = asyncio.run(measure(path, args.seconds, options))
        whole = asyncio.run(measure_app(path, args.seconds)) if args.app else None
    finally:
        shutil.rmtree(folder)
    print(f"idle watcher (step {args.step_ms} ms, tick {args.tick_ms} ms): {idle:.2%} of one core "
          f"over {args.seconds:g} s; "
          f"an append arrived after {latency:.3f} s")
    if whole is not None:
        print(f"idle app with the session open and watched: {whole:.2%} of one core over {args.seconds:g} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
