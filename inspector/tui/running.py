"""Running a compaction for the app: the same calls, with the same options, as the CLI.

``compact`` and ``compact --compare`` build their options from
``compress.session_defaults`` and call ``strategies.run_strategy`` /
``strategies.compare``; the app does exactly that here, so a figure the app
shows is the figure the CLI prints.  Both functions block (they run in a
worker thread), poll ``cancelled`` while the summariser works, and raise
``Cancelled`` when it says stop.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from inspector.compaction.snapshot import Provenance
from inspector.compaction.statuses import ToolStatuses
from inspector.compaction.summarisers.base import Grounded
from inspector.tui.loading import Cancelled, Loaded

STRATEGIES = ("reference", "staged")
T = TypeVar("T")


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
    if not value > 0:
        raise ValueError("the target must be above 0")
    return value


def chosen_split(loaded: Loaded, split: int) -> int | None:
    """The split to pass: None while the table shows the reference's own (computed after the budget)."""
    return None if split == loaded.analysis.split_point else split


def options_for(loaded: Loaded, split: int, options: RunOptions) -> dict[str, Any]:
    """``compact``'s options for this session (``--force``: the app always compacts on request)."""
    from inspector.compaction.compress import session_defaults

    analysis = loaded.analysis
    return {
        **session_defaults(loaded.session, analysis.turns),
        "model": analysis.model,
        "threshold": analysis.threshold,
        "split": chosen_split(loaded, split),
        "force": True,
        "instruction": options.focus or None,
        "target": options.target,
    }


class Counting:
    """A summariser that reports each call (``progress``) and otherwise is the one it wraps."""

    def __init__(self, inner: Any, progress: Callable[[str], object]) -> None:
        self.inner = inner
        self.progress = progress
        self.name = getattr(inner, "name", None)
        self.model = getattr(inner, "model", None)
        self.calls = 0

    async def summarise(self, system_prompt: str, contents: list[dict[str, Any]]) -> str:
        self.calls += 1
        self.progress(f"summariser call {self.calls} ({len(contents)} turns)")
        return str(await self.inner.summarise(system_prompt, contents))

    def ground(self, statuses: ToolStatuses) -> None:
        if isinstance(self.inner, Grounded):
            self.inner.ground(statuses)

    def cite(self, snapshot: str) -> Provenance | None:
        return self.inner.cite(snapshot) if isinstance(self.inner, Grounded) else None


def summariser_for(app: Any, loaded: Loaded, progress: Callable[[str], object]) -> Counting:
    from inspector.compaction.summarisers import pick_summariser

    inner = pick_summariser(getattr(app, "provider", "offline"), model=loaded.analysis.model,
                            base_url=getattr(app, "base_url", None))
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
    except asyncio.CancelledError:
        raise Cancelled from None


def run_one(loaded: Loaded, split: int, options: RunOptions, summariser: Any,
            cancelled: Callable[[], bool]) -> Any:
    """One strategy: ``strategies.run_strategy`` (what ``compact --strategy`` runs)."""
    from inspector.compaction.strategies import run_strategy

    kwargs = options_for(loaded, split, options)
    return run_cancellable(
        lambda: run_strategy(options.strategy, loaded.analysis.turns, summariser, **kwargs), cancelled)


def run_compare(loaded: Loaded, split: int, options: RunOptions, summariser: Any,
                cancelled: Callable[[], bool]) -> Any:
    """Both strategies: ``strategies.compare`` (what ``compact --compare`` runs)."""
    from inspector.compaction.strategies import compare

    kwargs = options_for(loaded, split, options)
    return run_cancellable(lambda: compare(loaded.analysis.turns, summariser, **kwargs), cancelled)
