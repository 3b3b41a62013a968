"""The app as a person meets it: from the command line to turn rows on screen, and its memory.

    python bench/bench_launch.py [FILE ...] [--runs 3] [--appends 1000]

Each run starts ``python -m inspector FILE`` in a real terminal (a detached
tmux session, 200x50) and polls ``tmux capture-pane -p`` until a turn row (a
turn number, then ``user`` or ``model``) is on screen: that wall time is the
launch-to-rows figure.  The rows the app shows from the file's tail while the rest is read count (their
turn number is still a pending ``…`` then); the whole table is on screen when a row with its number is
and no figure says ``reading…`` any more: the launch-to-table figure.  Each run also times
``python -m inspector analyze --json FILE`` (output to /dev/null), before or after the app in turn, so
that both figures come from the same minutes of a shared machine.  It then waits until the app is idle (its CPU time
stops growing for a second) and reads its memory from ``/proc/PID/status``:
``VmRSS`` now and ``VmHWM``, the peak.  With ``--appends N`` it appends N
messages to a copy of the file (in batches of 100, as a running Gemini CLI
would, waiting for the app to be idle after each) and reads the memory again.

On a shared machine times depend on the load (the CPU time of the app is
printed beside them); memory does not.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
OUT = REPO / "bench" / "out"
DEFAULT = OUT / "big-session.jsonl"
ROW = re.compile(r"(?:\b\d[\d,]*|…)\s+(user|model)\b")  # a turn row, its number known or pending (…)
NUMBERED_ROW = re.compile(r"\b\d[\d,]*\s+(user|model)\b")
PENDING = "reading…"  # what a figure still being read says (tui/pending.py)
TICKS = os.sysconf("SC_CLK_TCK")


SOCKET = f"bench-launch-{os.getpid()}"  # a tmux server of its own: this process's environment, no one else's sessions


def _tmux(*args: str) -> str:
    return subprocess.run(["tmux", "-L", SOCKET, *args], check=True, capture_output=True, text=True).stdout


def cpu_seconds(pid: int, children: bool = False) -> float:
    """``pid``'s CPU time; ``children``: with its children's that have ended (the reader's second process)."""
    with open(f"/proc/{pid}/stat") as handle:
        fields = handle.read().rsplit(")", 1)[1].split()
    own = int(fields[11]) + int(fields[12])  # utime, stime (fields 14 and 15)
    return (own + (int(fields[13]) + int(fields[14]) if children else 0)) / TICKS  # cutime, cstime


def memory_mb(pid: int) -> tuple[float, float]:
    """(VmRSS, VmHWM) of ``pid`` in MiB."""
    found: dict[str, float] = {}
    with open(f"/proc/{pid}/status") as handle:
        for line in handle:
            key, _, value = line.partition(":")
            if key in ("VmRSS", "VmHWM"):
                found[key] = int(value.split()[0]) / 1024
    return found["VmRSS"], found["VmHWM"]


def wait_idle(pid: int, quiet: float = 1.0, limit: float = 300.0) -> float:
    """Wait until ``pid`` has used less than 2% of a CPU for ``quiet`` seconds; the wall time waited."""
    start = time.monotonic()
    last = cpu_seconds(pid)
    while time.monotonic() - start < limit:
        time.sleep(quiet)
        now = cpu_seconds(pid)
        if now - last < 0.02 * quiet:
            return time.monotonic() - start
        last = now
    raise TimeoutError(f"the app stayed busy for {limit:.0f} s")


def append_messages(path: Path, count: int, first: int) -> None:
    """``count`` messages (a prompt and a model answer in turn) appended to ``path`` in one write."""
    lines = []
    for k in range(first, first + count):
        kind = "user" if k % 2 == 0 else "gemini"
        record = {"id": f"bench-append-{k:07d}", "timestamp": "2026-11-28T00:00:00.000Z", "type": kind,
                  "content": [{"text": f"appended message {k}: the function returns a value"}]}
        if kind == "gemini":
            record["tokens"] = {"input": 1000 + k, "output": 20, "cached": 0, "thoughts": 0, "tool": 0,
                                "total": 1020 + k}
        lines.append(json.dumps(record, separators=(",", ":")))
    with path.open("a", encoding="utf-8") as out:
        out.write("\n".join(lines) + "\n")


def run_once(path: Path, appends: int) -> dict[str, float]:
    name = f"launch-{time.monotonic_ns()}"
    command = f"exec {sys.executable} -m inspector {path}"
    started = time.monotonic()
    _tmux("new-session", "-d", "-x", "200", "-y", "50", "-s", name, "-c", str(Path.cwd()), command)
    try:
        pid = int(_tmux("display-message", "-p", "-t", name, "#{pane_pid}").strip())
        rows_s = rows_cpu = None
        while True:
            screen = _tmux("capture-pane", "-p", "-t", name)
            if rows_s is None and ROW.search(screen):
                rows_s = time.monotonic() - started
                rows_cpu = cpu_seconds(pid, children=True)  # (a reader process still running is not counted)
            if rows_s is not None and NUMBERED_ROW.search(screen) and PENDING not in screen:
                table_s = time.monotonic() - started
                table_cpu = cpu_seconds(pid, children=True)
                break
            if time.monotonic() - started > 300:
                raise TimeoutError("no whole table on screen after 300 s:\n" + screen)
            time.sleep(0.02)
        wait_idle(pid)
        figures = {"rows_s": rows_s, "rows_cpu_s": rows_cpu, "table_s": table_s, "table_cpu_s": table_cpu,
                   "loaded_cpu_s": cpu_seconds(pid)}
        figures["rss_mb"], figures["hwm_mb"] = memory_mb(pid)
        done = 0
        while done < appends:
            batch = min(100, appends - done)
            append_messages(path, batch, done)
            done += batch
            wait_idle(pid, quiet=0.5)
        if appends:
            figures["appended_rss_mb"], figures["appended_hwm_mb"] = memory_mb(pid)
        return figures
    finally:
        subprocess.run(["tmux", "-L", SOCKET, "kill-session", "-t", name], check=False, capture_output=True)


def analyze_once(path: Path) -> tuple[float, float]:
    """The wall time of ``python -m inspector analyze --json FILE`` (its output to /dev/null) and the
    CPU time of its processes (its reader's second one included)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.monotonic()
    subprocess.run([sys.executable, "-m", "inspector", "analyze", "--json", str(path)], check=True,
                   stdout=subprocess.DEVNULL, cwd=Path.cwd())
    wall = time.monotonic() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="*", type=Path, default=[DEFAULT])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--appends", type=int, default=0, help="messages appended after the load (default none)")
    args = parser.parse_args()
    for source in args.files:
        size_mb = source.stat().st_size / 2**20  # MiB, as /proc counts memory
        runs = []
        for _ in range(args.runs):
            path = source
            if args.appends:  # appended to a copy, never to the file given
                path = OUT / f"launch-copy-{source.name}"
                shutil.copyfile(source, path)
            analyze_first = len(runs) % 2 == 1  # in turn: neither always meets the machine first
            analyzed = analyze_once(source) if analyze_first else (0.0, 0.0)
            figures = run_once(path, args.appends)
            figures["analyze_s"], figures["analyze_cpu_s"] = analyzed if analyze_first else analyze_once(source)
            runs.append(figures)
            if args.appends:
                path.unlink()
        rows = [r["rows_s"] for r in runs]
        print(f"{source.name} ({size_mb:,.0f} MiB), {len(runs)} runs, load average {os.getloadavg()[0]:.1f}")
        print(f"  launch to first rows: best {min(rows):.2f} s, median {statistics.median(rows):.2f} s "
              f"(app CPU by then, with its ended processes, {min(r['rows_cpu_s'] for r in runs):.2f} s)")
        table = [r["table_s"] for r in runs]
        print(f"  launch to the whole table: best {min(table):.2f} s, median {statistics.median(table):.2f} s "
              f"(app CPU by then, its reader's second process included, {min(r['table_cpu_s'] for r in runs):.2f} s)")
        analyze = [r["analyze_s"] for r in runs]
        print(f"  analyze --json, same runs: best {min(analyze):.2f} s, median {statistics.median(analyze):.2f} s "
              f"(CPU, both processes, {min(r['analyze_cpu_s'] for r in runs):.2f} s)")
        print("  per run (rows / table / analyze, s): " + "; ".join(
            f"{r['rows_s']:.2f} / {r['table_s']:.2f} / {r['analyze_s']:.2f}" for r in runs))
        print("  CPU by then / analyze's CPU, median of the runs' ratios: first rows "
              f"{statistics.median(r['rows_cpu_s'] / r['analyze_cpu_s'] for r in runs):.2f}, whole table "
              f"{statistics.median(r['table_cpu_s'] / r['analyze_cpu_s'] for r in runs):.2f}")
        print(f"  first rows / analyze, median of the runs' ratios: "
              f"{statistics.median(r['rows_s'] / r['analyze_s'] for r in runs):.2f}; "
              f"whole table / analyze: {statistics.median(r['table_s'] / r['analyze_s'] for r in runs):.2f}")
        print(f"  app CPU to idle after the load: {min(r['loaded_cpu_s'] for r in runs):.2f} s")
        rss, hwm = max(r["rss_mb"] for r in runs), max(r["hwm_mb"] for r in runs)
        print(f"  memory after the load: RSS {rss:,.0f} MiB ({rss / size_mb:.1f}x), peak {hwm:,.0f} MiB "
              f"({hwm / size_mb:.1f}x)")
        if args.appends:
            rss, hwm = max(r["appended_rss_mb"] for r in runs), max(r["appended_hwm_mb"] for r in runs)
            print(f"  after {args.appends:,} appends: RSS {rss:,.0f} MiB ({rss / size_mb:.1f}x), peak {hwm:,.0f} MiB "
                  f"({hwm / size_mb:.1f}x)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
