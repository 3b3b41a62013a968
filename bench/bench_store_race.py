"""Race another writer against applies and reverts, N tries each, with every core kept busy.

    .venv/bin/python bench/bench_store_race.py            # 20 tries of each race, cores busy
    .venv/bin/python bench/bench_store_race.py --tries 5 --quiet

The races (issue 37): Gemini CLI appending to a JSONL recording (its first line at a random step of
the apply or revert, then, one try in two, as fast as it can), a legacy ``session-*.json`` rewritten
whole (temp + rename, or in place), and a writer that opens the recording by name, waits 1-20 ms,
writes one line and closes it, over and over.  Prints, per race, tries / survived / lost (a try is
lost when any message the writer wrote is not in the session afterwards) and how many were refused.
Exit 1 if anything was lost.
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from contextlib import nullcontext
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from inspector.store import StoreError, revert  # noqa: E402
from tests.cpu_load import busy_cores  # noqa: E402
from tests.test_fault_injection import APPENDER, REWRITER, race_once, steps_of  # noqa: E402
from tests.test_store import sample_copy  # noqa: E402
from tests.test_store_late_writer import LateWriter, _apply, missing_lines  # noqa: E402


def _hooked(kind: str, mode: str, tries: int, folder: Path, rng: random.Random) -> tuple[int, int, int]:
    name, writer = ("coding-task.jsonl", APPENDER) if kind == "appender" else ("legacy-pomodoro.json", REWRITER)
    steps = steps_of(mode, name, folder / f"{kind}-{mode}-probe")
    survived = refused = 0
    for index in range(tries):
        outcome, _, missing = race_once(mode, name, writer, index, rng.randrange(len(steps)),
                                        folder / f"{kind}-{mode}-{index}")
        refused += outcome == "refused"
        survived += not missing
    return survived, tries - survived, refused


def _delayed(mode: str, tries: int, folder: Path) -> tuple[int, int, int]:
    survived = refused = 0
    for index in range(tries):
        path = sample_copy(folder / f"delayed-{mode}-{index}", "coding-task.jsonl")
        if mode == "revert":
            _apply(path)
        writer = LateWriter(path, index)
        writer.send("run")
        try:
            _apply(path) if mode == "apply" else revert(path)
        except StoreError:
            refused += 1
        finally:
            count = writer.stop()
        survived += not missing_lines(path, count)
    return survived, tries - survived, refused


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tries", type=int, default=20)
    parser.add_argument("--quiet", action="store_true", help="leave the cores idle")
    parser.add_argument("--seed", type=int, default=37)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    lost_any = False
    with tempfile.TemporaryDirectory(prefix="bench-store-race-") as temp, \
            (nullcontext(0) if args.quiet else busy_cores()) as spinners:
        folder = Path(temp)
        print(f"{'quiet' if args.quiet else f'busy ({spinners} spinning processes)'}; {args.tries} tries each")
        print(f"{'race':<34} {'tries':>5} {'survived':>8} {'lost':>5} {'refused':>7} {'seconds':>8}")
        races = [(f"{kind} during {mode}", kind, mode) for kind in ("appender", "rewriter", "delayed appender")
                 for mode in ("apply", "revert")]
        for label, kind, mode in races:
            began = time.perf_counter()
            if kind == "delayed appender":
                survived, lost, refused = _delayed(mode, args.tries, folder)
            else:
                survived, lost, refused = _hooked(kind, mode, args.tries, folder, rng)
            lost_any = lost_any or bool(lost)
            print(f"{label:<34} {args.tries:>5} {survived:>8} {lost:>5} {refused:>7} "
                  f"{time.perf_counter() - began:>8.1f}", flush=True)
    return 1 if lost_any else 0


if __name__ == "__main__":
    sys.exit(main())
