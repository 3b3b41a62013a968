"""Where every token goes: per-turn figures, totals and split points.

``analyze`` computes everything the CLI and the app show, once; stepping the
split afterwards is O(1) through prefix sums.  Nothing here writes to disk.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field
from itertools import accumulate
from pathlib import Path
from typing import Any

from inspector.compaction.budget import (
    TOOL_OUTPUTS_DIR,
    Truncation,
    apply_budget,
    output_file_name,
    truncate_chars,
)
from inspector.compaction.split import ends_safely, find_split_point, is_split_candidate
from inspector.jsjson import js_json_len
from inspector.session import Session, Turn, history
from inspector.session.errors import LoadWarning
from inspector.tokens import DEFAULT_THRESHOLD, parts_quarters, token_limit

_USAGE_KEYS = ("input", "output", "cached", "thoughts", "tool", "total")


def turn_kind(content: dict[str, Any]) -> str:
    """A short label for what a turn holds: text, thought, tool call, ..."""
    seen: list[str] = []
    parts = content.get("parts")
    for part in parts if isinstance(parts, list) else []:
        if not isinstance(part, dict):
            label = "other"
        elif part.get("thought"):
            label = "thought"
        elif isinstance(part.get("text"), str):
            label = "text"
        elif part.get("functionCall"):
            label = "tool call"
        elif part.get("functionResponse"):
            label = "tool result"
        elif "inlineData" in part or "fileData" in part:
            data = part.get("inlineData") or part.get("fileData") or {}
            mime = data.get("mimeType", "") if isinstance(data, dict) else ""
            label = "image" if isinstance(mime, str) and mime.startswith("image/") else "file"
        else:
            label = "other"
        if label not in seen:
            seen.append(label)
    return "+".join(seen) if seen else "empty"


def project_temp_dir(session_path: Path) -> Path:
    """``~/.gemini/tmp/<project>`` for a file under its ``chats/`` folder."""
    parent = session_path.resolve().parent
    if parent.name == "chats":
        return parent.parent
    if parent.parent.name == "chats":  # a sub-agent's chats/<parent-id>/<id>.jsonl
        return parent.parent.parent
    return parent


@dataclass
class Analysis:
    """Every figure about one history; the split can be moved afterwards."""

    turns: list[Turn]
    quarters: list[int]
    json_chars: list[int]
    candidates: list[int]
    split_point: int
    compress_split_point: int
    truncations: list[Truncation]
    token_limit: int
    threshold: float
    model: str | None
    recorded: list[dict[str, Any] | None]
    warnings: list[LoadWarning] = field(default_factory=list)
    _prefix_quarters: list[int] = field(default_factory=list, repr=False)

    def __post_init__(self) -> None:
        self._prefix_quarters = [0, *accumulate(self.quarters)]

    # -- totals ---------------------------------------------------------------
    @property
    def total_estimated_tokens(self) -> int:
        """The reference's estimate over all parts at once (floor of the sum)."""
        return self._prefix_quarters[-1] // 4

    def turn_tokens(self, index: int) -> int:
        return self.quarters[index] // 4

    def tokens_between(self, start: int, stop: int) -> int:
        """The estimate over turns ``start..stop-1`` (one floor over the range)."""
        return (self._prefix_quarters[stop] - self._prefix_quarters[start]) // 4

    @property
    def recorded_prompt_tokens(self) -> int | None:
        """The prompt size the API last reported (the newest usage record)."""
        for usage in reversed(self.recorded):
            if usage and isinstance(usage.get("input"), (int, float)):
                return int(usage["input"])
        return None

    @property
    def context_tokens(self) -> int:
        """What decides compression: the last recorded prompt, else the estimate."""
        recorded = self.recorded_prompt_tokens
        return recorded if recorded is not None else self.total_estimated_tokens

    @property
    def would_compress(self) -> bool:
        """Would Gemini CLI compress now (automatically, not forced)?"""
        return (
            self.context_tokens >= self.threshold * self.token_limit
            and self.compress_split_point > 0
        )

    # -- stepping the split -----------------------------------------------------
    def step(self, split: int, direction: int) -> int:
        """The next (+1) or previous (-1) candidate from ``split``."""
        if direction > 0:
            pos = bisect.bisect_right(self.candidates, split)
            return self.candidates[pos] if pos < len(self.candidates) else split
        pos = bisect.bisect_left(self.candidates, split) - 1
        return self.candidates[pos] if pos >= 0 else split

    def split_figures(self, split: int) -> dict[str, int | float]:
        total = self.total_estimated_tokens
        summarised = self.tokens_between(0, split)
        kept = self.tokens_between(split, len(self.turns))
        return {
            "split": split,
            "summarised_turns": split,
            "kept_turns": len(self.turns) - split,
            "summarised_tokens": summarised,
            "kept_tokens": kept,
            "kept_share": (kept / total) if total else 0.0,
        }

    def to_json(self, path: Path, fmt: str, session_id: str | None) -> dict[str, Any]:
        return {
            "path": str(path),
            "format": fmt,
            "session_id": session_id,
            "model": self.model,
            "token_limit": self.token_limit,
            "threshold": self.threshold,
            "history": [
                {
                    "index": t.index,
                    "role": t.role,
                    "record_id": t.record_id,
                    "kind": turn_kind(t.content),
                    "estimated_tokens": self.quarters[t.index] // 4,
                    "json_chars": self.json_chars[t.index],
                    "recorded": self.recorded[t.index],
                }
                for t in self.turns
            ],
            "total_estimated_tokens": self.total_estimated_tokens,
            "recorded_prompt_tokens": self.recorded_prompt_tokens,
            "context_tokens": self.context_tokens,
            "split_point": self.split_point,
            "split_candidates": self.candidates,
            "compress_split_point": self.compress_split_point,
            "would_compress": self.would_compress,
            "budget_truncations": [
                {
                    "turn": tr.turn,
                    "tool": tr.tool,
                    "original_tokens": tr.original_tokens,
                    "new_tokens": tr.new_tokens,
                    "output_file": tr.output_file,
                }
                for tr in self.truncations
            ],
            "split": self.split_figures(self.split_point),
            "warnings": [w.to_json() for w in self.warnings],
        }


def _usage(message: dict[str, Any]) -> dict[str, Any] | None:
    tokens = message.get("tokens")
    if not isinstance(tokens, dict):
        return None
    return {k: tokens[k] for k in _USAGE_KEYS if k in tokens}


def analyze_turns(
    turns: list[Turn],
    messages: list[dict[str, Any]] | None = None,
    *,
    model: str | None = None,
    threshold: float = DEFAULT_THRESHOLD,
    temp_dir: Path | None = None,
    warnings: list[LoadWarning] | None = None,
) -> Analysis:
    contents = [t.content for t in turns]
    quarters = [parts_quarters(_parts(c)) for c in contents]
    json_chars = [js_json_len(c) for c in contents]
    flags = [is_split_candidate(c) for c in contents]
    safe_end = bool(contents) and ends_safely(contents[-1])
    split_point = find_split_point(json_chars, flags, safe_end) if contents else 0
    candidates = [0, *(i for i, flag in enumerate(flags) if flag and i > 0)]
    if safe_end:
        candidates.append(len(contents))

    recorded: list[dict[str, Any] | None] = [None] * len(turns)
    if messages is not None:
        for t in turns:
            if t.message_index is not None and not t.is_tool_result and t.role == "model":
                recorded[t.index] = _usage(messages[t.message_index])

    limit = token_limit(model)
    last_prompt = next((int(u["input"]) for u in reversed(recorded) if u and isinstance(u.get("input"), (int, float))), 0)
    folder = (temp_dir or Path(".")) / TOOL_OUTPUTS_DIR
    truncated, truncations = apply_budget(
        contents,
        lambda tool, seq: str(folder / output_file_name(tool, seq)),
        max_chars=truncate_chars(limit, last_prompt),
    )
    if truncations:
        changed = {tr.turn for tr in truncations}
        weights = [js_json_len(truncated[i]) if i in changed else json_chars[i] for i in range(len(turns))]
        compress_split = find_split_point(weights, flags, safe_end)
    else:
        compress_split = split_point

    return Analysis(
        turns=turns,
        quarters=quarters,
        json_chars=json_chars,
        candidates=candidates,
        split_point=split_point,
        compress_split_point=compress_split,
        truncations=truncations,
        token_limit=limit,
        threshold=threshold,
        model=model,
        recorded=recorded,
        warnings=list(warnings or []),
    )


def _parts(content: dict[str, Any]) -> list[Any]:
    parts = content.get("parts")
    return parts if isinstance(parts, list) else []


def analyze(session: Session, *, model: str | None = None, threshold: float | None = None) -> Analysis:
    """Analyse a loaded session (``model`` / ``threshold`` override what it says)."""
    return analyze_turns(
        history(session),
        session.messages if session.contents is None else None,
        model=model or session.model,
        threshold=threshold if threshold is not None else DEFAULT_THRESHOLD,
        temp_dir=project_temp_dir(session.path),
        warnings=session.warnings,
    )
