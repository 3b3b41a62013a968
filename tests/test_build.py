"""The compiled core (mypyc, see setup.py) and its pure-Python source agree.

The suite runs whichever build is installed.  This test also runs the plain
``.py`` files, copied where no extension shadows them, as whole processes on
every session file, and requires byte-identical ``analyze --json`` output.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

import inspector
from tests.conftest import REPO, session_files


def _run(pythonpath: Path | None, *args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    options: list[str] = []
    if pythonpath is not None:
        # -S: no .pth files, so an editable install's finder cannot hand the copy a compiled module
        # it lacks (it would find inspector/_kernel*.so in the source tree); site-packages by hand.
        site = dict.fromkeys([sysconfig.get_path("purelib"), sysconfig.get_path("platlib")])
        env["PYTHONPATH"] = os.pathsep.join([str(pythonpath), *site])
        options.append("-S")
    return subprocess.run([sys.executable, *options, *args], capture_output=True, text=True, env=env, timeout=120,
                          cwd=pythonpath or REPO)


@pytest.fixture(scope="module")
def pure_copy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("pure")
    shutil.copytree(REPO / "inspector", root / "inspector", ignore=shutil.ignore_patterns("*.so", "__pycache__"))
    return root


def test_pure_copy_runs_as_plain_python(pure_copy: Path) -> None:
    found = _run(pure_copy, "-c", "import inspector; print(inspector.build_info())")
    assert found.stdout.strip() == "pure Python", found.stderr
    assert _run(pure_copy, "-m", "inspector", "--version").stdout.strip().endswith("(pure Python core)")


def test_version_names_the_installed_build() -> None:
    found = _run(None, "-m", "inspector", "--version")
    assert found.stdout.strip() == f"session-inspector {inspector.__version__} ({inspector.build_info()} core)"


@pytest.mark.skipif(inspector.build_info() != "compiled", reason="the core is installed as pure Python "
                    "(SESSION_INSPECTOR_PURE or no compiler): there is no compiled build to compare")
def test_compiled_and_pure_give_identical_analyses(pure_copy: Path) -> None:
    files = session_files()
    assert files
    for path in files:
        compiled = _run(None, "-m", "inspector", "analyze", "--json", str(path))
        pure = _run(pure_copy, "-m", "inspector", "analyze", "--json", str(path))
        assert compiled.returncode == pure.returncode, (path, compiled.stderr, pure.stderr)
        assert compiled.stdout == pure.stdout, path
        assert compiled.stderr == pure.stderr, path
