"""Snapshot quality, measured independently of the summarisers, per session and provider.

    .venv/bin/python bench/snapshot_quality.py                      # offline, every session
    .venv/bin/python bench/snapshot_quality.py --provider gemini    # your key or Vertex AI (sends the sessions!)
    .venv/bin/python bench/snapshot_quality.py --provider gemini --base-url http://127.0.0.1:8080
    .venv/bin/python bench/snapshot_quality.py FILE...              # only these files

Sessions: ``sample_sessions/``, the shared real and Gemini-CLI-written
recordings when present (``../shared/real-sessions``,
``../shared/gemini-cli-sessions``), and planted-fact sessions generated into
``bench/out/planted/`` (their answers are known, so the fact extractor is
checked too: column ``ext``, facts it missed or made up, must be 0).

Columns: recall per kind of fact (path, command, error, constraint, step,
previous; "-" where the session has none), ``p+c`` (paths and commands with
their outcome: target 0.95), ``false`` (clauses the history contradicts:
target 0), ``size`` (snapshot tokens as a share of the tokens replaced:
target 15%).  Nothing is written except the planted sessions.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from inspector.compaction.summarisers import choose_provider, pick_summariser  # noqa: E402
from inspector.compaction.summarisers.offline import FLOOR_TOKENS, RATIO  # noqa: E402
from inspector.quality.evaluate import Row, evaluate  # noqa: E402
from inspector.quality.ground import KINDS  # noqa: E402
from inspector.quality.planted import Planted, planted_sessions  # noqa: E402

SHARED = ROOT.parent / "shared" if (ROOT.parent / "shared").is_dir() else ROOT.parent.parent / "shared"


def session_files() -> list[Path]:
    found = sorted(p for p in (ROOT / "sample_sessions").iterdir() if p.suffix in (".json", ".jsonl"))
    for folder in (SHARED / "gemini-cli-sessions", SHARED / "real-sessions"):
        if folder.is_dir():
            found.extend(sorted(p for p in folder.iterdir() if p.suffix in (".json", ".jsonl")))
    return found


def planted_files(count: int) -> list[tuple[Path, list[Planted]]]:
    out = ROOT / "bench" / "out" / "planted"
    return [(s.write(out), s.answers) for s in planted_sessions(count)]


def _cell(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def table(rows: list[Row]) -> str:
    head = f"{'session':44} {'provider':8} " + " ".join(f"{k[:5]:>5}" for k in KINDS) + \
        f" {'p+c':>5} {'false':>5} {'size':>6} {'ext':>4} {'secs':>6}"
    lines = [head, "-" * len(head)]
    for row in rows:
        name = row.session if len(row.session) <= 44 else row.session[:20] + "…" + row.session[-23:]
        if not row.replaced_tokens:
            lines.append(f"{name:44} {row.provider:8} {row.status}: {row.message}")
            continue
        size = f"{row.size_share:.1%}" if row.size_share is not None else "-"
        ext = "-" if row.extractor_misses is None else str(row.extractor_misses)
        lines.append(f"{name:44} {row.provider:8} " + " ".join(f"{_cell(row.recall_of(k)):>5}" for k in KINDS)
                     + f" {_cell(row.target_recall):>5} {len(row.false_claims):>5} {size:>6} {ext:>4}"
                     f" {row.seconds:>6.2f}")
    return "\n".join(lines)


async def run(args: argparse.Namespace) -> list[Row]:
    jobs: list[tuple[Path, list[Planted] | None]] = []
    if args.files:
        jobs = [(Path(f), None) for f in args.files]
    else:
        jobs = [(p, None) for p in session_files()] + [(p, a) for p, a in planted_files(args.planted)]
    rows = []
    for path, answers in jobs:
        summariser = pick_summariser(args.provider, base_url=args.base_url)
        try:
            rows.append(await evaluate(path, summariser, planted=answers))
        except Exception as exc:  # a file that cannot be read is a row, not the end of the run
            rows.append(Row(path.name, str(summariser.name), "ERROR", message=f"{type(exc).__name__}: {exc}"))
    return rows


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("files", nargs="*")
    parser.add_argument("--provider", choices=("offline", "gemini", "auto"), default="offline")
    parser.add_argument("--base-url", help="send Gemini requests here (a proxy, a local server)")
    parser.add_argument("--planted", type=int, default=6, help="how many planted-fact sessions to generate")
    parser.add_argument("--claims", action="store_true", help="list every false claim")
    args = parser.parse_args(argv)
    choice = choose_provider(args.provider)
    print(f"provider: {choice.provider} ({choice.reason})")
    rows = asyncio.run(run(args))
    print(table(rows))
    for row in rows:
        for claim in row.false_claims if args.claims else ():
            print(f"{row.session} [{row.provider}] {claim.section}: {claim.reason}\n    {claim.line[:200]}")
    graded = [r for r in rows if r.replaced_tokens]
    below = [r.session for r in graded if (r.target_recall or 1.0) < 0.95]
    over = [r for r in graded if (r.size_share or 0) > 0.15]
    floor = [r for r in over if r.replaced_tokens * RATIO < FLOOR_TOKENS]
    carried = [r for r in over if r not in floor and r.recall_of("previous") is not None]
    print(f"{len(graded):,} sessions graded; false claims: {sum(len(r.false_claims) for r in graded):,}; "
          f"p+c recall under 0.95: {len(below):,}; snapshot over 15%: {len(over):,} "
          f"({len(floor):,} replace under {FLOOR_TOKENS / RATIO:,.0f} tokens, where the {FLOOR_TOKENS}-token "
          f"floor applies; {len(carried):,} carry an earlier snapshot whole; "
          f"{len(over) - len(floor) - len(carried):,} other)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
