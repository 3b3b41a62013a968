"""Does the snapshot diff (verification pass, previous snapshot) grow with the snapshot's length, or
with length times changes?  ``snapshot.diff`` on long snapshots, one change per 1,000 lines.

    python bench/bench_diff.py [--lines 5000,20000,100000,200000]

Each snapshot is one ``key_knowledge`` section of LINES bullet lines; the second copy changes every
1,000th line.  Reported per size: megabytes, seconds for the diff, and seconds per 100,000 lines
(flat when the cost is linear).  Up to ``snapshot.DIFF_EXACT_LINES`` differing lines the diff is
difflib's; past it, lines are matched as a multiset.
"""

from __future__ import annotations

import argparse
import io
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from rich.console import Console

from inspector.commands.diff import render_diff
from inspector.compaction.snapshot import DIFF_EXACT_LINES, diff


def snapshot(lines: list[str]) -> str:
    return "<state_snapshot>\n<key_knowledge>\n" + "\n".join(lines) + "\n</key_knowledge>\n</state_snapshot>"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", default="5000,20000,100000,200000")
    parser.add_argument("--sections", default="2000,20000,200000",
                        help="also: snapshots of this many one-line sections (a hostile one), diffed and printed")
    args = parser.parse_args()
    print(f"difflib up to {DIFF_EXACT_LINES:,} differing lines a side")
    print(f"{'lines':>9} {'MB':>6} {'seconds':>8} {'s/100k lines':>13}")
    for count in (int(n) for n in args.lines.split(",")):
        lines = [f"- fact {i} about `src/module_{i % 977}.py`: the value is {i * 7919 % 100003}" for i in range(count)]
        changed = [line + " (checked)" if i % 1000 == 0 else line for i, line in enumerate(lines)]
        old, new = snapshot(lines), snapshot(changed)
        start = time.perf_counter()
        result = diff(old, new)
        took = time.perf_counter() - start
        counts = result.counts()
        assert counts["added"] == counts["removed"] == len(range(0, count, 1000))
        print(f"{count:>9,} {len(new) / 1e6:>6.1f} {took:>8.2f} {took / count * 100_000:>13.2f}")
    print(f"{'sections':>9} {'MB':>6} {'diff s':>8} {'printed s':>10} {'s/100k sections':>16}")
    for count in (int(n) for n in args.sections.split(",")):
        body = "\n".join(f"<s{i}>\n- x{i}\n</s{i}>" for i in range(count))
        many = f"<state_snapshot>\n{body}\n</state_snapshot>"
        start = time.perf_counter()
        result = diff(many, snapshot(["- one line"]))
        took = time.perf_counter() - start
        console = Console(file=io.StringIO(), width=80)
        render_diff(console, result)
        printed = time.perf_counter() - start - took
        assert len(result.sections) == count + 1
        per = (took + printed) / count * 1e5
        print(f"{count:>9,} {len(many) / 1e6:>6.1f} {took:>8.2f} {printed:>10.2f} {per:>16.2f}")


if __name__ == "__main__":
    main()
