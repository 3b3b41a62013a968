"""Running a compaction for the app: the same calls, with the same typed values, as the CLI.

``compact`` and ``compact --compare`` build a ``CompactionRequest`` from their
flags, read the session's ``CompactionContext`` from its analysis and call
``strategies.run_request`` / ``strategies.compare``; the app does exactly that
here, so a figure the app shows is the figure the CLI prints.  The app holds
one default request (``default_request``: what its command line said) and
derives each run's from it with ``dataclasses.replace`` (``request_for_run``).
``run_one`` and ``run_compare`` block (they run in a
worker thread), poll ``cancelled`` while the summariser works, and raise
``Cancelled`` when it says stop.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any, TypeVar

from inspector.compaction.request import STRATEGIES as STRATEGIES  # the dialog offers these
from inspector.compaction.request import (
    CompactionRequest,
    Strategy,
    compaction_context,
    named_provider,
    target_problem,
)
from inspector.compaction.summarisers.base import Grounded, Reporting, Summariser
from inspector.format import plural
from inspector.progress import Cancelled as Stopped
from inspector.progress import Progress, Reporter
from inspector.tui.loading import Cancelled, Loaded

if TYPE_CHECKING:  # (compression's modules load when a run starts, not with the app)
    from inspector.compaction.compress import CompressionResult
    from inspector.compaction.snapshot import Provenance
    from inspector.compaction.statuses import ToolStatuses
    from inspector.compaction.strategies import Comparison

T = TypeVar("T")
# A step to show: its words, and the core's report when it knows how far the stage is (a real bar then).
Step = Callable[[str, Progress | None], object]


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


def request_for_run(default: CompactionRequest, loaded: Loaded, split: int, strategy: Strategy,
                    target: float | None, focus: str = "") -> CompactionRequest:
    """``compact``'s request for one run: the app's ``default`` (what the command line said, and the
    summariser P chose), with the strategy, the staged target (the reference strategy has none), the focus
    and the split this run uses, and the session's model.  ``RequestError`` for a combination the CLI
    refuses too."""
    return replace(default, strategy=strategy, target=target if strategy == "staged" else None,
                   instruction=focus, split=chosen_split(loaded, split), model=loaded.analysis.model)


def default_request(provider: str = "offline", base_url: str | None = None) -> CompactionRequest:
    """The request every run of the app starts from: who writes snapshots (``--provider``, ``--base-url``),
    and ``--force`` (the app compacts when asked, even below the threshold)."""
    return CompactionRequest(provider=named_provider(provider), base_url=base_url, force=True)


class Counting:
    """A summariser that reports each call (``progress``) and otherwise is the one it wraps."""

    def __init__(self, inner: Summariser, progress: Step) -> None:
        self.inner = inner
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


def summariser_for(request: CompactionRequest, progress: Step) -> Counting:
    """The summariser ``request`` names (provider, model, base URL), counting its calls for the running dialog."""
    from inspector.compaction.summarisers import pick_summariser

    inner = pick_summariser(request.provider, model=request.model, base_url=request.base_url)
    return Counting(inner, progress)


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


def run_one(loaded: Loaded, request: CompactionRequest, summariser: Counting,
            cancelled: Callable[[], bool]) -> CompressionResult:
    """One strategy: ``strategies.run_request`` (what ``compact --strategy`` runs)."""
    from inspector.compaction.strategies import run_request

    context = compaction_context(loaded.session, loaded.analysis)
    reporter = reporter_for(summariser.progress, cancelled)
    return run_cancellable(
        lambda: run_request(request, context, loaded.analysis.turns, summariser, reporter), cancelled)


def run_compare(loaded: Loaded, request: CompactionRequest, summariser: Counting,
                cancelled: Callable[[], bool]) -> Comparison:
    """Both strategies: ``strategies.compare`` (what ``compact --compare`` runs; ``request.compare`` set)."""
    from inspector.compaction.strategies import compare

    context = compaction_context(loaded.session, loaded.analysis)
    reporter = reporter_for(summariser.progress, cancelled)
    return run_cancellable(lambda: compare(request, context, loaded.analysis.turns, summariser, reporter), cancelled)
