"""The offline summariser on every sample session: size, sections and fact recall.

    .venv/bin/python bench/offline_recall.py [FILES...]   (default: sample_sessions/*)

For each session it runs ``compress(force=True)`` with the offline summariser
and prints: turns summarised, tokens replaced (estimate of the summarised
part), snapshot tokens, their ratio (target <= 15%, or the small floor that
fits seven sections), sections present, fact recall of the draft and of the
final snapshot, and the time taken.
"""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path

from inspector.compaction import facts as fx
from inspector.compaction import snapshot as snap
from inspector.compaction.compress import compress_session
from inspector.compaction.prompts import SECTIONS
from inspector.compaction.summarisers.offline import FLOOR_TOKENS, OfflineSummariser
from inspector.session import SessionError, history, load
from inspector.tokens import estimate_contents, text_quarters

ROOT = Path(__file__).resolve().parent.parent


def session_files(args: list[str]) -> list[Path]:
    if args:
        return [Path(a) for a in args]
    return sorted(p for p in (ROOT / "sample_sessions").iterdir() if p.suffix in (".json", ".jsonl"))


def measure(path: Path) -> dict[str, object] | None:
    try:
        session = load(path)
    except SessionError as exc:
        print(f"skip {exc}", file=sys.stderr)
        return None
    started = time.perf_counter()
    result = asyncio.run(compress_session(session, OfflineSummariser(), force=True))
    took = time.perf_counter() - started
    if not result.snapshot or result.split_point is None:
        return {"file": path.name, "status": result.status.value}
    contents = [t.content for t in history(session)][: result.split_point]
    replaced = estimate_contents(contents)
    size = text_quarters(result.snapshot) // 4
    draft_recall = fx.report(contents, result.draft_snapshot or "").recall
    parsed = snap.parse(result.snapshot)
    return {
        "file": path.name,
        "status": result.status.value,
        "turns": result.split_point,
        "replaced": replaced,
        "snapshot": size,
        "ratio": size / replaced if replaced else 0.0,
        "floor": size <= FLOOR_TOKENS or replaced * 0.15 < FLOOR_TOKENS,
        "sections": sum(1 for name in SECTIONS if parsed.get(name) is not None),
        "facts": result.facts.total if result.facts else 0,
        "draft_recall": draft_recall,
        "recall": result.facts.recall if result.facts else 1.0,
        "seconds": took,
    }


def main(argv: list[str]) -> int:
    rows = [r for r in (measure(p) for p in session_files(argv)) if r]
    header = f"{'session':38} {'status':12} {'turns':>5} {'replaced':>9} {'snapshot':>8} {'ratio':>6} " \
             f"{'sect':>4} {'facts':>5} {'draft':>6} {'final':>6} {'secs':>5}"
    print(header)
    print("-" * len(header))
    for r in rows:
        if "replaced" not in r:
            print(f"{r['file'][:38]:38} {r['status'][:12]:12}")
            continue
        ratio = f"{r['ratio']:.1%}" + ("*" if r["floor"] else " ")
        print(f"{r['file'][:38]:38} {r['status'][:12]:12} {r['turns']:>5} {r['replaced']:>9,} {r['snapshot']:>8,} "
              f"{ratio:>6} {r['sections']:>4} {r['facts']:>5} {r['draft_recall']:>6.1%} {r['recall']:>6.1%} "
              f"{r['seconds']:>5.2f}")
    print(f"* the snapshot is at the floor of {FLOOR_TOKENS} tokens (15% of what it replaces is less than that)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
