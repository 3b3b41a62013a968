"""Search across sessions: index time (cold, warm, one file changed) and query time on generated sessions.

    .venv/bin/python bench/bench_search.py [--sessions 2000] [--keep DIR]

Writes ``--sessions`` JSONL recordings (deterministic: prompts, replies, tool
calls with their results, in about 40 projects) under a temporary
``.gemini/tmp``, then times, each as the app and ``session-inspector search``
run it (``inspector.search.index``):

* cold: the on-disk index built from nothing (every file read);
* warm: the same files again (a stat each, nothing read);
* one changed: one session appended to, then brought up to date;
* queries: a rare word, a common word, two words, a word with a short one
  (median of 7 runs each, hits counted);
* the session list: every file read and arranged (``inspector.catalog.listing``), for scale.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from inspector.catalog.listing import catalog, find_files
from inspector.search.index import SearchIndex

WORDS = (
    "parser", "config", "build", "deploy", "cache", "token", "window", "history", "split", "budget", "model",
    "prompt", "reply", "tool", "shell", "file", "folder", "index", "query", "search", "session", "context",
    "compress", "summary", "test", "fixture", "server", "client", "route", "handler", "error", "retry",
    "timeout", "stream", "buffer", "schema", "record", "field", "value", "migrate", "rollback",
)
RARE = "zanzibar"
CONTEXT = "<session_context>\nThis is the Gemini CLI.\n</session_context>"


def sentence(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n)).capitalize() + "."


def write_session(path: Path, rng: random.Random, number: int) -> None:
    sid = f"{number:08x}-{rng.getrandbits(32):08x}"
    lines: list[dict[str, object]] = [
        {"sessionId": sid, "projectHash": "0" * 64, "startTime": "2026-01-01T00:00:00Z",
         "lastUpdated": f"2026-01-{1 + number % 28:02d}T{number % 24:02d}:00:00Z", "kind": "main"},
        {"$set": {"messages": [{"id": "ctx", "timestamp": "t", "type": "user", "content": [{"text": CONTEXT}]}]}},
    ]
    for turn in range(rng.randint(3, 25)):
        prompt = sentence(rng, rng.randint(5, 40))
        if number % 500 == 0 and turn == 1:
            prompt += f" Where is the {RARE} setting?"
        lines.append({"id": f"u{turn}", "timestamp": "t", "type": "user", "content": [{"text": prompt}]})
        calls = []
        for c in range(rng.randint(0, 2)):
            output = "\n".join(sentence(rng, 12) for _ in range(rng.randint(1, 60)))
            calls.append({"id": f"c{turn}-{c}", "name": rng.choice(["read_file", "run_shell_command", "grep"]),
                          "args": {"file_path": f"src/{rng.choice(WORDS)}.py"}, "result": output,
                          "status": "success", "timestamp": "t"})
        lines.append({"id": f"g{turn}", "timestamp": "t", "type": "gemini", "content": sentence(rng, 30),
                      "toolCalls": calls, "model": "gemini-2.5-pro",
                      "tokens": {"input": 1000, "output": 100, "cached": 0, "total": 1100}})
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")


def timed(run) -> float:  # type: ignore[no-untyped-def]
    start = time.perf_counter()
    run()
    return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=2000)
    parser.add_argument("--keep", type=Path, help="generate here (and keep it) instead of a temporary folder")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        home = args.keep or Path(scratch)
        os.environ["GEMINI_CLI_HOME"] = str(home)
        rng = random.Random(15)
        start = time.perf_counter()
        for number in range(args.sessions):
            project = home / ".gemini" / "tmp" / f"project-{number % 40:02d}" / "chats"
            write_session(project / f"session-2026-01-01T00-00-{number:08x}.jsonl", rng, number)
        files = find_files()
        size = sum(c.size for c in files)
        print(f"{len(files):,} sessions, {size / 1e6:,.1f} MB, written in {time.perf_counter() - start:.1f} s")

        index_path = Path(scratch) / "index.sqlite"
        with SearchIndex(index_path) as index:
            cold = timed(lambda: index.update(files))
            warm = timed(lambda: index.update(find_files()))
            changed = files[len(files) // 2].path
            with changed.open("a", encoding="utf-8") as handle:
                handle.write(json.dumps({"id": "late", "timestamp": "t", "type": "user",
                                         "content": [{"text": "one more prompt"}]}) + "\n")
            one = timed(lambda: index.update(find_files()))
            print(f"index: cold {cold:.2f} s, warm {warm:.3f} s (stat only), one file changed {one:.3f} s; "
                  f"on disk {index_path.stat().st_size / 1e6:,.1f} MB")
            for query in (RARE, "parser", "deploy rollback", "read_file src is"):
                runs = []
                count = 0
                for _ in range(7):
                    start = time.perf_counter()
                    count = len(index.search(query, files))
                    runs.append(time.perf_counter() - start)
                print(f"query {query!r}: median {statistics.median(runs) * 1000:,.1f} ms, {count:,} hits shown")
        listing = timed(catalog)
        print(f"session list (every file read and arranged): {listing:.2f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
