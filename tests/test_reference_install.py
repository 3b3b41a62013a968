"""The reference package is installed once, however many processes ask for it at the same time.

pytest-xdist runs the suite in several worker processes, each of which may find the package
missing; ``tests/reference/install.ensure`` takes a file lock, so one installs and the others wait
and find it installed.  npm is replaced here by a script that writes what the real install writes
and logs each call, so the test needs no network.
"""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys
import time
from pathlib import Path

from tests.conftest import REPO
from tests.reference.install import VERSION, dist_src

FAKE_NPM = f"""#!/bin/sh
echo "$$" >> "$NPM_LOG"
mkdir -p node_modules/@google/gemini-cli-core/dist/src/utils
echo '{{"version": "{VERSION}"}}' > node_modules/@google/gemini-cli-core/package.json
: > node_modules/@google/gemini-cli-core/dist/src/utils/tokenCalculation.js
"""
ASK = ("import sys; from pathlib import Path; from tests.reference.install import ensure; "
       "found = ensure(cache=Path(sys.argv[1])); print(found.installed_seconds is not None)")


def _fake_tools(tmp_path: Path) -> dict[str, str]:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name, text in (("npm", FAKE_NPM), ("node", "#!/bin/sh\nexit 0\n")):
        (bin_dir / name).write_text(text)
        (bin_dir / name).chmod(0o755)
    return {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}", "NPM_LOG": str(tmp_path / "npm.log")}


def _ask(cache: Path, env: dict[str, str]) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-c", ASK, str(cache)], cwd=REPO, env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def _waiting_on(lock: Path) -> int:
    """How many processes the kernel lists as blocked on ``lock``'s flock (``/proc/locks``, ``->`` lines)."""
    inode = f":{lock.stat().st_ino} "
    return sum(1 for line in Path("/proc/locks").read_text().splitlines() if "->" in line and inode in line)


def test_processes_asking_at_once_wait_for_one_install(tmp_path: Path) -> None:
    cache = tmp_path / "cache" / "reference"
    cache.mkdir(parents=True)
    lock = cache.with_name("reference.lock")
    env = _fake_tools(tmp_path)
    with lock.open("a") as held:
        fcntl.flock(held, fcntl.LOCK_EX)  # an install under way in another process
        askers = [_ask(cache, env) for _ in range(2)]
        deadline = time.monotonic() + 60
        while _waiting_on(lock) < 2:  # both reached the lock and wait on it (the kernel says so)
            assert time.monotonic() < deadline, "the processes never waited on the lock"
            try:
                askers[0].wait(timeout=0.02)
            except subprocess.TimeoutExpired:
                continue
            raise AssertionError(f"it did not wait for the install under way: {askers[0].communicate()}")
        subprocess.run(["npm"], cwd=cache, env=env, check=True)  # the other process's install completes
    answers = [a.communicate(timeout=60) for a in askers]
    assert [a.returncode for a in askers] == [0, 0], answers
    assert [out.strip() for out, _ in answers] == ["False", "False"], answers  # neither installed it again
    assert len((tmp_path / "npm.log").read_text().splitlines()) == 1
    assert (dist_src(cache) / "utils" / "tokenCalculation.js").is_file()


def test_the_first_to_ask_installs_and_says_how_long_it_took(tmp_path: Path) -> None:
    cache = tmp_path / "cache" / "reference"
    env = _fake_tools(tmp_path)
    first = _ask(cache, env).communicate(timeout=60)
    second = _ask(cache, env).communicate(timeout=60)
    assert (first[0].strip(), second[0].strip()) == ("True", "False"), (first, second)
    assert len((tmp_path / "npm.log").read_text().splitlines()) == 1
