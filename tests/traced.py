"""Memory measured the way the memory tests measure it: every allocation of one call traced."""

from __future__ import annotations

import gc
import tracemalloc
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def traced(call: Callable[[], T]) -> tuple[T, int, int]:
    """``call()`` with every allocation traced, after a full collection: its result, the bytes it
    still holds once it returned (what the result keeps) and the peak while it ran."""
    gc.collect()
    tracemalloc.start()
    try:
        result = call()
        held, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return result, held, peak
