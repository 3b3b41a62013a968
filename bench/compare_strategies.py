"""Both strategies on every sample session (and the shared real ones): tokens after and fact recall.

    .venv/bin/python bench/compare_strategies.py [FILES...]

Offline summariser, forced (like /compress), the reference's split; the
staged strategy aims at its default target (30% of the size, at most a
quarter of the window).  Recall: the facts of the whole history found in the
whole new history, measured alike for both.  Prints a Markdown table.
"""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from inspector.analysis import analyze  # noqa: E402
from inspector.compaction.request import CompactionRequest, compaction_context  # noqa: E402
from inspector.compaction.strategies import compare  # noqa: E402
from inspector.compaction.summarisers.offline import OfflineSummariser  # noqa: E402
from inspector.session import SessionError, load  # noqa: E402


def files() -> list[Path]:
    if len(sys.argv) > 1:
        return [Path(a) for a in sys.argv[1:]]
    found = sorted(p for p in (ROOT / "sample_sessions").glob("*.json*"))
    real = ROOT.parent / "shared" / "real-sessions"
    return found + sorted(real.glob("*.json")) if real.is_dir() else found


def cell(result, recall) -> str:  # type: ignore[no-untyped-def]
    if result.new_history is None:
        return f"{result.status.value.replace('COMPRESSION_FAILED_', '')} | -"
    return f"{result.new_token_count:,} | {recall:.1%}"


def main() -> None:
    print("| session | turns | tokens before | reference: after | recall | staged: after | recall | staged stages |")
    print("|---|---|---|---|---|---|---|---|")
    for path in files():
        try:
            session = load(path)
        except SessionError as exc:
            print(f"| {path.name} | {exc} |")
            continue
        analysis = analyze(session)
        turns = analysis.turns
        started = time.monotonic()
        comparison = asyncio.run(compare(CompactionRequest(force=True, compare=True),
                                         compaction_context(session, analysis), turns,
                                         OfflineSummariser(model=session.model)))
        ref, staged = comparison.results["reference"], comparison.results["staged"]
        stages = ", ".join(s.name for s in staged.stages or [] if s.applied) or "-"
        name = path.name if len(path.name) < 48 else path.name[:22] + "…" + path.name[-24:]
        print(f"| {name} | {len(turns):,} | {ref.original_token_count:,} | {cell(ref, comparison.recall['reference'])}"
              f" | {cell(staged, comparison.recall['staged'])} | {stages} |", flush=True)
        del started


if __name__ == "__main__":
    main()
