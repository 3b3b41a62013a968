"""Time ``session-inspector analyze --json`` against Gemini CLI's own code doing the same work.

    python bench/make_big_session.py          # once: bench/out/big-session.jsonl (~107 MB)
    python bench/bench_analyze.py [FILE] [--runs 3]
    python bench/bench_analyze.py [FILE] --runs 5 --build old=/tmp/old/bin/session-inspector --build new=...

Each runs as a whole process with stdout to /dev/null, in ``--runs`` rounds
that run each command once, in a rotating order (plus one more run each that
samples the process tree's memory).  On a shared machine whose speed drifts,
a ratio of runs made in the same round is fairer than one of two best times
taken minutes apart; both are reported.

* project:   ``python -m inspector analyze --json FILE``
* project core: the same read, analysis and JSON rows without the masking
  plan and cost, which ``analyze --json`` also reports (the work the
  reference does, and more: usage, kinds, candidates, the tool-output budget)
* reference: ``node bench/ref_analyze.mjs`` (loadConversationRecord,
  convertSessionToClientHistory, per-turn estimateTokenCountSync and JSON
  lengths, the total, findCompressSplitPoint, a JSON report)

Reported: wall time (best and median) and its ratio, and peak memory two ways: the largest
single process (``ru_maxrss`` from ``wait4``) and the peak of the summed RSS
of the whole process tree, sampled every 5 ms from /proc (the project reads a
big file in two processes at once; their shared pages are counted twice).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
DEFAULT_FILE = BENCH / "out" / "big-session.jsonl"
sys.path.insert(0, str(REPO))

CORE = """
import os, sys
from inspector.analysis import analyze
from inspector.commands.common import print_json
from inspector.session import load
session = load(sys.argv[1])
result = analyze(session)
print_json(result.to_json(session.path, session.format, session.session_id, lazy=True))
sys.stdout.flush()
os._exit(0)
"""


def _tree_rss_kb(root: int) -> int:
    """Summed VmRSS of ``root`` and its descendants (Linux /proc)."""
    children: dict[int, list[int]] = {}
    rss: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/status") as handle:
                fields = dict(line.split(":", 1) for line in handle if ":" in line)
        except OSError:
            continue
        pid = int(entry)
        children.setdefault(int(fields.get("PPid", "0").strip() or 0), []).append(pid)
        rss[pid] = int(fields.get("VmRSS", "0 kB").split()[0]) if "VmRSS" in fields else 0
    total, stack = 0, [root]
    while stack:
        pid = stack.pop()
        total += rss.get(pid, 0)
        stack.extend(children.get(pid, []))
    return total


def run_once(command: list[str], sample_tree: bool = False) -> tuple[float, int, int]:
    """(wall seconds, max single-process RSS MB, peak tree RSS MB or 0) of one run.

    The process tree is sampled only when asked: the sampler reads /proc every
    5 ms and, on a 2-core machine, takes CPU from the two processes the
    project reads with, so timed runs do not sample.
    """
    start = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    peak_tree = 0
    done = threading.Event()

    def sample() -> None:
        nonlocal peak_tree
        while not done.is_set():
            peak_tree = max(peak_tree, _tree_rss_kb(process.pid))
            done.wait(0.005)

    sampler = threading.Thread(target=sample, daemon=True)
    if sample_tree:
        sampler.start()
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - start
    done.set()
    if sample_tree:
        sampler.join()
    stderr = process.stderr.read().decode(errors="replace") if process.stderr else ""
    if status != 0:
        raise SystemExit(f"{command[0]} failed ({status}): {stderr[-500:]}")
    # ru_maxrss of the waited child; a grandchild (the project's reading process) is in RUSAGE_CHILDREN of it
    return wall, usage.ru_maxrss // 1024, peak_tree // 1024


def interleaved(commands: dict[str, list[str]], runs: int) -> dict[str, list[float]]:
    """Wall times of ``runs`` rounds, each running every command once (in a rotating order), so
    that a ratio compares runs made under the same conditions of a shared, noisy machine."""
    names = list(commands)
    times: dict[str, list[float]] = {name: [] for name in names}
    for k in range(runs):
        for name in names[k % len(names):] + names[:k % len(names)]:
            times[name].append(run_once(commands[name])[0])
    return times


def wall_and_cpu(command: list[str], env: dict[str, str] | None = None) -> tuple[float, float, float]:
    """(wall seconds, CPU seconds, user CPU seconds) of one run: user and system time of the process
    and of the processes it waited for (the project's second reading process), and the user time alone
    (on a shared machine the system time varies with the others' page faults and I/O)."""
    start = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    _, status, usage = os.wait4(process.pid, 0)
    if status != 0:
        raise SystemExit(f"{command[0]} failed ({status})")
    return time.perf_counter() - start, usage.ru_utime + usage.ru_stime, usage.ru_utime


def compare_builds(builds: list[str], file: Path, runs: int) -> int:
    """``analyze --json FILE`` of installed builds (``NAME=EXECUTABLE``: a ``session-inspector``),
    in ``runs`` rounds that run each once in a rotating order; median and range of wall, CPU and user CPU,
    and of each build's ratio to each one named before it, round by round."""
    commands = {}
    for build in builds:
        name, _, executable = build.partition("=")
        if not executable:
            raise SystemExit(f"--build {build!r}: expected NAME=EXECUTABLE")
        commands[name] = [executable, "analyze", "--json", str(file)]
    found: dict[str, list[tuple[float, float, float]]] = {name: [] for name in commands}
    names = list(commands)
    # Each build keeps its own user cache, as an installation does: the price table's cache is keyed by
    # the installed table's path, so builds sharing one would each read the table afresh at every run
    # (importing genai-prices, ~0.15 s). One untimed run each fills it.
    with tempfile.TemporaryDirectory() as caches:
        envs = {name: {**os.environ, "XDG_CACHE_HOME": os.path.join(caches, name)} for name in names}
        for name in names:
            wall_and_cpu(commands[name], envs[name])
        for k in range(runs):
            for name in names[k % len(names):] + names[:k % len(names)]:
                found[name].append(wall_and_cpu(commands[name], envs[name]))
    print(f"file: {file} ({file.stat().st_size / 1e6:.1f} MB), {runs} interleaved rounds: median [range]")
    width = max(12, *(len(name) for name in names))
    for name, times in found.items():
        walls, cpus, users = [t[0] for t in times], [t[1] for t in times], [t[2] for t in times]
        print(f"{name:>{width}}: wall {statistics.median(walls):5.2f} s [{min(walls):.2f}-{max(walls):.2f}]   "
              f"CPU {statistics.median(cpus):5.2f} s [{min(cpus):.2f}-{max(cpus):.2f}]   "
              f"user {statistics.median(users):5.2f} s [{min(users):.2f}-{max(users):.2f}]")
    for k, name in enumerate(names):  # each against every build before it, round by round
        for earlier in names[:k]:
            walls = [mine[0] / theirs[0] for mine, theirs in zip(found[name], found[earlier], strict=True)]
            cpus = [mine[1] / theirs[1] for mine, theirs in zip(found[name], found[earlier], strict=True)]
            print(f"{name:>{width}} / {earlier}: wall {statistics.median(walls):.3f}x "
                  f"[{min(walls):.2f}-{max(walls):.2f}]   CPU {statistics.median(cpus):.3f}x "
                  f"[{min(cpus):.2f}-{max(cpus):.2f}]   (round by round)")
    return 0


def memory(command: list[str]) -> tuple[int, int]:
    """(largest single process, peak of the process tree) in MB, from one sampled run."""
    _, largest, tree = run_once(command, sample_tree=True)
    return largest, tree


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("file", nargs="?", type=Path, default=DEFAULT_FILE)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--build", action="append", default=[], metavar="NAME=EXECUTABLE",
                        help="instead: time these installed builds' analyze --json against each other "
                             "(e.g. old=/tmp/old/bin/session-inspector); repeat for each")
    args = parser.parse_args()
    if not args.file.is_file():
        print(f"{args.file} not found: run python bench/make_big_session.py first", file=sys.stderr)
        return 2
    if args.build:
        return compare_builds(args.build, args.file, args.runs)
    from tests.reference.install import Missing, reference_src

    dist = reference_src()
    size_mb = args.file.stat().st_size / 1e6
    commands = {
        "project": [sys.executable, "-m", "inspector", "analyze", "--json", str(args.file)],
        "core": [sys.executable, "-c", CORE, str(args.file)],
    }
    if not isinstance(dist, Missing):
        commands["reference"] = ["node", str(BENCH / "ref_analyze.mjs"), str(dist), str(args.file)]
    times = interleaved(commands, args.runs)
    print(f"file: {args.file} ({size_mb:.1f} MB), {args.runs} interleaved rounds: best (median)")
    labels = {"project": "project:  ", "core": "  core:   ", "reference": "reference:"}
    for name, command in commands.items():
        largest, tree = memory(command)
        note = "   (without the masking plan and cost)" if name == "core" else ""
        print(f"{labels[name]} {min(times[name]):6.2f} s ({statistics.median(times[name]):.2f} s)   peak RSS "
              f"{largest:5d} MB (largest process), {tree:5d} MB (process tree){note}")
        if name != "reference":
            print(f"{'':12}memory / file size: {largest / size_mb:.2f}x largest process, {tree / size_mb:.2f}x "
                  "process tree (target <= 2.5x)")
    if isinstance(dist, Missing):
        print(f"reference: skipped ({dist.reason})")
        return 0
    for name in ("project", "core"):
        ratios = [mine / theirs for mine, theirs in zip(times[name], times["reference"], strict=True)]
        print(f"wall time ratio {name}/reference: best {min(times[name]) / min(times['reference']):.2f}x; "
              f"per round {statistics.median(ratios):.2f}x median, {min(ratios):.2f}-{max(ratios):.2f}x "
              "(target <= 0.35x)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
