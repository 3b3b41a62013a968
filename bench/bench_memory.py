"""The memory ``session-inspector analyze --json`` takes, against the size of the file it reads.

    python bench/bench_memory.py [FILE ...]      (default: both bench files, made if missing)

Runs the command as a whole process (stdout to /dev/null) and reports its
peak memory, ``ru_maxrss`` from ``wait4`` (the larger of the process and
the reading process it forks and waits for), as MiB and as a multiple of
the file's size, with the wall and CPU time.  Memory does not depend on the
machine's load; the wall time does (compare CPU time on a busy machine).
The app's memory: ``bench_launch.py``.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
OUT = REPO / "bench" / "out"
FILES = {OUT / "big-session.jsonl": [], OUT / "inline-session.jsonl": ["--shape", "inline"]}


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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="*", type=Path)
    parser.add_argument("--runs", type=int, default=1)
    args = parser.parse_args()
    files = args.files or list(FILES)
    for path in files:
        if not path.exists() and path in FILES:
            subprocess.run([sys.executable, str(REPO / "bench" / "make_big_session.py"), *FILES[path]], check=True)
        size = path.stat().st_size
        runs = [measure(path) for _ in range(args.runs)]
        wall, cpu, peak = min(r[0] for r in runs), min(r[1] for r in runs), max(r[2] for r in runs)
        print(f"{path.name}: {size / 2**20:,.0f} MiB; analyze --json peak RSS {peak:,.0f} MiB "
              f"({peak * 2**20 / size:.2f}x the file), wall {wall:.2f} s, CPU {cpu:.2f} s "
              f"(load average {os.getloadavg()[0]:.1f})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
