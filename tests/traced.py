"""Memory measured the way the memory tests measure it: every allocation of one call traced."""

from __future__ import annotations

import gc
import tracemalloc
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def traced(call: Callable[[], T]) -> tuple[T, int, int]:
    """``call()`` with every allocation traced, after a full collection: its result, the bytes it
    still holds once it returned (what the result keeps) and the peak while it ran.

    A full collection comes before the bytes held are read, too: it empties the interpreter's free
    lists, where objects freed by the call wait to be reused (up to 2,000 tuples of each small size),
    which tracemalloc still counts as allocated though nothing holds them."""
    gc.collect()
    tracemalloc.start()
    try:
        result = call()
        peak = tracemalloc.get_traced_memory()[1]
        gc.collect()
        held = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    return result, held, peak
