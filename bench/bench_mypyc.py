"""Does each compiled piece of the core pay?  ``analyze`` timed with the core built several ways.

    python bench/bench_mypyc.py [FILE] [--runs 3] [--leave-one-out] [--variants compiled,pure,...]

Each variant is a copy of ``inspector/`` built in place (``setup.py
build_ext --inplace``, with setup.py's ``COMPILED`` list changed) in a temp
folder, and run as whole processes with ``python -S`` and that folder first
on the path (so no installed or editable build can stand in for a missing
module):

* ``compiled``: setup.py as it is (mypyc over ``COMPILED`` and the C string kernel);
* ``pure``: neither (what ``SESSION_INSPECTOR_PURE=1`` or no compiler installs);
* ``kernel``: the C string kernel only;
* ``mypyc``: mypyc only, no string kernel;
* ``without:<module>``: ``compiled`` less one mypyc module (``--leave-one-out`` adds one per module);
* ``only:<module>+<module>...``: those mypyc modules and the kernel.

Reported per variant: its build time, and the best of ``--runs`` runs (interleaved
across variants, so load from other work hits all alike) of

* the core: ``load`` + ``analyze`` + the ``--json`` rows written (what the
  reference does, plus the rows), wall and CPU (both processes);
* the whole ``analyze --json`` (adds the masking plan and cost), wall;
* with ``--live N``: a live append, the median CPU time of N ``live.extend`` calls on a copy of FILE
  (what the app does with each turn Gemini CLI appends; ``bench/bench_live.py`` times it with
  the app and the watcher).
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
DEFAULT_FILE = BENCH / "out" / "big-session.jsonl"

CORE = """
import os, resource, sys, time
start = time.perf_counter()
import inspector
from inspector.analysis import analyze
from inspector.commands.common import print_json
from inspector.session import load
session = load(sys.argv[1])
result = analyze(session)
sys.stdout = open(os.devnull, "w")
print_json(result.to_json(session.path, session.format, session.session_id, lazy=True))
wall = time.perf_counter() - start
own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
cpu = own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime
sys.stderr.write(f"{wall} {cpu} {inspector.build_info().kind}\\n")
os._exit(0)
"""

# A live append as the app handles it (``bench/bench_live.py``'s core part, shorter): the session
# loaded and analysed, the live state primed, then appends of one turn (three lines, the model
# message written twice) each read with ``live.extend``, the copies made ahead as the app does.
LIVE = """
import os, statistics, sys, time
from inspector import live
from inspector.analysis import analyze
from inspector.session import load
sys.path.insert(0, sys.argv[3])
from bench_live import turn_lines  # after inspector: the variant's package is the one imported
path, appends = sys.argv[1], int(sys.argv[2])
session = load(path)
state = live.start(session, analyze(session))
assert state is not None, "the session cannot be extended"
del session
spans = []
with open(path, "ab") as handle:
    for n in range(appends):
        data = turn_lines(n)
        offset = state.session.size
        live.prepare(state)
        handle.write(data)
        handle.flush()
        started = time.process_time()  # CPU: a busy machine's waits are not the append's cost
        state = live.extend(state, data, offset)
        spans.append(time.process_time() - started)
        assert isinstance(state, live.LiveState), f"append {n} was not extended: {state}"
sys.stderr.write(f"{statistics.median(spans) * 1000}\\n")
os._exit(0)
"""


def compiled_list() -> list[str]:
    tree = ast.parse((REPO / "setup.py").read_text())
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", "") == "COMPILED" for t in node.targets):
            return list(ast.literal_eval(node.value))
    raise SystemExit("setup.py has no COMPILED list")


def build(name: str, folder: Path, mypyc: list[str], kernel: bool) -> float:
    """A copy of the package in ``folder``, built with ``mypyc`` modules and the kernel or not; seconds taken."""
    for item in ("inspector", "setup.py", "pyproject.toml", "README.md"):
        source = REPO / item
        if source.is_dir():
            shutil.copytree(source, folder / item, ignore=shutil.ignore_patterns("*.so", "__pycache__"))
        else:
            shutil.copy2(source, folder / item)
    setup = (folder / "setup.py").read_text()
    setup = re.sub(r"COMPILED = \[.*?\]", f"COMPILED = {mypyc!r}", setup, flags=re.S)
    built = "[*mypycify(COMPILED, opt_level=\"1\", group_name=\"inspector_core\"), KERNEL]"
    assert built in setup, "setup.py's extension list changed: update bench_mypyc.py"
    wanted = [*(["*mypycify(COMPILED, opt_level=\"1\", group_name=\"inspector_core\")"] if mypyc else []),
              *(["KERNEL"] if kernel else [])]
    setup = setup.replace(built, f"[{', '.join(wanted)}]")
    (folder / "setup.py").write_text(setup)
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "setup.py", "-q", "build_ext", "--inplace"], cwd=folder,
                          capture_output=True, text=True, check=False)
    took = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"{name}: build failed\n{done.stderr[-2000:]}")
    return took


def run(folder: Path, args: list[str]) -> tuple[float, float, str]:
    site = dict.fromkeys([sysconfig.get_path("purelib"), sysconfig.get_path("platlib")])
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(folder), *site]))
    started = time.perf_counter()
    process = subprocess.Popen([sys.executable, "-S", *args], cwd=folder, env=env, stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE)
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - started
    stderr = process.stderr.read().decode() if process.stderr else ""
    if status != 0:
        raise SystemExit(f"{folder}: {' '.join(args)} failed: {stderr[-1000:]}")
    return wall, usage.ru_utime + usage.ru_stime, stderr.strip()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("file", nargs="?", type=Path, default=DEFAULT_FILE)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--variants", default="compiled,pure,kernel,mypyc")
    parser.add_argument("--leave-one-out", action="store_true")
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    parser.add_argument("--core-only", action="store_true", help="skip the whole analyze --json runs")
    parser.add_argument("--live", type=int, default=0, metavar="N", help="also time N live appends a run")
    args = parser.parse_args()
    args.file = args.file.resolve()
    if not args.file.is_file():
        print(f"{args.file} not found: run python bench/make_big_session.py first", file=sys.stderr)
        return 2
    modules = compiled_list()
    names = [v for v in args.variants.split(",") if v]
    if args.leave_one_out:
        names += [f"without:{m}" for m in modules]
    plans: dict[str, tuple[list[str], bool]] = {}
    for name in names:
        if name.startswith("without:"):
            plans[name] = ([m for m in modules if m != name.split(":", 1)[1]], True)
        elif name.startswith("only:"):
            plans[name] = (name.split(":", 1)[1].split("+"), True)
        else:
            plans[name] = {"compiled": (modules, True), "pure": ([], False), "kernel": ([], True),
                           "mypyc": (modules, False)}[name]
    root = Path(tempfile.mkdtemp(prefix="bench-mypyc-"))
    figures: dict[str, dict[str, float | str]] = {}
    try:
        for name, (mypyc, kernel) in plans.items():
            folder = root / f"v{list(plans).index(name)}"
            folder.mkdir()
            figures[name] = {"build_s": build(name, folder, mypyc, kernel)}
            print(f"built {name} in {figures[name]['build_s']:.0f} s", flush=True)
        growing = root / "live-session.jsonl"
        for _ in range(args.runs):
            for name in plans:
                folder = root / f"v{list(plans).index(name)}"
                _, _, said = run(folder, ["-c", CORE, str(args.file)])
                wall, cpu, build_info = said.split(" ", 2)
                whole = 0.0 if args.core_only else run(folder, ["-m", "inspector", "analyze", "--json",
                                                                  str(args.file)])[0]
                append_ms = 0.0
                if args.live:
                    shutil.copyfile(args.file, growing)  # each run appends to the same file as it was
                    append_ms = float(run(folder, ["-c", LIVE, str(growing), str(args.live), str(BENCH)])[2])
                row = figures[name]
                row["build_info"] = build_info
                for key, value in (("core_wall_s", float(wall)), ("core_cpu_s", float(cpu)), ("whole_wall_s", whole),
                                   ("live_append_ms", append_ms)):
                    row[key] = min(float(row.get(key, value)), value)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    size = args.file.stat().st_size / 1e6
    print(f"\n{args.file.name} ({size:.0f} MB), best of {args.runs}; load average {os.getloadavg()[0]:.1f}")
    print(f"{'variant':34s} {'build':>7s} {'core wall':>10s} {'core cpu':>9s} {'analyze --json':>15s} "
          f"{'append cpu':>12s}  build_info")
    for name, row in figures.items():
        print(f"{name:34s} {row['build_s']:6.0f}s {row['core_wall_s']:9.2f}s {row['core_cpu_s']:8.2f}s "
              f"{row['whole_wall_s']:14.2f}s {row['live_append_ms']:10.1f}ms  {row['build_info']}")
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
