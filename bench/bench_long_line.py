"""Does reading cost grow with a line's length, or with its square?  ``analyze`` on files that hold
one long line (a tool output pasted whole, or a line cut off while written).

    python bench/bench_long_line.py [--sizes 50,100,200,400] [--valid]

Each file is the metadata line, then one line of SIZE MB: by default not JSON (the read must still
get through it to say "line 2: not valid JSON ... skipped"); with ``--valid`` a message whose text is
that long.  Reported per size: wall time of the whole process, and seconds per 100 MB (flat when
the cost is linear).  Files go to ``bench/out/`` and are removed afterwards.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

OUT = Path(__file__).resolve().parent / "out"
MB = 1 << 20


def write(path: Path, size_mb: int, valid: bool) -> None:
    head = json.dumps({"sessionId": "s", "projectHash": "p", "startTime": "2026-01-01T00:00:00Z",
                       "lastUpdated": "2026-01-01T00:00:00Z", "kind": "main"})
    with path.open("wb") as out:
        out.write(head.encode() + b"\n")
        if valid:
            out.write(b'{"id":"m1","timestamp":"2026-01-01T00:00:00Z","type":"user","content":[{"text":"')
        block = b"a" * MB
        for _ in range(size_mb):
            out.write(block)
        out.write(b'"}]}\n' if valid else b"\n")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="50,100,200,400")
    parser.add_argument("--valid", action="store_true")
    args = parser.parse_args()
    OUT.mkdir(exist_ok=True)
    print(f"one {'valid' if args.valid else 'broken'} line of SIZE MB; analyze, whole process")
    for size in (int(s) for s in args.sizes.split(",")):
        path = OUT / f"long-line-{size}.jsonl"
        write(path, size, args.valid)
        try:
            started = time.perf_counter()
            done = subprocess.run([sys.executable, "-m", "inspector", "analyze", str(path)],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, check=False)
            took = time.perf_counter() - started
        finally:
            path.unlink()
        said = done.stderr.strip().splitlines()[-1][:100] if done.stderr.strip() else ""
        print(f"{size:>5} MB  {took:6.2f} s  {took / size * 100:6.2f} s per 100 MB  exit {done.returncode}  {said}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
