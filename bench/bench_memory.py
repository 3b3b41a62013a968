"""The memory ``session-inspector analyze --json`` takes, and what the app's core holds, against the file's size.

    python bench/bench_memory.py [FILE ...]                  (default: both bench files, made if missing)
    python bench/bench_memory.py --app [--appends 1000] [--where 25] [FILE ...]

Without ``--app`` it runs ``analyze --json`` as a whole process (stdout to
/dev/null) and reports its peak memory, ``ru_maxrss`` from ``wait4`` (the
larger of the process and the reading process it forks and waits for), as
MiB and as a multiple of the file's size, with the wall and CPU time.

With ``--app`` it runs, in a fresh process without Textual, what the app's
workers run on a session (``tui.loading.read_session``, the notes' masking
and cost, ``live.start``, ``live.prepare``), then appends ``--appends``
messages to a copy of the file in batches of 100 (as ``bench_launch.py``
does), each batch extended (``live.extend``) and copied ahead again
(``live.prepare``), the notes worked out again at the end.  It prints the
process's RSS after each step, and with ``--where N`` the N places that hold
the most at the end (``tracemalloc``, grouped by traceback; tracing makes
the run several times slower and does not count what Python does not
allocate).  The app itself (its screens) adds to these figures:
``bench_launch.py`` measures the whole app in a terminal.

Memory does not depend on the machine's load; the wall time does (compare
CPU time on a busy machine).
"""

from __future__ import annotations

import argparse
import gc
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
OUT = REPO / "bench" / "out"
FILES = {OUT / "big-session.jsonl": [], OUT / "inline-session.jsonl": ["--shape", "inline"]}
sys.path.insert(0, str(REPO / "bench"))


def measure(path: Path) -> tuple[float, float, float]:
    """(wall s, CPU s, peak RSS MiB) of one ``analyze --json`` of ``path``."""
    started = time.monotonic()
    with open(os.devnull, "wb") as sink:
        process = subprocess.Popen([sys.executable, "-m", "inspector", "analyze", "--json", str(path)],
                                   stdout=sink, cwd=REPO)
        _, status, usage = os.wait4(process.pid, 0)
    wall = time.monotonic() - started
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode != 0:
        raise SystemExit(f"analyze --json {path} exited {process.returncode}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def rss_mib() -> float:
    with open("/proc/self/status") as handle:
        for line in handle:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def pymalloc_mib() -> tuple[float, float]:
    """(bytes in use, bytes free) in Python's small-object arenas, MiB (``sys._debugmallocstats``):
    what is freed there stays in the process's RSS until a whole arena is empty."""
    import re
    import tempfile

    with tempfile.TemporaryFile("w+") as out:
        saved = os.dup(2)
        os.dup2(out.fileno(), 2)
        try:
            sys._debugmallocstats()
        finally:
            os.dup2(saved, 2)
            os.close(saved)
        out.seek(0)
        text = out.read()
    found = [re.search(rf"# bytes in {what} blocks\s*=\s*([\d,]+)", text) for what in ("allocated", "available")]
    used, free = (int(m.group(1).replace(",", "")) / 2**20 if m else 0.0 for m in found)
    return used, free


def app_core(path: Path, appends: int, where: int) -> None:
    """The app's core steps on ``path`` (a copy appended to), RSS after each (see the module's notes)."""
    import tracemalloc

    if where:
        tracemalloc.start(8)
    from bench_launch import append_messages

    from inspector.live.extend import LiveState, extend, prepare, start
    from inspector.session.loader import paused_gc
    from inspector.session.release import give_back_free_memory
    from inspector.tui.loading import read_session
    from inspector.tui.session_notes import note_session, release_notes

    size = path.stat().st_size / 2**20
    started = time.process_time()

    def say(step: str) -> None:
        rss = rss_mib()
        used, free = pymalloc_mib()
        extra = f" (Python's allocator: {used:.0f} MiB in use, {free:.0f} MiB free in its arenas)"
        print(f"  {step}: RSS {rss:,.0f} MiB ({rss / size:.2f}x), CPU {time.process_time() - started:.1f} s{extra}",
              flush=True)

    say("imports")
    loaded = read_session(path)
    gc.collect()
    say("loaded")
    note_session(loaded.analysis, loaded.session)
    gc.collect()
    say("masking and cost noted")
    state = start(loaded.session, loaded.analysis)
    assert state is not None
    prepare(state)
    gc.collect()
    say("live started, copied ahead")
    del loaded
    done = 0
    slowest = 0.0
    while done < appends:
        batch = min(100, appends - done)
        offset = path.stat().st_size
        append_messages(path, batch, done)
        with path.open("rb") as handle:
            handle.seek(offset)
            data = handle.read()
        done += batch
        began = time.perf_counter()
        grown = extend(state, data, offset)
        slowest = max(slowest, time.perf_counter() - began)
        assert isinstance(grown, LiveState), grown
        state = grown
        with paused_gc():
            prepare(state)
        gc.collect(1)
        give_back_free_memory()  # as the app's worker does (tui/session/live.py)
    if appends:
        note_session(state.analysis, state.session)
        release_notes().clear()
        gc.collect()
        say(f"after {appends:,} appended messages (slowest extend {slowest * 1000:.0f} ms)")
    if where:
        snapshot = tracemalloc.take_snapshot()
        held = sum(stat.size for stat in snapshot.statistics("filename"))
        print(f"  traced: {held / 2**20:,.1f} MiB held; the {where} largest places:")
        for stat in snapshot.statistics("traceback")[:where]:
            frames = [f"{Path(f.filename).name}:{f.lineno}" for f in stat.traceback][::-1][:5]  # innermost first
            print(f"    {stat.size / 2**20:7.1f} MiB {stat.count:>9,} blocks  {' <- '.join(frames)}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="*", type=Path)
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--app", action="store_true", help="what the app's core holds after the load and appends")
    parser.add_argument("--appends", type=int, default=1000, help="with --app: messages appended (default 1,000)")
    parser.add_argument("--where", type=int, default=0, help="with --app: the N largest holders (tracemalloc)")
    parser.add_argument("--core-run", type=Path, help=argparse.SUPPRESS)  # the process --app starts
    args = parser.parse_args()
    if args.core_run is not None:
        app_core(args.core_run, args.appends, args.where)
        return 0
    files = args.files or list(FILES)
    for path in files:
        if not path.exists() and path in FILES:
            subprocess.run([sys.executable, str(REPO / "bench" / "make_big_session.py"), *FILES[path]], check=True)
        size = path.stat().st_size
        if args.app:
            copy = OUT / f"memory-copy-{path.name}"
            OUT.mkdir(exist_ok=True)
            shutil.copyfile(path, copy)
            print(f"{path.name}: {size / 2**20:,.0f} MiB; the app's core (load average {os.getloadavg()[0]:.1f})",
                  flush=True)
            try:
                subprocess.run([sys.executable, __file__, "--core-run", str(copy), "--appends", str(args.appends),
                                "--where", str(args.where)], check=True, cwd=REPO)
            finally:
                copy.unlink()
            continue
        runs = [measure(path) for _ in range(args.runs)]
        wall, cpu, peak = min(r[0] for r in runs), min(r[1] for r in runs), max(r[2] for r in runs)
        print(f"{path.name}: {size / 2**20:,.0f} MiB; analyze --json peak RSS {peak:,.0f} MiB "
              f"({peak * 2**20 / size:.2f}x the file), wall {wall:.2f} s, CPU {cpu:.2f} s "
              f"(load average {os.getloadavg()[0]:.1f})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
