"""Live updates on a big session: an appended turn's cost, and memory across many appends.

    python bench/bench_live.py [SESSION] [--appends N] [--app-appends M] [--leak-check]

SESSION defaults to bench/out/big-session.jsonl (~100 MB, bench/make_big_session.py).
It is copied to bench/out/live-session.jsonl, which the bench appends to.

Each append is one turn as Gemini CLI writes it: a user prompt, a model
message with a tool call, then the same message (same id) written again with
the call's result - three lines, the last replacing the one before.

* core: ``live.extend`` on the appended bytes, N times (default 1,000), every
  other one with the copies made ahead (``live.prepare``, as the app does
  once a version is on screen) and the others copying on the spot; time per
  append and the process's RSS every 100 appends;
* app: the real app (Pilot) and the real watcher; M appends (default 1,000),
  each written once the one before is on screen, after the passes that
  follow the load are done (``--unsettled``: at once; ``--paced``: each one
  only once the app has also finished the work that follows the previous
  one, as when Gemini CLI writes a turn every few seconds).  For each: the time
  from the watcher's event reaching the screen (``FileChanged``) to the new
  row drawn by Textual, and from the write to the row drawn (this includes
  watchfiles noticing the change); RSS every 100 appends; the cyclic
  collector's passes (how many, how long; they hold every thread).
"""

from __future__ import annotations

import argparse
import asyncio
import faulthandler
import gc
import json
import os
import shutil
import statistics
import sys
import time
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from inspector.analysis import analyze  # noqa: E402
from inspector.live import extend as live  # noqa: E402
from inspector.session import load  # noqa: E402

OUT = REPO / "bench" / "out"
DEFAULT = OUT / "big-session.jsonl"


def rss_mb() -> float:
    with open("/proc/self/statm") as handle:
        pages = int(handle.read().split()[1])
    return pages * 4096 / 1e6


def turn_lines(n: int) -> bytes:
    """One turn as Gemini CLI appends it (the model message written twice, same id)."""
    stamp = "2026-11-23T00:00:00.000Z"
    user = {"id": f"live-u{n}", "timestamp": stamp, "type": "user",
            "content": [{"text": f"live prompt {n}: check the handler and run the tests again"}]}
    call = {"id": f"live-c{n}", "name": "read_file", "args": {"path": f"src/mod{n % 50}.py"}}
    model = {"id": f"live-g{n}", "timestamp": stamp, "type": "gemini", "content": "Reading the module.",
             "model": "gemini-2.5-pro", "toolCalls": [{**call, "status": "executing"}],
             "tokens": {"input": 40_000 + n, "output": 120, "cached": 0, "thoughts": 30, "tool": 0,
                        "total": 40_150 + n}}
    done = {**model, "toolCalls": [{**call, "status": "success", "result": [
        {"functionResponse": {"id": call["id"], "name": "read_file",
                              "response": {"output": f"def handler_{n}():\n    return {n}\n" * 20}}}]}]}
    return b"".join(json.dumps(r).encode() + b"\n" for r in (user, model, done))


def bench_core(path: Path, appends: int) -> None:
    started = time.perf_counter()
    session = load(path)
    analysis = analyze(session)
    loaded_s = time.perf_counter() - started
    started = time.perf_counter()
    state = live.start(session, analysis)
    primed_s = time.perf_counter() - started
    assert state is not None, "the session cannot be extended"
    del session, analysis  # only the live state is kept, as in the app
    print(f"core: load + analyze {loaded_s:.2f} s, priming the live state {primed_s:.2f} s, RSS {rss_mb():,.0f} MB")
    times: dict[bool, list[float]] = {True: [], False: []}  # by whether the copies were made ahead
    prepared: list[float] = []
    memory: list[tuple[int, float]] = [(0, rss_mb())]
    with path.open("ab") as handle:
        for n in range(appends):
            data = turn_lines(n)
            offset = state.session.size
            ahead = n % 2 == 0  # every other append: copies made ahead (as the app does once a state is shown)
            if ahead:
                started = time.perf_counter()
                live.prepare(state)
                prepared.append(time.perf_counter() - started)
            handle.write(data)
            handle.flush()
            started = time.perf_counter()
            extended = live.extend(state, data, offset)
            times[ahead].append(time.perf_counter() - started)
            assert isinstance(extended, live.LiveState), f"append {n} was not extended: {extended}"
            state = extended
            if (n + 1) % 100 == 0:
                memory.append((n + 1, rss_mb()))
    for ahead, label in ((True, "with copies made ahead (live.prepare)"), (False, "copying on the spot")):
        spans = times[ahead]
        if spans:
            p95 = sorted(spans)[int(len(spans) * 0.95)]
            print(f"core: extend per append (3 lines, the last rewriting the model message), {label}: median "
                  f"{statistics.median(spans) * 1000:.1f} ms, p95 {p95 * 1000:.1f} ms, "
                  f"max {max(spans) * 1000:.1f} ms over {len(spans):,}")
    if prepared:
        print(f"core: live.prepare (off the way to the screen): median {statistics.median(prepared) * 1000:.1f} ms")
    print("core: RSS (MB) after appends: " + ", ".join(f"{n:,}: {mb:,.0f}" for n, mb in memory))


async def bench_app(path: Path, appends: int, *, settled: bool = True, marker: Path | None = None,
                    leak_check: bool = False, paced: bool = False) -> None:
    from inspector.tui.app import InspectorApp
    from inspector.tui.messages import FileChanged, SessionLoaded
    from inspector.tui.session.screen import SessionScreen

    events: dict[str, float] = {}
    arrived = asyncio.Event()

    def hook(message: object) -> None:
        if isinstance(message, FileChanged):
            events.setdefault("changed", time.perf_counter())
        elif isinstance(message, SessionLoaded) and message.reason == "live":
            events["loaded"] = time.perf_counter()
            arrived.set()

    app = InspectorApp(path, live=True)
    async with app.run_test(size=(160, 45), message_hook=hook) as pilot:
        deadline = time.perf_counter() + 600
        while not (isinstance(app.screen, SessionScreen) and app.screen.loaded is not None
                   and app.screen.loaded.live is not None):
            assert time.perf_counter() < deadline, "the session did not load and prime within 10 minutes"
            await pilot.pause(0.05)
        view = app.screen
        assert isinstance(view, SessionScreen)
        await asyncio.wait_for(view.watch_ready.wait(), 30)
        print(f"app: loaded and primed, RSS {rss_mb():,.0f} MB", flush=True)
        if settled:  # the passes that follow a full read (agentic candidates, masking and cost) done first
            started = time.perf_counter()
            while not view.follower.settled:
                await pilot.pause(0.05)
            print(f"app: background passes after the load finished {time.perf_counter() - started:.1f} s later, "
                  f"RSS {rss_mb():,.0f} MB", flush=True)
        if marker is not None:
            marker.write_text(str(os.getpid()))  # a profiler may attach now
        table = view.table
        table.scroll_end(animate=False, immediate=True)  # at the bottom: new rows come into view
        drawn_at: dict[int, float] = {}
        render_line = table.render_line

        def watched_render_line(y: int) -> object:  # when Textual draws the row of a turn
            strip = render_line(y)
            turn = table.turn_at(y + int(table.scroll_offset.y))
            if turn is not None:
                drawn_at.setdefault(turn, time.perf_counter())
            return strip

        table.render_line = watched_render_line  # type: ignore[method-assign]
        collections: list[tuple[int, float]] = []  # the cyclic collector's runs: generation, seconds
        gc_started: list[float] = []

        def on_gc(phase: str, info: dict[str, int]) -> None:
            if phase == "start":
                gc_started.append(time.perf_counter())
            elif gc_started:
                collections.append((info["generation"], time.perf_counter() - gc_started.pop()))

        gc.callbacks.append(on_gc)
        after_event: list[float] = []
        after_write: list[float] = []
        handled: list[float] = []
        extended = 0
        memory: list[tuple[int, float]] = [(0, rss_mb())]
        base = 100_000
        with path.open("ab") as handle:
            for n in range(appends):
                while paced and not view.follower.settled:
                    await pilot.pause(0.005)  # waiting for the previous append's work to end, not timing it
                events.clear()
                arrived.clear()
                count = len(view.loaded.analysis.turns) if view.loaded else 0
                written = time.perf_counter()
                handle.write(turn_lines(base + n))
                handle.flush()
                await asyncio.wait_for(arrived.wait(), 60)
                deadline = time.perf_counter() + 60
                while view.loaded is None or len(view.loaded.analysis.turns) <= count or \
                        len(view.loaded.analysis.turns) - 1 not in drawn_at:
                    assert time.perf_counter() < deadline, "the new row was not drawn within 60 s"
                    await asyncio.sleep(0.002)  # polling for the draw, not synchronising on time
                drawn = drawn_at[len(view.loaded.analysis.turns) - 1]
                after_event.append(drawn - events.get("changed", written))
                after_write.append(drawn - written)
                handled.append(events["loaded"] - events.get("changed", written))
                extended += view.loaded.changed_from is not None
                if n < 5 or (n + 1) % 100 == 0:
                    print(f"  append {n + 1}: {after_event[-1] * 1000:.0f} ms after the event, "
                          f"{after_write[-1] * 1000:.0f} ms after the write, RSS {rss_mb():,.0f} MB", flush=True)
                if (n + 1) % 100 == 0:
                    memory.append((n + 1, rss_mb()))
                drawn_at.clear()
        print(f"app: FileChanged -> SessionLoaded (the extension in its worker): median "
              f"{statistics.median(handled) * 1000:.0f} ms")
        print(f"app: FileChanged -> new row drawn: median {statistics.median(after_event) * 1000:.0f} ms, "
              f"p95 {sorted(after_event)[int(len(after_event) * 0.95)] * 1000:.0f} ms over {appends:,} appends "
              f"({extended:,} extended, {appends - extended:,} read again)")
        print(f"app: write -> new row drawn (with the watcher's debounce): median "
              f"{statistics.median(after_write) * 1000:.0f} ms, p95 "
              f"{sorted(after_write)[int(len(after_write) * 0.95)] * 1000:.0f} ms "
              f"({'each written once the app finished the one before' if paced else 'written back to back'})")
        print("app: RSS (MB) after appends: " + ", ".join(f"{n:,}: {mb:,.0f}" for n, mb in memory))
        gc.callbacks.remove(on_gc)
        if leak_check:  # what the app's freezes (tui/long_lived.py) kept from being collected
            frozen = gc.get_freeze_count()
            gc.unfreeze()
            gc.set_debug(gc.DEBUG_SAVEALL)
            found = gc.collect()
            kinds = Counter(type(o).__name__ for o in gc.garbage).most_common(6)
            gc.garbage.clear()
            gc.set_debug(0)
            print(f"app: {frozen:,} objects kept out of the collector's scans; once let back in, a full "
                  f"collection finds {found:,} unreachable ({', '.join(f'{n:,} {k}' for k, n in kinds)})")
        for generation in range(3):
            runs = [t for g, t in collections if g == generation]
            if runs:
                print(f"app: garbage collections of generation {generation}: {len(runs):,}, "
                      f"longest {max(runs) * 1000:.0f} ms, {sum(runs) * 1000:,.0f} ms in all")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("session", nargs="?", type=Path, default=DEFAULT)
    parser.add_argument("--appends", type=int, default=1_000)
    parser.add_argument("--app-appends", type=int, default=1_000)
    parser.add_argument("--unsettled", action="store_true",
                        help="append at once, while the passes that follow the load still run")
    parser.add_argument("--marker", type=Path, help="write the pid here when the appends start (for a profiler)")
    parser.add_argument("--leak-check", action="store_true",
                        help="at the end, count what the app's gc.freeze calls kept from being collected")
    parser.add_argument("--paced", action="store_true",
                        help="write each append once the app has finished its work on the one before")
    args = parser.parse_args()
    faulthandler.dump_traceback_later(600, repeat=True)  # where it is, when it takes long (a whole run: ~5 min)
    if not args.session.is_file():
        print(f"{args.session} is missing: run bench/make_big_session.py first", file=sys.stderr)
        return 2
    OUT.mkdir(parents=True, exist_ok=True)
    copy = OUT / "live-session.jsonl"
    shutil.copyfile(args.session, copy)
    if args.appends:
        bench_core(copy, args.appends)
    if args.app_appends:
        shutil.copyfile(args.session, copy)
        asyncio.run(bench_app(copy, args.app_appends, settled=not args.unsettled, marker=args.marker,
                              leak_check=args.leak_check, paced=args.paced))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
