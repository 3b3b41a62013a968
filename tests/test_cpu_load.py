"""The busy half of ``machine_load`` loads the core the test runs on, and what the test starts runs there."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests import fault_child
from tests.cpu_load import busy_core
from tests.test_store import sample_copy

pytestmark = pytest.mark.skipif(not hasattr(os, "sched_setaffinity") or len(os.sched_getaffinity(0)) < 2,
                                reason="needs Linux affinity and two cores (elsewhere every core spins)")


def test_a_busy_test_runs_on_one_core_beside_a_spinner_and_gets_its_cores_back(tmp_path: Path) -> None:
    before = os.sched_getaffinity(0)
    with busy_core() as core:
        assert os.sched_getaffinity(0) == {core}
        started = subprocess.run([sys.executable, "-c", "import os; print(sorted(os.sched_getaffinity(0)))"],
                                 capture_output=True, text=True, check=True)
        assert started.stdout.strip() == f"[{core}]"
        spinners = [pid for pid in os.listdir("/proc") if pid.isdigit() and _spins(int(pid))]
        assert spinners and all(os.sched_getaffinity(int(pid)) == {core} for pid in spinners)
        # a fault-injection child, forked from a server started before, is given the test's core and works
        child = fault_child.start("apply", sample_copy(tmp_path, "coding-task.jsonl"), 0)
        assert child.process.pid is not None
        killed, calls, _, _ = child.finish()
        assert not killed and calls > 3
    assert os.sched_getaffinity(0) == before


def _spins(pid: int) -> bool:
    """A spinner this process started (its parent is us and its command line is the spin loop)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
        command = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False
    return f"PPid:\t{os.getpid()}\n" in status and b"while True" in command
