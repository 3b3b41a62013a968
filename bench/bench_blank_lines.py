"""How long ``analyze`` and ``compact --apply`` take on a session followed by many blank lines.

    .venv/bin/python bench/bench_blank_lines.py 800000 20000000

Each count builds ``coding-task.jsonl`` followed by that many blank lines in a
temporary folder, then times ``analyze --json`` and ``compact --force --apply``
(offline) in a fresh process each (wall clock, one run each: the point is the
order of magnitude, minutes against seconds).  ``--kind`` picks what a blank
line is: ``empty`` (``\\n``), ``spaces`` (``   \\n``) or ``crlf`` (``\\r\\n``).
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SAMPLE = REPO / "sample_sessions" / "coding-task.jsonl"
BLANK = {"empty": b"\n", "spaces": b"  \t \n", "crlf": b"\r\n"}


def build(folder: Path, count: int, kind: str) -> Path:
    path = folder / "chats" / "session-blank.jsonl"
    path.parent.mkdir(parents=True)
    shutil.copyfile(SAMPLE, path)
    line = BLANK[kind]
    chunk = line * 1_000_000
    with path.open("ab") as out:
        for _ in range(count // 1_000_000):
            out.write(chunk)
        out.write(line * (count % 1_000_000))
    return path


def timed(argv: list[str]) -> tuple[float, int]:
    began = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "inspector", *argv], cwd=REPO, stdout=subprocess.DEVNULL,
                          stderr=subprocess.DEVNULL)
    return time.perf_counter() - began, done.returncode


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("counts", nargs="+", type=int, help="blank lines after the session")
    parser.add_argument("--kind", choices=sorted(BLANK), default="empty")
    parser.add_argument("--only", choices=("analyze", "compact"), help="time one command only")
    args = parser.parse_args()
    for count in args.counts:
        with tempfile.TemporaryDirectory(prefix="bench-blank-") as folder:
            path = build(Path(folder), count, args.kind)
            size = path.stat().st_size
            if args.only != "compact":
                seconds, code = timed(["analyze", str(path), "--json"])
                print(f"{count:>12,} {args.kind} lines ({size / 1e6:,.1f} MB): analyze {seconds:7.2f} s (exit {code})",
                      flush=True)
            if args.only != "analyze":
                seconds, code = timed(["compact", str(path), "--provider", "offline", "--force", "--apply"])
                print(f"{count:>12,} {args.kind} lines ({size / 1e6:,.1f} MB): compact --apply {seconds:7.2f} s "
                      f"(exit {code})", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
