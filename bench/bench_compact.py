"""How long an offline compaction takes beside ``analyze``, stage by stage, on a big session.

    .venv/bin/python bench/bench_compact.py                       # bench/out/big-session.jsonl
    .venv/bin/python bench/bench_compact.py FILE [--strategy staged]

Prints the time to load and analyse the file (what ``analyze`` does), then
the offline compaction ``compact --force`` and the app run (``run_request``),
split into its stages as the ``Reporter`` hears them, and the ratio of the
two.  Issue 14.6's goal: the compaction within 3x ``analyze``.  Make the big
session first with ``bench/make_big_session.py``.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from inspector import build_info  # noqa: E402
from inspector.analysis import analyze  # noqa: E402
from inspector.compaction.compress import CompressionResult  # noqa: E402
from inspector.compaction.request import compaction_context, compaction_request  # noqa: E402
from inspector.compaction.strategies import run_request  # noqa: E402
from inspector.compaction.summarisers.offline import OfflineSummariser  # noqa: E402
from inspector.progress import Progress, Reporter  # noqa: E402
from inspector.session import load  # noqa: E402

SUMMARISER_STAGES = ("summary draft", "offline digest", "verification")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("file", nargs="?", default=str(ROOT / "bench" / "out" / "big-session.jsonl"))
    parser.add_argument("--strategy", choices=("reference", "staged"), default="reference")
    parser.add_argument("--no-gc", action="store_true", help="hold the garbage collector during the compaction")
    args = parser.parse_args(argv)
    path = Path(args.file)
    if not path.is_file():
        print(f"{path}: missing; make it with bench/make_big_session.py", file=sys.stderr)
        return 2
    print(f"{path.name}: {path.stat().st_size / 1e6:,.1f} MB, build {build_info()}")
    started = time.perf_counter()
    session = load(path)
    loaded = time.perf_counter()
    analysis = analyze(session)
    analysed = time.perf_counter()
    print(f"analyze: {analysed - started:.2f} s (load {loaded - started:.2f}, figures {analysed - loaded:.2f}); "
          f"{len(analysis.turns):,} turns")

    marks: list[tuple[float, str]] = []

    def heard(progress: Progress) -> None:
        if not marks or marks[-1][1] != progress.stage:
            marks.append((time.perf_counter(), progress.stage))

    begun = time.perf_counter()
    context = compaction_context(session, analysis)
    marks.append((time.perf_counter(), "run_request"))
    request = compaction_request(strategy=args.strategy, force=True)
    if args.no_gc:
        gc.disable()
    returned: list[float] = []

    async def timed() -> CompressionResult:
        out = await run_request(request, context, analysis.turns, OfflineSummariser(), Reporter(heard))
        returned.append(time.perf_counter())
        return out

    result = asyncio.run(timed())
    ended = time.perf_counter()
    marks.append((returned[0], "(after run_request)"))
    print(f"context (tool statuses): {marks[0][0] - begun:.2f} s")
    summariser = 0.0
    for (at, stage), (following, _) in zip(marks, [*marks[1:], (ended, "")], strict=True):
        print(f"  {stage:22} {following - at:6.2f} s")
        if stage in SUMMARISER_STAGES:
            summariser += following - at
    analyse = analysed - started
    print(f"the offline summariser (draft, digest, verification): {summariser:.2f} s, "
          f"{summariser / analyse:.1f}x analyze")
    took = ended - begun
    print(f"the whole compaction ({args.strategy}, offline): {took:.2f} s, {result.status.value}; "
          f"{took / analyse:.1f}x analyze (goal: at most 3x)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
