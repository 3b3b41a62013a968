"""Keep the machine's cores busy while a test runs: a race that shows only under load is still a race.

``busy_cores()`` starts one spinning process per core (as two ``while :; do :; done`` loops would on a
two-core machine) and stops them when the block ends.  The fixture ``machine_load`` runs a test twice,
``quiet`` and ``busy``; concurrency, fault-injection and live tests take it so that each is proven on a
loaded machine too.  Nothing here sleeps: the spinners are started before the test's body and killed after.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

SPIN = "while True:\n    pass\n"


def _cores() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)


@contextmanager
def busy_cores(count: int | None = None) -> Iterator[int]:
    """Spin ``count`` processes (default: one per core this process may run on) for the block's length."""
    spinners = [
        subprocess.Popen([sys.executable, "-c", SPIN], stdin=subprocess.DEVNULL,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for _ in range(count if count is not None else _cores())
    ]
    try:
        yield len(spinners)
    finally:
        for spinner in spinners:
            spinner.kill()
        for spinner in spinners:
            spinner.wait()


@pytest.fixture(params=["quiet", "busy"])
def machine_load(request: pytest.FixtureRequest) -> Iterator[str]:
    """The test runs once on a quiet machine and once with every core kept busy."""
    if request.param == "quiet":
        yield "quiet"
        return
    with busy_cores():
        yield "busy"
