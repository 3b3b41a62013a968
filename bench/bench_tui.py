"""Benchmark the app on a big session: time to the first screen, to the table, and per split step.

    python bench/bench_tui.py [SESSION]      (default: bench/out/big-session.jsonl, ~100 MB, made if missing)

Figures printed (targets: first screen within 2 s, a split step within 50 ms):
* first screen: from creating the app to the session screen painted with its progress bar;
* newest turns shown: to the rows read from the file's tail in the table (``TailShown`` handled,
  seen by the 20 ms probe below; a file no bigger than the tail has none);
* table shown: to the analysed session on screen (dominated by the core's load + analyze);
* masking and cost shown: to the masking marks and cost column, worked out in a worker after the table;
* event-loop stalls while loading (the UI stays responsive if these stay small);
* split step: ``]`` handled (Analysis.step, header and the visible table rows rendered again);
* key round trip: Pilot's press of ``]`` until the app is idle again (an upper bound).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from inspector.tui.app import InspectorApp  # noqa: E402
from inspector.tui.messages import LoadProgress, NotesReady, SessionLoaded  # noqa: E402
from inspector.tui.session.screen import SessionScreen  # noqa: E402
from inspector.tui.widgets.context_header import ContextHeader  # noqa: E402

OUT = REPO / "bench" / "out"
DEFAULT = OUT / "big-session.jsonl"
SENTENCE = ("the function returns a value when the request fails because the cache is stale and the retry "
            "loop never ends so we patch the handler add a test and check the log for errors again")
WORDS = SENTENCE.split()


def make_big_session(path: Path, target_bytes: int = 100_000_000, seed: int = 7) -> None:
    """A JSONL session of about ``target_bytes``: prompts, answers with tool calls and results, usage."""
    maker = REPO / "bench" / "make_big_session.py"
    if maker.is_file():  # the project's own generator, when present
        subprocess.run([sys.executable, str(maker), str(path)], check=True)
        return
    rng = random.Random(seed)
    path.parent.mkdir(parents=True, exist_ok=True)
    size = 0
    n = 0
    with path.open("w", encoding="utf-8") as out:
        meta = {"sessionId": "bench-big", "projectHash": "b" * 64, "startTime": "2026-11-01T00:00:00.000Z",
                "lastUpdated": "2026-11-01T00:00:00.000Z", "kind": "main"}
        out.write(json.dumps(meta) + "\n")
        while size < target_bytes:
            n += 1
            words = " ".join(rng.choices(WORDS, k=rng.randint(5, 60)))
            user = {"id": f"u{n}", "timestamp": "2026-11-01T00:00:00.000Z", "type": "user",
                    "content": [{"text": words}]}
            output = " ".join(rng.choices(WORDS, k=rng.randint(20, 220)))
            model = {"id": f"g{n}", "timestamp": "2026-11-01T00:00:01.000Z", "type": "gemini",
                     "content": "Reading the file. " + " ".join(rng.choices(WORDS, k=20)),
                     "toolCalls": [{"id": f"c{n}", "name": "read_file", "args": {"file_path": f"src/m{n % 500}.py"},
                                    "result": [{"functionResponse": {"id": f"c{n}", "name": "read_file",
                                                                     "response": {"output": output}}}],
                                    "status": "success", "timestamp": "2026-11-01T00:00:01.000Z"}],
                     "tokens": {"input": 1000 + n, "output": 30, "cached": 500, "thoughts": 5, "tool": 0,
                                "total": 1535 + n},
                     "model": "gemini-2.5-pro"}
            for record in (user, model):
                line = json.dumps(record) + "\n"
                out.write(line)
                size += len(line)


async def measure(path: Path, steps: int = 20) -> dict[str, float]:
    marks: dict[str, float] = {}
    start = time.perf_counter()

    def hook(message: object) -> None:
        if isinstance(message, LoadProgress):
            marks.setdefault("first_screen", time.perf_counter() - start)
            marks.setdefault(f"phase_{message.phase}", time.perf_counter() - start)
        elif isinstance(message, SessionLoaded):
            marks.setdefault("table_shown", time.perf_counter() - start)
        elif isinstance(message, NotesReady):
            marks.setdefault("notes_shown", time.perf_counter() - start)

    app = InspectorApp(path, threshold=0.5, live=False)
    stalls: list[float] = []
    async with app.run_test(size=(160, 45), message_hook=hook) as pilot:

        async def probe() -> None:
            while "table_shown" not in marks:
                screen = app.screen
                if isinstance(screen, SessionScreen) and screen.table.tail is not None:
                    marks.setdefault("tail_shown", time.perf_counter() - start)
                before = time.perf_counter()
                await asyncio.sleep(0.02)
                stalls.append(time.perf_counter() - before - 0.02)

        prober = asyncio.create_task(probe())
        await app.workers.wait_for_complete()
        await pilot.pause()
        await prober
        screen = app.screen
        assert isinstance(screen, SessionScreen) and screen.loaded is not None
        marks["turns"] = len(screen.loaded.analysis.turns)
        table = screen.table
        header = screen.query_one(ContextHeader)
        step_times = []
        for i in range(steps):
            t = time.perf_counter()
            screen.action_split(1 if i % 2 == 0 else -1)
            for y in range(table.size.height):
                table.render_line(y)
            list(app.console.render(header.content))
            step_times.append(time.perf_counter() - t)
        presses = []
        for i in range(steps):
            t = time.perf_counter()
            await pilot.press("right_square_bracket" if i % 2 == 0 else "left_square_bracket")
            presses.append(time.perf_counter() - t)
        marks["rendered_lines_cached"] = len(table._lines)
    marks["stall_max_ms"] = max(stalls, default=0) * 1000
    marks["stall_p95_ms"] = (sorted(stalls)[int(len(stalls) * 0.95)] if stalls else 0) * 1000
    marks["step_median_ms"] = statistics.median(step_times) * 1000
    marks["step_max_ms"] = max(step_times) * 1000
    marks["press_median_ms"] = statistics.median(presses) * 1000
    return marks


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("session", nargs="?", type=Path, default=DEFAULT,
                        help=f"the session to open (default: {DEFAULT.relative_to(REPO)}, made if missing)")
    path = parser.parse_args().session
    if not path.exists():
        print(f"making {path} ...", flush=True)
        make_big_session(path)
    print(f"{path}: {path.stat().st_size / 1e6:.1f} MB")
    marks = asyncio.run(measure(path))
    print(f"turns:                         {int(marks['turns']):,}")
    print(f"first screen (progress shown): {marks['first_screen']:.2f} s   (target 2 s)")
    if "tail_shown" in marks:
        print(f"newest turns shown (tail):     {marks['tail_shown']:.2f} s")
    print(f"table shown (load + analyze):  {marks['table_shown']:.2f} s   (target 1.5 s)")
    phases = [(name[6:], value) for name, value in sorted(marks.items(), key=lambda kv: kv[1])
              if name.startswith("phase_")]
    print("  phases began at: " + ", ".join(f"{name} {value:.2f} s" for name, value in phases))
    if "notes_shown" in marks:
        print(f"masking marks and cost shown (worked out after the table): {marks['notes_shown']:.2f} s")
    print(f"event-loop stalls while loading: max {marks['stall_max_ms']:.0f} ms, p95 {marks['stall_p95_ms']:.0f} ms")
    print(f"split step (] handled + visible rows + header rendered): median {marks['step_median_ms']:.2f} ms, "
          f"max {marks['step_max_ms']:.2f} ms   (target 50 ms)")
    print(f"key round trip through Pilot (upper bound): median {marks['press_median_ms']:.1f} ms")
    print(f"rows rendered and cached: {int(marks['rendered_lines_cached'])} (of {int(marks['turns']) + 1})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
