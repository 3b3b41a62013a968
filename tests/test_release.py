"""Memory freed in the middle of the C heap goes back to the system when the app asks."""

from __future__ import annotations

import subprocess
import sys

import pytest

from inspector.session.release import _malloc_trim

SCRIPT = r"""
import sys
from inspector.session.release import give_back_free_memory

def rss_kib():
    with open("/proc/self/status") as handle:
        return next(int(line.split()[1]) for line in handle if line.startswith("VmRSS:"))

blocks = [bytearray(b"x" * 60_000) for _ in range(1_000)]  # ~60 MB from the heap (below mmap's threshold)
pinned = bytearray(b"y" * 60_000)  # allocated last: the heap cannot shrink from its top by itself
del blocks
before = rss_kib()
assert give_back_free_memory()
after = rss_kib()
print(before, after)
"""


@pytest.mark.skipif(_malloc_trim() is None or not sys.platform.startswith("linux"), reason="glibc on Linux only")
def test_freed_heap_memory_goes_back_to_the_system() -> None:
    done = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, check=True)
    before, after = (int(v) for v in done.stdout.split())
    assert before - after > 40_000, f"RSS {before:,} KiB -> {after:,} KiB"
