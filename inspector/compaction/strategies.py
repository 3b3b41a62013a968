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
from dataclasses import dataclass, replace
from typing import Any

from inspector import quality
from inspector.compaction.compress import (
    DEFAULT_OPTIONS,
    CompressionResult,
    CompressionStatus,
    CompressOptions,
    History,
    agentic_split,
    compress,
    contents_of,
    start_result,
    summarise_twice,
)
from inspector.compaction.request import STRATEGIES, CompactionContext, CompactionRequest, compaction_context
from inspector.compaction.staged import StagedConfig, run_staged
from inspector.compaction.statuses import NO_STATUSES
from inspector.compaction.summarisers.base import NO_ROOM, Grounded, Summariser, SummariserError
from inspector.compaction.view import HistoryView
from inspector.context import ContextFigures
from inspector.progress import SILENT, Reporter
from inspector.session.loader import Session, paused_gc
from inspector.tokens import estimate_contents, token_limit

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


async def compress_staged(
    history: History,
    summariser: Summariser,
    options: CompressOptions = DEFAULT_OPTIONS,
    reporter: Reporter = SILENT,
) -> CompressionResult:
    """The staged strategy with the reference's threshold rule and result shape.

    ``options.split`` (an index into ``history``) fixes where the summary stage
    splits; by default it keeps about 30% of the turns.  ``options.target``: its goal.
    """
    statuses = options.statuses
    started = time.monotonic()
    curated = contents_of(history)
    limit = token_limit(options.model)
    env = [options.environment] if options.environment else []
    before = estimate_contents(env + curated)
    result = start_result(summariser, options, original=before, limit=limit, strategy="staged")

    def done(status: CompressionStatus, message: str = "") -> CompressionResult:
        return result.finish(status, message, started)

    if not curated:
        return done(CompressionStatus.NOOP, "the history is empty")
    below = None if options.force else ContextFigures(options.recorded_prompt_tokens, before, limit,
                                                      options.applied_threshold).below_threshold()
    if below:
        return done(CompressionStatus.NOOP, below)
    env_tokens = estimate_contents(env)
    goal = resolve_target(options.target, limit, before)
    config = StagedConfig(target_tokens=max(0, goal - env_tokens))

    turn_of = {id(c): i for i, c in enumerate(curated)}
    origins: list[int | None] = []
    no_room: list[str] = []  # why the summariser could not write a snapshot small enough

    async def summarise(older: list[dict[str, Any]]) -> tuple[str, str]:
        origins[:] = [turn_of.get(id(c)) for c in older]  # the stages may drop turns: statuses follow their turn
        if isinstance(summariser, Grounded):
            summariser.ground(statuses.remapped(origins), names=list(origins))
        try:
            twice = await summarise_twice(
                summariser, older, instruction=options.instruction, system_prompt=options.system_prompt,
                reporter=reporter,
            )
        except SummariserError as exc:
            if exc.kind != NO_ROOM:
                raise
            no_room.append(str(exc))  # too little to summarise: the stage is skipped, the next ones run
            return "", ""
        result.previous_snapshot = twice.previous
        result.verification_answered = twice.answered
        result.verification_problem = twice.problem
        return twice.draft, twice.final

    extraction = quality.start(curated, statuses)  # the independent facts, read meanwhile
    try:
        staged = await run_staged(curated, config, summarise, split=options.split, reporter=reporter)
    except SummariserError as exc:
        extraction.close()
        return done(CompressionStatus.COMPRESSION_FAILED_SUMMARISER_ERROR, f"{result.provider}: {exc}")
    except BaseException:
        extraction.close()
        raise
    result.stages = staged.stages
    for stage in staged.stages:
        if stage.name == "summarise" and not stage.applied and no_room:
            stage.detail = f"{no_room[0]}; skipped"
    result.draft_snapshot, result.snapshot = staged.draft_snapshot, staged.snapshot
    cited = summariser.cite(staged.snapshot) if staged.snapshot and isinstance(summariser, Grounded) else None
    result.provenance = cited.remapped(origins) if cited else None
    result.split_point = staged.summarised_until
    result.split_kind = "staged" if staged.snapshot else None
    result.new_token_count = env_tokens + staged.tokens_after
    with extraction:
        result.facts = quality.check_history(curated, statuses, staged.snapshot or "",
                                             kept_turns(staged.sources, len(curated)), reporter, extraction)
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


async def run_request(
    request: CompactionRequest, context: CompactionContext, history: History, summariser: Summariser,
    reporter: Reporter = SILENT,
) -> CompressionResult:
    """The compaction ``request`` asks for, on a session's ``history``: what ``compact`` and the app run.

    ``reporter`` hears each stage with the turns done, and may stop the run (``progress.Cancelled``).
    On the history the context was read from, the turns are read once (``reading.HistoryReader``)
    and what the analysis measured is reused (``reading.Planned``).  The cyclic garbage collector
    waits meanwhile: the run makes hundreds of thousands of long-lived objects and no cycles.
    """
    with paused_gc():
        read = context.reader.read(reporter) if context.planned.covers(history) else None
        contents = read.contents if read is not None else contents_of(history)
        statuses = read.statuses if read is not None else NO_STATUSES
        options = context.compress_options(request, statuses, context.planned if read is not None else None)
        if request.strategy == "staged":
            if request.agentic:
                options = replace(options, split=agentic_split(contents), agentic=False)  # its summary splits there
            return await compress_staged(contents, summariser, options, reporter)
        return await compress(contents, summariser, options, reporter)


async def compact_session(
    session: Session, request: CompactionRequest, summariser: Summariser, *, threshold: float | None = None,
    view: HistoryView = HistoryView.JOINED,
) -> CompressionResult:
    """``run_request`` on a loaded session, analysed first (with the request's model, ``threshold``
    and ``view``)."""
    from inspector.analysis import analyze

    analysis = analyze(session, model=request.model, threshold=threshold, view=view)
    return await run_request(request, compaction_context(session, analysis), analysis.turns, summariser)


@dataclass
class Comparison:
    results: dict[str, CompressionResult]
    recall: dict[str, float | None]  # whole history -> whole new history, alike for both

    def to_json(self) -> dict[str, Any]:
        return {name: {**result.to_json(), "history_fact_recall": self.recall[name]}
                for name, result in self.results.items()}


async def compare(
    request: CompactionRequest, context: CompactionContext, history: History, summariser: Summariser,
    reporter: Reporter = SILENT,
) -> Comparison:
    """Both strategies on the same history and split (``request.strategy`` and ``target`` aside)."""
    curated = contents_of(history)
    results: dict[str, CompressionResult] = {}
    recall: dict[str, float | None] = {}
    for name in STRATEGIES:
        each = replace(request, strategy=name, target=request.target if name == "staged" else None, compare=False)
        result = await run_request(each, context, history, summariser, reporter)
        results[name] = result
        if result.new_history is None:
            recall[name] = None
            continue
        kept = kept_turns(result.sources, len(curated)) if result.sources is not None \
            else range(result.kept_from or 0, len(curated))
        report = quality.check_history(curated, context.statuses, result.snapshot or "", kept, reporter)
        recall[name] = round(report.recall, 4)
    return Comparison(results, recall)


__all__ = ["STRATEGIES", "Comparison", "compact_session", "compare", "compress_staged", "resolve_target", "run_request"]
