"""The compiled core (mypyc, see setup.py) and its pure-Python source agree.

The suite runs whichever build is installed.  This test also runs the plain
``.py`` files, copied where no extension shadows them, as whole processes on
every session file, and requires byte-identical ``analyze --json`` output.
"""

from __future__ import annotations

import json
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
    assert found.stdout.strip() == f"pure Python core in {pure_copy / 'inspector'}", found.stderr
    version = _run(pure_copy, "-m", "inspector", "--version").stdout.strip()
    assert version.endswith(f"(pure Python core in {pure_copy / 'inspector'})")


def _installed_package(tmp_path: Path) -> str:
    """The package folder this Python imports when the working folder holds no ``inspector/``."""
    found = subprocess.run([sys.executable, "-c", "import inspector; print(inspector.PACKAGE)"],
                           capture_output=True, text=True, cwd=tmp_path, timeout=120, check=True)
    return found.stdout.strip()


def test_version_names_the_installed_build_and_where_it_runs_from(tmp_path: Path) -> None:
    found = _run(None, "-m", "inspector", "--version")
    assert found.stdout.strip() == f"session-inspector {inspector.__version__} ({inspector.build_info()})"
    assert found.stdout.strip().endswith(f" in {inspector.PACKAGE})")


def test_the_console_script_reports_the_installed_package_from_a_checkout(pure_copy: Path, tmp_path: Path) -> None:
    """Run from a folder holding another ``inspector/`` (a checkout beside a non-editable install),
    ``python -c "import inspector"`` imports that folder; ``session-inspector --version`` does not, and says
    which folder it ran."""
    script = Path(sys.executable).parent / "session-inspector"
    assert script.is_file(), f"{script}: the console script is not installed"
    installed = _installed_package(tmp_path)
    assert installed != str(pure_copy / "inspector")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    by_script = subprocess.run([str(script), "--version"], capture_output=True, text=True, cwd=pure_copy, env=env,
                               timeout=120)
    assert by_script.stdout.strip().endswith(f" core in {installed})"), by_script
    shadowed = subprocess.run([sys.executable, "-c", "import inspector; print(inspector.build_info())"],
                              capture_output=True, text=True, cwd=pure_copy, env=env, timeout=120)
    assert shadowed.stdout.strip() == f"pure Python core in {pure_copy / 'inspector'}", shadowed  # and says so


@pytest.mark.skipif(inspector.build_info().kind != "compiled", reason="the core is installed as pure Python "
                    "(SESSION_INSPECTOR_PURE or no compiler): there is no compiled build to compare")
def test_compiled_and_pure_give_identical_analyses(pure_copy: Path) -> None:
    files = session_files()
    assert files
    compiled = _analyses(None, files)
    pure = _analyses(pure_copy, files)
    assert len(compiled) == len(pure) == len(files), (compiled, pure)
    for path, found, expected in zip(files, pure, compiled, strict=True):
        assert found == expected, path


# One process per build reads every file (a process each took 35 s of the suite's time, mostly starting
# Python): ``analyze --json`` through the command line's entry point, its exit code, stdout and stderr
# captured for each file, the three written out as JSON.
_ANALYSES = """
import io, json, sys
from inspector import cli
found = []
for path in sys.argv[1:]:
    out, err = io.BytesIO(), io.BytesIO()
    sys.stdout = io.TextIOWrapper(out, encoding="utf-8", write_through=True)
    sys.stderr = io.TextIOWrapper(err, encoding="utf-8", write_through=True)
    try:
        code = cli.main(["analyze", "--json", path])
    except SystemExit as exc:
        code = exc.code
    sys.stdout.flush(); sys.stderr.flush()
    found.append([code, out.getvalue().decode("utf-8", "surrogateescape"),
                  err.getvalue().decode("utf-8", "surrogateescape")])
sys.__stdout__.write(json.dumps(found))
"""


def _analyses(pythonpath: Path | None, files: list[Path]) -> list[list[object]]:
    """``[exit code, stdout, stderr]`` of ``analyze --json`` on each file, in one process of the build."""
    run = _run(pythonpath, "-c", _ANALYSES, *map(str, files))
    assert run.returncode == 0, run.stderr
    found: list[list[object]] = json.loads(run.stdout)
    return found
