"""Write the sample sessions in sample_sessions/ (deterministic; run again to regenerate).

    python scripts/make_samples.py

Each sample is built from a scripted conversation and written the way Gemini
CLI 0.61 writes its files (see ../shared/gemini-cli-sessions/): JSONL with a
metadata line, a ``$set.messages`` line holding the environment context,
records re-appended with the same id when tool results arrive, ``$set``
timestamps, ``$rewindTo``; the legacy pretty-printed JSON; ``/chat save``
checkpoints.  The usage figures grow as a real session's would.
"""

from __future__ import annotations

import hashlib
import json
import random
import sys
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from scripts.sample_content import (  # noqa: E402
    ENV_CONTEXT,
    big_log,
    python_module,
    test_output,
)

OUT = ROOT / "sample_sessions"
PROJECT = "/home/dev/shop-api"
SYSTEM_TOKENS = 8_900  # system prompt + tool declarations, as the recorded usage shows


@dataclass
class Call:
    name: str
    args: dict[str, Any]
    output: str
    status: str = "success"
    display: str = ""


@dataclass
class Conversation:
    """A scripted chat that turns into Gemini CLI records."""

    session_id: str
    start: datetime
    model_name: str = "gemini-2.5-pro"
    records: list[dict[str, Any]] = field(default_factory=list)
    lines: list[dict[str, Any]] = field(default_factory=list)
    clock: datetime = field(init=False)
    counter: int = 0
    prompt_chars: int = 0
    rng: random.Random = field(default_factory=lambda: random.Random(7))

    def __post_init__(self) -> None:
        self.clock = self.start
        self.lines.append(
            {
                "sessionId": self.session_id,
                "projectHash": hashlib.sha256(PROJECT.encode()).hexdigest(),
                "startTime": _ts(self.start),
                "lastUpdated": _ts(self.start),
                "kind": "main",
            }
        )
        env = {"id": "d04923d38bb0f6017037e74183378ef4", "timestamp": _ts(self.start), "type": "user",
               "content": [{"text": ENV_CONTEXT.format(project=PROJECT)}]}
        self.records.append(env)
        self.lines.append({"$set": {"messages": [env], "lastUpdated": _ts(self.start)}})
        self.prompt_chars += len(ENV_CONTEXT)

    # -- helpers ---------------------------------------------------------------
    def _tick(self, seconds: float) -> str:
        self.clock += timedelta(seconds=seconds)
        return _ts(self.clock)

    def _id(self) -> str:
        self.counter += 1
        digest = hashlib.sha1(f"{self.session_id}:{self.counter}".encode()).hexdigest()
        return f"{digest[:8]}-{digest[8:12]}-{digest[12:16]}-{digest[16:20]}-{digest[20:32]}"

    def _touch(self) -> None:
        self.lines.append({"$set": {"lastUpdated": _ts(self.clock)}})

    def _usage(self, output_chars: int, thought_chars: int) -> dict[str, int]:
        prompt = SYSTEM_TOKENS + self.prompt_chars // 4
        output = max(8, output_chars // 4)
        thoughts = thought_chars // 4
        cached = (prompt // 2048) * 1024 if prompt > 4096 else 0
        return {"input": prompt, "output": output, "cached": cached, "thoughts": thoughts,
                "tool": 0, "total": prompt + output + thoughts}

    # -- turns -----------------------------------------------------------------
    def user(self, text: str) -> str:
        record = {"id": self._id(), "timestamp": self._tick(20 + self.rng.random() * 90), "type": "user",
                  "content": [{"text": text}]}
        self.records.append(record)
        self.lines.append(record)
        self._touch()
        self.prompt_chars += len(text)
        return record["id"]

    def model(self, text: str, thoughts: list[tuple[str, str]] = (), calls: list[Call] = ()) -> str:  # type: ignore[assignment]
        stamp = self._tick(2 + self.rng.random() * 6)
        thought_records = [{"subject": s, "description": d, "timestamp": stamp} for s, d in thoughts]
        thought_chars = sum(len(s) + len(d) for s, d in thoughts)
        record: dict[str, Any] = {"id": self._id(), "timestamp": stamp, "type": "gemini", "content": text,
                                  "thoughts": thought_records,
                                  "tokens": self._usage(len(text) + 40 * len(calls), thought_chars),
                                  "model": self.model_name}
        self.records.append(record)
        self.lines.append(dict(record))
        self._touch()
        self.prompt_chars += len(text)
        if not calls:
            return str(record["id"])
        tool_calls = []
        responses = []
        for n, call in enumerate(calls):
            call_id = f"{call.name}__{call.name}_{int(self.clock.timestamp() * 1000)}_{n}"
            response = {"functionResponse": {"id": call_id, "name": call.name,
                                             "response": {"output": call.output} if call.status == "success"
                                             else {"error": call.output}}}
            tool_calls.append({"id": call_id, "name": call.name, "args": call.args, "result": [response],
                               "status": call.status, "timestamp": self._tick(0.5 + self.rng.random() * 3),
                               "resultDisplay": call.display or call.output[:200],
                               "description": call.args.get("description") or next(iter(call.args.values()), ""),
                               "displayName": _display_name(call.name), "renderOutputAsMarkdown": True})
            responses.append(response)
            self.prompt_chars += len(call.output) + len(json.dumps(call.args))
        record["toolCalls"] = tool_calls
        self.lines.append(dict(record))  # re-appended with the same id once the tools finish
        reply = {"id": self._id(), "timestamp": self._tick(0.1), "type": "user", "content": responses}
        self.records.append(reply)
        self.lines.append(reply)
        self._touch()
        return str(record["id"])

    def info(self, text: str) -> None:
        record = {"id": self._id(), "timestamp": self._tick(1), "type": "info", "content": text}
        self.records.append(record)
        self.lines.append(record)
        self._touch()

    def rewind(self, message_id: str) -> None:
        """The user rewinds to before ``message_id`` (Esc-Esc in Gemini CLI)."""
        self.lines.append({"$rewindTo": message_id})
        index = next(i for i, r in enumerate(self.records) if r["id"] == message_id)
        del self.records[index:]
        self.prompt_chars = sum(len(json.dumps(r.get("content"))) for r in self.records)

    def checkpoint(self, messages: list[dict[str, Any]]) -> None:
        """A compression as Gemini CLI writes it: new session id line + a messages checkpoint."""
        self.lines.append({"$set": {"sessionId": self.session_id}})
        self.lines.append({"$set": {"messages": messages, "lastUpdated": _ts(self.clock)}})
        self.records = list(messages)
        self.prompt_chars = sum(len(json.dumps(m.get("content"))) for m in messages)

    # -- writers ----------------------------------------------------------------
    def write_jsonl(self, path: Path) -> None:
        text = "".join(json.dumps(line, ensure_ascii=False, separators=(",", ":")) + "\n" for line in self.lines)
        path.write_text(text, encoding="utf-8")

    def write_legacy(self, path: Path, summary: str | None = None) -> None:
        record: dict[str, Any] = dict(self.lines[0])
        record["lastUpdated"] = _ts(self.clock)
        record["messages"] = [r for r in self.records if not _is_env(r)]
        if summary:
            record["summary"] = summary
        path.write_text(json.dumps(record, ensure_ascii=False, indent=2), encoding="utf-8")

    def history(self) -> list[dict[str, Any]]:
        """Content[] as a /chat save writes it (environment context first)."""
        contents: list[dict[str, Any]] = []
        for r in self.records:
            if r["type"] == "user":
                contents.append({"role": "user", "parts": r["content"]})
            elif r["type"] == "gemini":
                parts: list[dict[str, Any]] = []
                if isinstance(r["content"], list):
                    parts.extend(r["content"])
                elif r["content"]:
                    parts.append({"text": r["content"]})
                for call in r.get("toolCalls", []):
                    parts.append({"functionCall": {"id": call["id"], "name": call["name"], "args": call["args"]}})
                contents.append({"role": "model", "parts": parts})
        return contents


def _ts(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def _is_env(record: dict[str, Any]) -> bool:
    content = record.get("content")
    return isinstance(content, list) and bool(content) and str(content[0].get("text", "")).startswith("<session_context>")


def _display_name(name: str) -> str:
    return {"read_file": "ReadFile", "write_file": "WriteFile", "replace": "Edit", "run_shell_command": "Shell",
            "glob": "FindFiles", "search_file_content": "SearchText", "list_directory": "ReadFolder",
            "read_many_files": "ReadManyFiles", "google_web_search": "GoogleSearch"}.get(name, name)


def main() -> None:
    from scripts.sample_scenarios import build_all

    OUT.mkdir(exist_ok=True)
    for name, writer in build_all(Conversation, Call, helpers={
        "big_log": big_log, "python_module": python_module, "test_output": test_output,
    }).items():
        writer(OUT / name)
        print(f"wrote {OUT.name}/{name} ({(OUT / name).stat().st_size:,} bytes)")


if __name__ == "__main__":
    main()
