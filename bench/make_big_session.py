"""Write a big, realistic Gemini CLI JSONL session for benchmarks.

    python bench/make_big_session.py                  # ~100 MB, ~170k turns -> bench/out/big-session.jsonl
    python bench/make_big_session.py --turns 20000 --out bench/out/small.jsonl
    python bench/make_big_session.py --shape inline   # the other shape, ~105 MB, 173k turns -> inline-session.jsonl

The file looks like what Gemini CLI 0.61 writes: a metadata line, the
environment-context checkpoint on line 2, then user prompts, model messages
with thoughts and tool calls (first appended without results, then appended
again under the same id once the tools finish), tool results small and big,
``$set`` updates, some non-ASCII text and the odd emoji.  Deterministic for a
given seed.

``--shape inline`` writes the other shape met in long agent runs (issue 42: a
105 MB file, 66,000 model messages, 173,000 turns): every model message written
once, its ``toolCalls`` already carrying their results (no first copy without
them), 10% of the results plain strings (``"result": "text"``, which Gemini CLI
turns into ``{"output": text}``), one or two model messages a prompt, nearly
all of them calling tools (1.8 calls a message), few ending in text alone.
"""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path

OUT = Path(__file__).resolve().parent / "out" / "big-session.jsonl"
INLINE_OUT = OUT.with_name("inline-session.jsonl")
# The inline shape, as issue 42 describes the run it was met in (105 MB, 66,000 model messages,
# 173,000 turns): a prompt is followed by one or two model messages that call tools, and only one
# prompt in ten ends in a model message of text alone.
INLINE_FINAL_SHARE = 0.1
_WORD_TEXT = (
    "the a function file test error value return import class module config path read write update check "
    "result list string number token context session model user tool call output build install run shell "
    "grep search replace line change diff commit branch merge fix bug"
)
WORDS = _WORD_TEXT.split()
UNICODE_WORDS = ["données", "größe", "naïve", "测试", "ファイル", "код", "🙂", "✅", "→", "λ"]
TOOLS = ["read_file", "run_shell_command", "grep_search", "list_directory", "replace", "write_file", "glob"]


def sentence(rng: random.Random, words: int, unicode_share: float = 0.02) -> str:
    out = []
    for _ in range(words):
        out.append(rng.choice(UNICODE_WORDS) if rng.random() < unicode_share else rng.choice(WORDS))
    return " ".join(out).capitalize() + "."


def paragraph(rng: random.Random, sentences: int) -> str:
    return " ".join(sentence(rng, rng.randint(6, 18)) for _ in range(sentences))


def code_block(rng: random.Random, lines: int) -> str:
    rows = []
    for i in range(lines):
        indent = "    " * rng.randint(0, 3)
        name = f"{rng.choice(WORDS)}_{rng.choice(WORDS)}"
        rows.append(f"{i + 1:5d}\t{indent}{name} = {rng.choice(WORDS)}({rng.randint(0, 999)})")
    return "\n".join(rows)


class Writer:
    def __init__(self, rng: random.Random, inline: bool = False) -> None:
        self.rng = rng
        self.inline = inline
        self.lines: list[str] = []
        self.turns = 0
        self.seq = 0
        self.clock = 1_700_000_000

    def stamp(self) -> str:
        self.clock += self.rng.randint(1, 40)
        c = self.clock
        return f"2026-03-{1 + c // 86400 % 28:02d}T{c // 3600 % 24:02d}:{c // 60 % 60:02d}:{c % 60:02d}.000Z"

    def ident(self) -> str:
        self.seq += 1
        return f"{self.rng.getrandbits(64):016x}-{self.seq:07d}"

    def add(self, record: dict) -> None:
        self.lines.append(json.dumps(record, ensure_ascii=False, separators=(",", ":")))

    def user(self) -> None:
        rng = self.rng
        text = sentence(rng, rng.randint(5, 25), 0.05)
        if rng.random() < 0.1:
            text += "\n\n```\n" + code_block(rng, rng.randint(3, 20)) + "\n```"
        self.add({"id": self.ident(), "timestamp": self.stamp(), "type": "user", "content": [{"text": text}]})
        self.add({"$set": {"lastUpdated": self.stamp()}})
        self.turns += 1

    def tool_result(self) -> str:
        rng = self.rng
        roll = rng.random()
        if roll < 0.003:
            return code_block(rng, rng.randint(500, 1200))  # a big file read
        if roll < 0.04:
            return code_block(rng, rng.randint(10, 40))
        if roll < 0.15:
            return paragraph(rng, rng.randint(1, 3))
        return sentence(rng, rng.randint(4, 14))

    def model(self, final: bool) -> None:
        rng = self.rng
        ident = self.ident()
        thoughts = [
            {"subject": sentence(rng, rng.randint(2, 5)).rstrip("."), "description": sentence(rng, rng.randint(6, 20)),
             "timestamp": self.stamp()}
            for _ in range(rng.choice((0, 0, 0, 1, 2)))
        ]
        calls = [] if final else [
            {"id": f"{rng.choice(TOOLS)}_{self.clock}_{i}", "name": rng.choice(TOOLS),
             "args": {"file_path": f"src/{rng.choice(WORDS)}/{rng.choice(WORDS)}.py", "limit": rng.randint(1, 500)}}
            for i in range(rng.choice((1, 1, 2, 2, 3) if self.inline else (1, 1, 1, 2, 3)))
        ]
        text = paragraph(rng, rng.randint(1, 2)) if final else (sentence(rng, 12) if rng.random() < 0.6 else "")
        usage = {"input": rng.randint(5_000, 400_000), "output": rng.randint(10, 3_000),
                 "cached": rng.randint(0, 5_000), "thoughts": rng.randint(0, 800), "tool": 0}
        usage["total"] = usage["input"] + usage["output"] + usage["thoughts"]
        record = {"id": ident, "timestamp": self.stamp(), "type": "gemini", "content": text, "thoughts": thoughts,
                  "tokens": usage, "model": "gemini-2.5-pro"}
        if calls:
            record["toolCalls"] = [{**c, "status": "executing", "timestamp": self.stamp()} for c in calls]
            if not self.inline and rng.random() < 0.3:
                self.add(record)  # sometimes first without results ...
            finished = []
            for c in calls:
                result = self.tool_result()
                parts: str | list[dict] = [{"functionResponse": {"id": c["id"], "name": c["name"],
                                                                 "response": {"output": result}}}]
                if self.inline and rng.random() < 0.1:
                    parts = result  # a plain string result
                finished.append({**c, "status": "success", "timestamp": self.stamp(), "displayName": c["name"],
                                 "result": parts, "resultDisplay": result[:80]})
            record = {**record, "toolCalls": finished}
            self.turns += 1
        self.add(record)  # ... then again, same id, once the tools finished
        self.turns += 1


def build(turns: int, seed: int, shape: str = "bench") -> list[str]:
    rng = random.Random(seed)
    inline = shape == "inline"
    writer = Writer(rng, inline)
    writer.add({"sessionId": "3fa2c1d0-bench-4000-8000-000000000000", "projectHash": "b" * 64,
                "startTime": writer.stamp(), "lastUpdated": writer.stamp(), "kind": "main"})
    context = (
        "<session_context>\nThis is the Gemini CLI. We are setting up the context for our chat.\n</session_context>"
    )
    writer.add({"$set": {"messages": [{"id": writer.ident(), "timestamp": writer.stamp(), "type": "user",
                                       "content": [{"text": context}]}]}})
    while writer.turns < turns:
        writer.user()
        for _ in range(rng.randint(1, 2) if inline else rng.randint(0, 4)):
            writer.model(final=False)
        if not inline or rng.random() < INLINE_FINAL_SHARE:
            writer.model(final=True)
        if rng.random() < 0.02:
            writer.add({"id": writer.ident(), "timestamp": writer.stamp(), "type": "info",
                        "content": "Request cancelled."})
    return writer.lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=None,
                        help="history turns to write (default 170,000; inline: 173,000)")
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--shape", choices=("bench", "inline"), default="bench",
                        help="inline: toolCalls written once with their results, 10%% of them plain strings")
    parser.add_argument("--out", type=Path, default=None, help=f"default {OUT} (inline: {INLINE_OUT})")
    args = parser.parse_args()
    if args.out is None:
        args.out = INLINE_OUT if args.shape == "inline" else OUT
    if args.turns is None:
        args.turns = 173_000 if args.shape == "inline" else 170_000
    lines = build(args.turns, args.seed, args.shape)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    data = ("\n".join(lines) + "\n").encode("utf-8")
    args.out.write_bytes(data)
    print(f"{args.out}: {len(data) / 1e6:.1f} MB, {len(lines):,} lines, ~{args.turns:,} turns")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
