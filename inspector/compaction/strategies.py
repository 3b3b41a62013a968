"""The two compaction strategies behind one call, and running both to compare.

* ``reference``: Gemini CLI's own ``compress()`` (``compress.py``).
* ``staged``: cheapest stages first until the history fits a target
  (``staged.py``), with the same summarisers for its summary stage.

Both return a ``CompressionResult``, so the CLI, the app and the store treat
them alike.  ``compare`` runs both on the same history and split and adds a
recall figure measured the same way for each: the facts of the whole history
checked against the whole new history.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from inspector import quality
from inspector.compaction.compress import (
    CompressionResult,
    CompressionStatus,
    compress,
    start_result,
    summarise_twice,
    under_threshold,
)
from inspector.compaction.staged import StagedConfig, run_staged
from inspector.compaction.statuses import NO_STATUSES, ToolStatuses
from inspector.compaction.summarisers.base import Grounded, Summariser, SummariserError
from inspector.tokens import DEFAULT_THRESHOLD, estimate_contents, token_limit

STRATEGIES = ("reference", "staged")
DEFAULT_TARGET_FRACTION = 0.25  # of the model's window
KEEP_FRACTION = 0.3  # what the reference keeps verbatim; the staged default aims there when forced


def resolve_target(target: float | None, limit: int, before: int) -> int:
    """Tokens the staged strategy aims at.

    ``target`` <= 1 is a fraction of the model's window, above 1 a token
    count.  Without one: 30% of the current size (what the reference keeps),
    but never above a quarter of the window.
    """
    if target is not None:
        return int(target * limit) if target <= 1 else int(target)
    return min(int(before * KEEP_FRACTION), int(DEFAULT_TARGET_FRACTION * limit))


def history_text(contents: Sequence[dict[str, Any]]) -> str:
    """Everything a reader of the new history can see, as one text (for recall)."""
    from inspector.jsjson import js_stringify

    pieces: list[str] = []
    for content in contents:
        for part in content.get("parts") or []:
            if not isinstance(part, dict):
                continue
            if isinstance(part.get("text"), str):
                pieces.append(part["text"])
            for key in ("functionCall", "functionResponse"):
                if isinstance(part.get(key), dict):
                    pieces.append(js_stringify(part[key]))
    return "\n".join(pieces)


def kept_turns(sources: Sequence[int | None] | None, count: int) -> list[int]:
    """The original turns a new history copies word for word (``sources``; none when unknown)."""
    return [s for s in sources or [] if s is not None and 0 <= s < count]


def _contents(items: Sequence[Any]) -> list[dict[str, Any]]:
    return [getattr(item, "content", item) for item in items]


async def compress_staged(
    history: Sequence[Any],
    summariser: Summariser,
    *,
    model: str | None = None,
    force: bool = False,
    threshold: float | None = None,
    target: float | None = None,
    split: int | None = None,
    recorded_prompt_tokens: int | None = None,
    environment: dict[str, Any] | None = None,
    instruction: str | None = None,
    system_prompt: str | None = None,
    source_sha256: str | None = None,
    statuses: ToolStatuses = NO_STATUSES,
    **_: Any,
) -> CompressionResult:
    """The staged strategy with the reference's threshold rule and result shape.

    ``split`` (an index into ``history``) fixes where the summary stage
    splits; by default it keeps about 30% of the turns.
    """
    started = time.monotonic()
    curated = _contents(history)
    limit = token_limit(model)
    threshold = threshold or DEFAULT_THRESHOLD
    env = [environment] if environment else []
    before = estimate_contents(env + curated)
    result = start_result(
        summariser, original=before, recorded_prompt_tokens=recorded_prompt_tokens, source_sha256=source_sha256,
        threshold=threshold, limit=limit, force=force, instruction=instruction, strategy="staged",
    )

    def done(status: CompressionStatus, message: str = "") -> CompressionResult:
        return result.finish(status, message, started)

    if not curated:
        return done(CompressionStatus.NOOP, "the history is empty")
    deciding = recorded_prompt_tokens if recorded_prompt_tokens is not None else before
    below = None if force else under_threshold(deciding, threshold, limit)
    if below:
        return done(CompressionStatus.NOOP, below)
    env_tokens = estimate_contents(env)
    goal = resolve_target(target, limit, before)
    config = StagedConfig(target_tokens=max(0, goal - env_tokens))

    turn_of = {id(c): i for i, c in enumerate(curated)}
    origins: list[int | None] = []

    async def summarise(older: list[dict[str, Any]]) -> tuple[str, str]:
        origins[:] = [turn_of.get(id(c)) for c in older]  # the stages may drop turns: statuses follow their turn
        if isinstance(summariser, Grounded):
            summariser.ground(statuses.remapped(origins))
        draft, final, previous = await summarise_twice(
            summariser, older, instruction=instruction, system_prompt=system_prompt
        )
        result.previous_snapshot = previous
        return draft, final

    try:
        staged = await run_staged(curated, config, summarise, split=split)
    except SummariserError as exc:
        return done(CompressionStatus.COMPRESSION_FAILED_SUMMARISER_ERROR, f"{result.provider}: {exc}")
    result.stages = staged.stages
    result.draft_snapshot, result.snapshot = staged.draft_snapshot, staged.snapshot
    cited = summariser.cite(staged.snapshot) if staged.snapshot and isinstance(summariser, Grounded) else None
    result.provenance = cited.remapped(origins) if cited else None
    result.split_point = staged.summarised_until
    result.split_kind = "staged" if staged.snapshot else None
    result.new_token_count = env_tokens + staged.tokens_after
    result.facts = quality.check_history(curated, statuses, staged.snapshot or "",
                                         kept_turns(staged.sources, len(curated)))
    target_text = f"target {goal:,} tokens"
    if not staged.stages_used:
        result.new_token_count = before
        return done(CompressionStatus.NOOP, f"no stage changed anything ({target_text})")
    if result.new_token_count >= before:
        return done(CompressionStatus.COMPRESSION_FAILED_INFLATED_TOKEN_COUNT,
                    f"the stages saved nothing ({before:,} -> {result.new_token_count:,})")
    result.new_history, result.sources = staged.contents, staged.sources
    fits = "fits the target" if staged.fits else "still above the target"
    return done(CompressionStatus.COMPRESSED,
                f"stages used: {', '.join(staged.stages_used)}; {fits} ({target_text})")


async def run_strategy(
    strategy: str, history: Sequence[Any], summariser: Summariser, **options: Any
) -> CompressionResult:
    if strategy == "staged":
        return await compress_staged(history, summariser, **options)
    options.pop("target", None)
    return await compress(history, summariser, **options)


@dataclass
class Comparison:
    results: dict[str, CompressionResult]
    recall: dict[str, float | None]  # whole history -> whole new history, alike for both

    def to_json(self) -> dict[str, Any]:
        return {name: {**result.to_json(), "history_fact_recall": self.recall[name]}
                for name, result in self.results.items()}


async def compare(history: Sequence[Any], summariser: Summariser, **options: Any) -> Comparison:
    """Both strategies on the same history (and split, when one is given)."""
    curated = _contents(history)
    results: dict[str, CompressionResult] = {}
    recall: dict[str, float | None] = {}
    statuses = options.get("statuses", NO_STATUSES)
    for name in STRATEGIES:
        result = await run_strategy(name, history, summariser, **dict(options))
        results[name] = result
        if result.new_history is None:
            recall[name] = None
            continue
        kept = kept_turns(result.sources, len(curated)) if result.sources is not None \
            else range(result.kept_from or 0, len(curated))
        report = quality.check_history(curated, statuses, result.snapshot or "", kept)
        recall[name] = round(report.recall, 4)
    return Comparison(results, recall)


__all__ = ["STRATEGIES", "Comparison", "compare", "compress_staged", "resolve_target", "run_strategy"]
