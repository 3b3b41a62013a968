"""Running a compaction for the app: the same calls, with the same typed values, as the CLI.

``compact`` and ``compact --compare`` build a ``CompactionRequest`` with
``request.CompactionRequest``, read the session's ``CompactionContext``
from its analysis and call ``strategies.run_request`` / ``strategies.compare``;
the app does exactly that here, so a figure the app shows is the figure the
CLI prints.  Both functions block (they run in a
worker thread), poll ``cancelled`` while the summariser works, and raise
``Cancelled`` when it says stop.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any, TypeVar

from inspector.compaction.compress import CompressionResult
from inspector.compaction.request import STRATEGIES as STRATEGIES  # the dialog offers these
from inspector.compaction.request import (
    CompactionRequest,
    compaction_context,
    named_provider,
    named_strategy,
    target_problem,
)
from inspector.compaction.snapshot import Provenance
from inspector.compaction.statuses import ToolStatuses
from inspector.compaction.strategies import Comparison
from inspector.compaction.summarisers.base import Grounded, Reporting, Summariser
from inspector.format import plural
from inspector.progress import Cancelled as Stopped
from inspector.progress import Progress, Reporter
from inspector.tui.loading import Cancelled, Loaded

T = TypeVar("T")
# A step to show: its words, and the core's report when it knows how far the stage is (a real bar then).
Step = Callable[[str, Progress | None], object]


@dataclass(frozen=True)
class RunOptions:
    """What the user chose before a run: strategy, its target, a focus instruction."""

    strategy: str = "reference"
    target: float | None = None  # staged: <= 1 a share of the window, above 1 tokens; None: the default
    focus: str = ""


def target_text(target: float | None) -> str:
    if target is None:
        return "default target"
    return f"target {target:.0%} of the window" if target <= 1 else f"target {int(target):,} tokens"


def parse_target(text: str) -> float | None:
    """The target field of the dialog: empty -> None; raises ValueError with a short reason."""
    text = text.strip().replace(",", "").replace("_", "")
    if not text:
        return None
    value = float(text[:-1]) / 100 if text.endswith("%") else float(text)
    problem = target_problem(value)
    if problem:
        raise ValueError(f"the target {problem}")
    return value


def chosen_split(loaded: Loaded, split: int) -> int | None:
    """The split to pass: None while the table shows the reference's own (computed after the budget)."""
    return None if split == loaded.analysis.compress_split_point else split


def request_for(loaded: Loaded, split: int, options: RunOptions, provider: ProviderSettings) -> CompactionRequest:
    """``compact``'s request for this run (``--force``: the app always compacts on request)."""
    return CompactionRequest(
        strategy=named_strategy(options.strategy), split=chosen_split(loaded, split),
        target=options.target if options.strategy == "staged" else None, provider=named_provider(provider.provider),
        model=loaded.analysis.model, base_url=provider.base_url, instruction=options.focus or None, force=True,
    )


@dataclass(frozen=True)
class ProviderSettings:
    """Who writes snapshots in the app: what ``--provider`` and ``--base-url`` said."""

    provider: str = "offline"
    base_url: str | None = None


class Counting:
    """A summariser that reports each call (``progress``) and otherwise is the one it wraps."""

    def __init__(self, inner: Summariser, progress: Step, settings: ProviderSettings) -> None:
        self.inner = inner
        self.settings = settings  # what the app asked for (the request names it)
        self.progress = progress
        self.name = inner.name
        self.model = inner.model
        self.calls = 0

    async def summarise(self, system_prompt: str, contents: list[dict[str, Any]]) -> str:
        self.calls += 1
        self.progress(f"summariser call {self.calls:,} ({plural(len(contents), 'turn')})", None)
        return str(await self.inner.summarise(system_prompt, contents))

    def ground(self, statuses: ToolStatuses, tokens: int | None = None, names: Sequence[int | None] = ()) -> None:
        if isinstance(self.inner, Grounded):
            self.inner.ground(statuses, tokens, names)

    def use_reporter(self, reporter: Reporter) -> None:
        if isinstance(self.inner, Reporting):
            self.inner.use_reporter(reporter)

    def cite(self, snapshot: str) -> Provenance | None:
        return self.inner.cite(snapshot) if isinstance(self.inner, Grounded) else None


def summariser_for(settings: ProviderSettings, loaded: Loaded, progress: Step) -> Counting:
    """The summariser ``settings`` name, counting its calls for the running dialog."""
    from inspector.compaction.summarisers import pick_summariser

    inner = pick_summariser(settings.provider, model=loaded.analysis.model, base_url=settings.base_url)
    return Counting(inner, progress, settings)


def run_cancellable(make: Callable[[], Awaitable[T]], cancelled: Callable[[], bool]) -> T:
    """Run a coroutine to its end on a fresh loop, cancelling it as soon as ``cancelled()``."""

    async def run() -> T:
        task = asyncio.ensure_future(make())
        while not task.done():
            if cancelled():
                task.cancel()
            await asyncio.wait({task}, timeout=0.05)
        return task.result()

    try:
        return asyncio.run(run())
    except (asyncio.CancelledError, Stopped):
        raise Cancelled from None


def progress_text(progress: Progress) -> str:
    """``summary draft: 12,345 of 170,000 turns (7%)``, or the stage alone when its size is unknown."""
    if progress.fraction is None:
        return progress.stage
    return f"{progress.stage}: {progress.done:,} of {progress.total:,} turns ({progress.fraction:.0%})"


def reporter_for(show: Step, cancelled: Callable[[], bool]) -> Reporter:
    """A ``Reporter`` that shows a new stage, or each further 1% of one, and stops when ``cancelled()``."""
    last: list[tuple[str, float]] = [("", -1.0)]

    def on_progress(progress: Progress) -> None:
        stage, fraction = progress.stage, progress.fraction if progress.fraction is not None else 0.0
        if stage != last[0][0] or fraction - last[0][1] >= 0.01 or (fraction >= 1 > last[0][1]):
            last[0] = (stage, fraction)
            show(progress_text(progress), progress)

    return Reporter(on_progress=on_progress, is_cancelled=cancelled)


def run_one(loaded: Loaded, split: int, options: RunOptions, summariser: Counting,
            cancelled: Callable[[], bool]) -> CompressionResult:
    """One strategy: ``strategies.run_request`` (what ``compact --strategy`` runs)."""
    from inspector.compaction.strategies import run_request

    request = request_for(loaded, split, options, summariser.settings)
    context = compaction_context(loaded.session, loaded.analysis)
    reporter = reporter_for(summariser.progress, cancelled)
    return run_cancellable(
        lambda: run_request(request, context, loaded.analysis.turns, summariser, reporter), cancelled)


def run_compare(loaded: Loaded, split: int, options: RunOptions, summariser: Counting,
                cancelled: Callable[[], bool]) -> Comparison:
    """Both strategies: ``strategies.compare`` (what ``compact --compare`` runs)."""
    from inspector.compaction.strategies import compare

    request = replace(request_for(loaded, split, options, summariser.settings), compare=True)
    context = compaction_context(loaded.session, loaded.analysis)
    reporter = reporter_for(summariser.progress, cancelled)
    return run_cancellable(lambda: compare(request, context, loaded.analysis.turns, summariser, reporter), cancelled)
