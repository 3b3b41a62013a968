"""Keep the machine's cores busy while a test runs: a race that shows only under load is still a race.

``busy_cores()`` starts one spinning process per core (as two ``while :; do :; done`` loops would on a
two-core machine) and stops them when the block ends (``bench/bench_store_race.py`` uses it).

The fixture ``machine_load`` runs a test twice, ``quiet`` and ``busy``; concurrency, fault-injection and
live tests take it so that each is proven on a loaded machine too.  ``busy`` moves the test (every thread
of its process, and every process it starts from then on) onto one core and keeps that core busy with a
spinner: the test's processes are preempted at any moment, as on a machine whose every core spins, while
the suite's other worker keeps the other core (spinning every core would take it from that worker too,
and doubled the suite's time).  Where a process cannot be moved (not Linux, one core), every core spins.
Nothing here sleeps: the spinners are started before the test's body and killed after.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager, suppress

import pytest

SPIN = "while True:\n    pass\n"


def cores() -> int:
    """The cores this process may run on."""
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
        for _ in range(count if count is not None else cores())
    ]
    try:
        yield len(spinners)
    finally:
        for spinner in spinners:
            spinner.kill()
        for spinner in spinners:
            spinner.wait()


def _threads() -> list[int]:
    """This process's thread ids (Linux), each of which has an affinity of its own."""
    try:
        return [int(tid) for tid in os.listdir("/proc/self/task")]
    except OSError:
        return [0]


@contextmanager
def busy_core() -> Iterator[int]:
    """Run this process on one core, kept busy by a spinner, for the block's length (the core's number).

    The core is chosen by the pytest-xdist worker's number, so that two workers each load a core of their
    own.  Falls back to ``busy_cores()`` where affinity cannot be set."""
    if not hasattr(os, "sched_setaffinity") or cores() < 2:
        with busy_cores() as count:
            yield count
        return
    allowed = sorted(os.sched_getaffinity(0))
    worker = os.environ.get("PYTEST_XDIST_WORKER", "gw0").removeprefix("gw")
    core = allowed[int(worker) % len(allowed) if worker.isdigit() else 0]
    before: dict[int, set[int]] = {}
    for tid in _threads():
        with suppress(OSError):  # a thread that ended since the list was read (seen on a busy machine)
            before[tid] = os.sched_getaffinity(tid)
            os.sched_setaffinity(tid, {core})
    spinner = subprocess.Popen([sys.executable, "-c", SPIN], stdin=subprocess.DEVNULL,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        yield core
    finally:
        spinner.kill()
        spinner.wait()
        for tid, allowed_before in before.items():
            with suppress(OSError):
                os.sched_setaffinity(tid, allowed_before)


@pytest.fixture(params=["quiet", "busy"])
def machine_load(request: pytest.FixtureRequest) -> Iterator[str]:
    """The test runs once on a quiet machine and once on a core kept busy."""
    if request.param == "quiet":
        yield "quiet"
        return
    with busy_core():
        yield "busy"
