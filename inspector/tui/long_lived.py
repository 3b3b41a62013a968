"""Keeping what a session view holds for long out of the cyclic collector's scans.

A read session, its analysis and what the passes after it build (masking and
cost, the turns' contents for compact --agentic's split, the live state) are
millions of objects on a 100 MB session, none of them in a reference cycle,
living as long as the session is shown.  CPython's collector still traverses
them all at each full collection: seconds with every thread stopped, at a
moment it chooses (bench/bench_live.py measured 2.4-5.4 s each, every 50-100
appends, on the 107 MB bench session).  ``gc.freeze`` moves the objects
tracked now out of its scans; they are still freed when their last reference
goes.  The price: an object of the interface alive at that moment that later
dies in a cycle is not collected (about 10,000 small objects, ~1 MB, per
freeze).  So the app freezes after each step of a full read, never per
append: an append's copies are collected in the worker that made them
(``LiveFollower.settle_live``, tui/session/live.py).

A worker that freezes is frozen with it: Textual's ``Worker`` is in a cycle
with its context, and keeps its arguments and its result.  Once it ends, that
cycle is never collected, and a version of the session it was given or gave
back (~100 MB on the 107 MB bench session) would live as long as the app.  So
a version goes to such a worker in a ``Handed`` box the worker empties, and
such a worker returns nothing (it posts what it made).
"""

from __future__ import annotations

import gc
from typing import Generic, TypeVar

T = TypeVar("T")


class Handed(Generic[T]):
    """A value handed to a worker that calls ``keep_long_lived``: taken out once, so the worker (kept
    for good by its own frozen cycle once it ends) holds nothing of it."""

    __slots__ = ("_value",)

    def __init__(self, value: T) -> None:
        self._value: T | None = value

    def take(self) -> T:
        value, self._value = self._value, None
        assert value is not None, "taken twice"
        return value


def keep_long_lived() -> None:
    """Keep every object tracked now out of the collector's scans (see the module's notes)."""
    gc.freeze()
