"""How long apply, revert and the watcher's classify take on big sessions.

    .venv/bin/python bench/bench_store.py [--copies N]

Uses sample_sessions/long-migration.jsonl as is, and a bigger JSONL made by
repeating its message records N times under new ids (default 8), and each
as a legacy ``session-*.json`` too (an apply rewrites it: read once, write a
temp file, check the file is still what was read, swap).  Each run works on
a copy in a temp folder; prints seconds per step, best of 3.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from inspector.analysis import analyze
from inspector.live.watch import classify, initial_state, observe
from inspector.session import history, load
from inspector.store import apply_history, revert

ROOT = Path(__file__).resolve().parent.parent
SOURCE = ROOT / "sample_sessions" / "long-migration.jsonl"


def best(fn: Callable[[], object], runs: int = 3) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def bigger(folder: Path, copies: int) -> Path:
    lines = SOURCE.read_text(encoding="utf-8").splitlines()
    out = [lines[0]]
    for n in range(copies):
        for line in lines[1:]:
            record = json.loads(line)
            if n and isinstance(record.get("$set"), dict) and "messages" in record["$set"]:
                continue  # one checkpoint only, so every copy stays in the history
            if isinstance(record.get("id"), str):
                record["id"] = f"{record['id']}-{n}"
            out.append(json.dumps(record, ensure_ascii=False, separators=(",", ":")))
    path = folder / "session-big.jsonl"
    path.write_text("\n".join(out) + "\n", encoding="utf-8")
    return path


def bench(path: Path) -> None:
    work = Path(tempfile.mkdtemp())
    target = work / path.name
    shutil.copyfile(path, target)
    session = load(target)
    turns = history(session)
    split = analyze(session).split_point
    new = [{"role": "user", "parts": [{"text": "<state_snapshot/>"}]}, {"role": "model", "parts": [{"text": "ok"}]},
           *[t.content for t in turns[split:]]]
    sources = [None, None, *turns[split:]]

    def cycle() -> None:
        apply_history(session, turns, new, sources)
        revert(target)

    t_load = best(lambda: load(target))
    start = time.perf_counter()
    entry = apply_history(session, turns, new, sources)
    t_apply = time.perf_counter() - start
    start = time.perf_counter()
    revert(target)
    t_revert = time.perf_counter() - start
    t_cycle = best(cycle)
    state = initial_state(target)
    with target.open("ab") as handle:
        handle.write(b'{"$set":{"lastUpdated":"2026-01-01T00:00:00.000Z"}}\n')
    t_classify = best(lambda: classify(state, observe(target, state)))
    t_initial = best(lambda: initial_state(target))
    size = path.stat().st_size
    print(f"{path.name}: {size / 1e6:.1f} MB, {len(turns)} turns, split {split}, "
          f"{entry.records_reused} records kept, {entry.planned_length or 0:,} bytes written")
    print(f"  load {t_load:.3f} s | apply {t_apply:.3f} s | revert {t_revert:.3f} s | "
          f"apply+revert best {t_cycle:.3f} s")
    print(f"  watcher: classify an append {t_classify * 1000:.2f} ms | initial state {t_initial * 1000:.1f} ms")
    shutil.rmtree(work)


def legacy(path: Path, folder: Path) -> Path:
    """The same conversation as a legacy session-*.json (pretty, as Gemini CLI wrote them)."""
    session = load(path)
    doc = {"sessionId": session.session_id or "s", "projectHash": "p", "startTime": "2026-01-01T00:00:00.000Z",
           "lastUpdated": "2026-01-01T00:00:00.000Z", "messages": list(session.messages)}
    target = folder / f"session-{path.stem.removeprefix('session-')}.json"
    target.write_text(json.dumps(doc, ensure_ascii=False, indent=2), encoding="utf-8")
    return target


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--copies", type=int, default=8)
    args = parser.parse_args()
    if not SOURCE.exists():
        print(f"missing {SOURCE}", file=sys.stderr)
        return 2
    folder = Path(tempfile.mkdtemp())
    big = bigger(folder, args.copies)
    for path in (SOURCE, big, legacy(SOURCE, folder), legacy(big, folder)):
        bench(path)
    shutil.rmtree(folder)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
