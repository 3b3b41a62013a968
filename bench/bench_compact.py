"""How long an offline compaction takes beside ``analyze``, stage by stage, on a big session.

    .venv/bin/python bench/bench_compact.py                       # bench/out/big-session.jsonl
    .venv/bin/python bench/bench_compact.py FILE [--strategy staged]
    .venv/bin/python bench/bench_compact.py --repeat 5            # five fresh processes; the median run
    .venv/bin/python bench/bench_compact.py --serial              # one process throughout, as in the app

Prints the time to load and analyse the file (what ``analyze`` does), then
the offline compaction ``compact --force`` and the app run (``run_request``,
from the loaded analysis to the result with its fact check), split into its
stages as the ``Reporter`` hears them, and the ratio of the two.  Issue
14.6's goal: the compaction within 3x ``analyze``.  ``--serial`` sets
``SESSION_INSPECTOR_SERIAL=1``: no second process, neither for reading the
file nor for the fact check, which is how the app (a threaded process)
runs both.  Make the big session first with ``bench/make_big_session.py``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from inspector import build_info  # noqa: E402
from inspector.analysis import analyze  # noqa: E402
from inspector.compaction.compress import CompressionResult  # noqa: E402
from inspector.compaction.request import CompactionRequest, compaction_context  # noqa: E402
from inspector.compaction.strategies import run_request  # noqa: E402
from inspector.compaction.summarisers.offline import OfflineSummariser  # noqa: E402
from inspector.progress import Progress, Reporter  # noqa: E402
from inspector.session import load  # noqa: E402

SUMMARISER_STAGES = ("summary draft", "offline digest", "verification")


def measure(path: Path, strategy: str) -> dict[str, Any]:
    """One run: analyze, then the compaction; wall times in seconds, and the stages in order."""
    started = time.perf_counter()
    session = load(path)
    loaded = time.perf_counter()
    analysis = analyze(session)
    analysed = time.perf_counter()
    marks: list[tuple[float, str]] = []

    def heard(progress: Progress) -> None:
        if not marks or marks[-1][1] != progress.stage:
            marks.append((time.perf_counter(), progress.stage))

    begun = time.perf_counter()
    cpu = time.process_time()
    context = compaction_context(session, analysis)
    marks.append((time.perf_counter(), "context"))
    request = CompactionRequest(strategy=strategy, force=True)

    async def timed() -> CompressionResult:
        out = await run_request(request, context, analysis.turns, OfflineSummariser(), Reporter(heard))
        marks.append((time.perf_counter(), "(returning)"))
        return out

    result = asyncio.run(timed())
    ended = time.perf_counter()
    children = os.times()
    stages = [(stage, following - at) for (at, stage), (following, _)
              in zip(marks, [*marks[1:], (ended, "")], strict=True)]
    return {
        "analyze": analysed - started, "load": loaded - started, "turns": len(analysis.turns),
        "stages": stages, "compaction": ended - begun, "cpu": time.process_time() - cpu,
        "children_cpu": children.children_user + children.children_system, "status": result.status.value,
        "snapshot_tokens": result.facts.snapshot_tokens if result.facts else 0,
    }


def show(run: dict[str, Any], strategy: str) -> None:
    analyse = run["analyze"]
    print(f"analyze: {analyse:.2f} s (load {run['load']:.2f}); {run['turns']:,} turns")
    summariser = 0.0
    for stage, seconds in run["stages"]:
        print(f"  {stage:22} {seconds:6.2f} s")
        if stage in SUMMARISER_STAGES:
            summariser += seconds
    print(f"the offline summariser (draft, digest, verification): {summariser:.2f} s, "
          f"{summariser / analyse:.1f}x analyze")
    took = run["compaction"]
    print(f"the whole compaction ({strategy}, offline): {took:.2f} s ({run['cpu']:.2f} s CPU here), "
          f"{run['status']}; {took / analyse:.1f}x analyze (goal: at most 3x)")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("file", nargs="?", default=str(ROOT / "bench" / "out" / "big-session.jsonl"))
    parser.add_argument("--strategy", choices=("reference", "staged"), default="reference")
    parser.add_argument("--repeat", type=int, default=1, help="fresh processes to run (the median run is shown)")
    parser.add_argument("--serial", action="store_true", help="one process throughout (SESSION_INSPECTOR_SERIAL=1)")
    parser.add_argument("--json", action="store_true", help=argparse.SUPPRESS)  # one run, as JSON (for --repeat)
    args = parser.parse_args(argv)
    path = Path(args.file)
    if not path.is_file():
        print(f"{path}: missing; make it with bench/make_big_session.py", file=sys.stderr)
        return 2
    if args.serial:
        os.environ["SESSION_INSPECTOR_SERIAL"] = "1"
    if args.json:
        print(json.dumps(measure(path, args.strategy)))
        return 0
    mode = "one process (SESSION_INSPECTOR_SERIAL=1)" if args.serial else "second process allowed"
    print(f"{path.name}: {path.stat().st_size / 1e6:,.1f} MB, build {build_info()}, {mode}, "
          f"load average {os.getloadavg()[0]:.2f}")
    if args.repeat <= 1:
        show(measure(path, args.strategy), args.strategy)
        return 0
    runs = []
    for _ in range(args.repeat):
        out = subprocess.run([sys.executable, __file__, str(path), "--strategy", args.strategy, "--json"],
                             check=True, capture_output=True, text=True, env=os.environ)
        runs.append(json.loads(out.stdout))
        run = runs[-1]
        print(f"analyze {run['analyze']:.2f} s, compaction {run['compaction']:.2f} s: "
              f"{run['compaction'] / run['analyze']:.2f}x")
    ordered = sorted(runs, key=lambda r: r["compaction"] / r["analyze"])
    print(f"the median run ({min(r['analyze'] for r in runs):.2f} s the fastest analyze, "
          f"{min(r['compaction'] for r in runs):.2f} s the fastest compaction of all):")
    show(ordered[len(ordered) // 2], args.strategy)
    ratios = [r["compaction"] / r["analyze"] for r in ordered]
    print(f"ratio per run: {', '.join(f'{x:.2f}' for x in ratios)}; median {statistics.median(ratios):.2f}x; "
          f"load average now {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
