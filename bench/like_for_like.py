"""Is the code slower than a base commit at the same work?  ``analyze --json`` of three builds.

    python bench/make_big_session.py                  # once: bench/out/big-session.jsonl
    python bench/like_for_like.py [FILE] [--base f077596] [--runs 8] [--into DIR]

Three copies are taken from this repository's commits (``git archive``) and each is
installed the way a user installs it (``pip install``: compiled where a compiler is
found), into its own folder under ``--into`` (default: a temporary one, removed after):

* ``base``: the base commit (issue 38 asks that its figures be no worse than ``f077596``'s);
* ``head``: HEAD, as it is;
* ``head-same-work``: HEAD without the work issue 40 added to every read and report, so
  that it does what the base did: the reader's per-part spread is not measured (every
  turn's ``spread`` left empty) and the report has no ``breakdown`` section.

Then ``bench_analyze.py --build`` runs the three in interleaved rounds (each with its own
user cache) and prints their wall and CPU times.  ``head`` against ``base`` is the figure
as a user meets it; ``head-same-work`` against ``base`` is what the code costs for the
same report; ``head`` against ``head-same-work`` is what the breakdown costs.

If HEAD's code no longer holds the lines this takes out, it says so and stops rather than
measure something else.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
DEFAULT_FILE = BENCH / "out" / "big-session.jsonl"


@dataclass(frozen=True)
class Removal:
    """One piece of issue 40's work taken out of a copy: ``text`` in ``path`` becomes ``instead``."""

    path: str
    text: str
    instead: str


SAME_WORK = (
    Removal("inspector/session/figures.py", "        turn_spread(parts, role, sizes, calls, answers, len(outputs)),\n",
            "        (),\n"),
    Removal("inspector/commands/analyze.py", '    data["breakdown"] = session_breakdown(session, result).to_json()\n',
            ""),
)


def _run(command: list[str], cwd: Path | None = None) -> None:
    done = subprocess.run(command, cwd=cwd, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed:\n{done.stdout[-2000:]}{done.stderr[-2000:]}")


def install(revision: str, folder: Path, removals: tuple[Removal, ...] = ()) -> Path:
    """``revision``'s files in ``folder``, less ``removals``, installed in ``folder/.venv``; its executable."""
    folder.mkdir(parents=True)
    archive = subprocess.run(["git", "-C", str(REPO), "archive", revision], capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(folder)], input=archive, check=True)
    for removal in removals:
        source = folder / removal.path
        text = source.read_text(encoding="utf-8")
        if text.count(removal.text) != 1:
            raise SystemExit(f"{removal.path} at {revision} no longer holds {removal.text.strip()!r} once: "
                             "this bench needs updating")
        source.write_text(text.replace(removal.text, removal.instead), encoding="utf-8")
    _run([sys.executable, "-m", "venv", str(folder / ".venv")])
    _run([str(folder / ".venv" / "bin" / "pip"), "install", "-q", str(folder)])
    return folder / ".venv" / "bin" / "session-inspector"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("file", nargs="?", type=Path, default=DEFAULT_FILE)
    parser.add_argument("--base", default="f077596")
    parser.add_argument("--runs", type=int, default=8)
    parser.add_argument("--into", type=Path, help="build here and keep the builds (default: a temporary folder)")
    args = parser.parse_args()
    if not args.file.is_file():
        print(f"{args.file} not found: run python bench/make_big_session.py first", file=sys.stderr)
        return 2
    if args.into is not None and args.into.exists() and any(args.into.iterdir()):
        print(f"{args.into} is not empty: give a new or empty folder", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as scratch:
        root = args.into or Path(scratch)
        builds = {
            "base": install(args.base, root / "base"),
            "head": install("HEAD", root / "head"),
            "head-same-work": install("HEAD", root / "head-same-work", SAME_WORK),
        }
        print(f"built in {root}: {args.base} as base, HEAD as head and head-same-work", flush=True)
        command = [sys.executable, str(BENCH / "bench_analyze.py"), str(args.file), "--runs", str(args.runs)]
        for name, executable in builds.items():
            command += ["--build", f"{name}={executable}"]
        return subprocess.run(command, check=False).returncode


if __name__ == "__main__":
    raise SystemExit(main())
