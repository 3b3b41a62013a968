"""Gemini CLI's settings files, as a hostile project folder or home may hold them.

Every command reads ``.gemini/settings.json`` in the folder it runs in (and
the one in the home folder).  A FIFO there made every command wait for ever;
a link to /dev/zero ran it out of memory; bytes that are not UTF-8, JSON
nested 100,000 deep, and a compressionThreshold of NaN or 1e400 ended it with
a traceback; a megabyte of ``/*`` that never close took minutes.  Now such a
file is read as Gemini CLI reads it (or left out when it cannot be read,
like a file that is no JSON), and a threshold too large to use is said where
the threshold's source is.  Each run is a child process with a time and
memory limit, in the project folder, so a hang fails the test.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest

from inspector.settings import resolve_configured_model, resolve_threshold
from tests.as_user import as_user, needs_root

SAMPLE = Path(__file__).resolve().parents[1] / "sample_sessions" / "gemini-cli-0.61-tool-calls.jsonl"
LIMITED = "import resource, runpy, sys\n" \
          "resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))\n" \
          "sys.argv = ['session-inspector', *sys.argv[1:]]\n" \
          "runpy.run_module('inspector', run_name='__main__')\n"


def _analyze(project: Path, home: Path) -> tuple[int, str, str]:
    env = {**os.environ, "GEMINI_CLI_HOME": str(home), "COLUMNS": "300"}
    env.pop("GEMINI_MODEL", None)
    done = subprocess.run([sys.executable, "-c", LIMITED, "analyze", str(SAMPLE)], capture_output=True, text=True,
                          cwd=project, env=env, timeout=60, check=False)
    return done.returncode, done.stdout, done.stderr


def _write(text: str | bytes) -> Callable[[Path], None]:
    def make(path: Path) -> None:
        path.write_bytes(text if isinstance(text, bytes) else text.encode())
    return make


UNUSABLE: dict[str, Callable[[Path], None]] = {
    "fifo": os.mkfifo,
    "device": lambda path: path.symlink_to("/dev/zero"),
    "not utf-8": _write(b'\xff\xfe{"model": {"compressionThreshold": 0.3}}'),
    "nested deep": _write('{"a":' * 100_000 + "1" + "}" * 100_000),
    "NaN": _write('{"model": {"compressionThreshold": NaN}}'),
    "folder": os.mkdir,
}


@pytest.mark.parametrize("where", ["project", "home"])
@pytest.mark.parametrize("kind", list(UNUSABLE))
def test_a_settings_file_that_cannot_be_used_is_left_out(tmp_path: Path, kind: str, where: str) -> None:
    project, home = tmp_path / "project", tmp_path / "home"
    settings = (project if where == "project" else home) / ".gemini" / "settings.json"
    settings.parent.mkdir(parents=True)
    project.mkdir(exist_ok=True)
    (home / ".gemini").mkdir(parents=True, exist_ok=True)
    UNUSABLE[kind](settings)
    code, out, err = _analyze(project, home)
    assert code == 0 and "Traceback" not in err, err[-1500:]
    assert "threshold from default" in out and "(50.0% of 1,048,576)" in out


@pytest.mark.parametrize("written", ["1e400", "1" + "0" * 400])
def test_a_threshold_past_the_doubles_is_said_and_the_default_used(tmp_path: Path, written: str) -> None:
    project, home = tmp_path / "project", tmp_path / "home"
    settings = project / ".gemini" / "settings.json"
    settings.parent.mkdir(parents=True)
    home.mkdir()
    settings.write_text(f'{{"model": {{"compressionThreshold": {written}}}}}', encoding="utf-8")
    code, out, err = _analyze(project, home)
    assert code == 0 and "Traceback" not in err, err[-1500:]
    assert f"threshold from default (model.compressionThreshold in {settings} is too large to use)" in out
    assert "(50.0% of 1,048,576)" in out


def test_block_comments_that_never_close_cost_their_length(tmp_path: Path) -> None:
    project, home = tmp_path / "project", tmp_path / "home"
    settings = project / ".gemini" / "settings.json"
    settings.parent.mkdir(parents=True)
    home.mkdir()
    settings.write_text('{"model": {"compressionThreshold": 0.2}} ' + "/* " * 300_000, encoding="utf-8")
    code, out, err = _analyze(project, home)  # (the square of 900 KB: minutes, past the child's time limit)
    assert code == 0 and "Traceback" not in err, err[-1500:]
    assert f"threshold from {settings}" in out and "(20.0% of 1,048,576)" in out


def test_a_removed_working_folder_has_no_settings(tmp_path: Path) -> None:
    """Run from a folder removed meanwhile (os.getcwd fails): every command ended with a traceback."""
    home = tmp_path / "home"
    (home / ".gemini").mkdir(parents=True)
    (home / ".gemini" / "settings.json").write_text('{"model": {"compressionThreshold": 0.3}}', encoding="utf-8")
    gone = tmp_path / "gone"
    gone.mkdir()
    script = ("import os, sys\n"
              f"os.chdir({str(gone)!r}); os.rmdir({str(gone)!r})\n"
              "from inspector.cli import main\n"
              f"sys.exit(main(['analyze', {str(SAMPLE)!r}]))\n")
    env = {**os.environ, "GEMINI_CLI_HOME": str(home), "COLUMNS": "300"}
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=60,
                          check=False)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr[-1500:]
    assert f"threshold from {home / '.gemini' / 'settings.json'}" in done.stdout  # the user's layer still counts


def test_no_home_folder_means_no_user_settings(tmp_path: Path) -> None:
    """A user with no entry in the password file and no HOME (a container's ``-u 1234``): Path.home() raised."""
    needs_root()
    project = Path(tempfile.mkdtemp(prefix="si-no-home-"))
    try:
        project.chmod(0o755)
        (project / ".gemini").mkdir(mode=0o755)
        (project / ".gemini" / "settings.json").write_text('{"model": {"compressionThreshold": 0.4}}',
                                                           encoding="utf-8")
        (project / ".gemini" / "settings.json").chmod(0o644)

        def without_home() -> tuple[float, str, str]:
            os.environ.pop("HOME", None)
            os.environ.pop("GEMINI_CLI_HOME", None)
            os.environ.pop("GEMINI_MODEL", None)
            threshold = resolve_threshold(project_dir=project)
            return threshold.value, threshold.source, resolve_configured_model(project_dir=project).name

        resolve_threshold(project_dir=project)  # everything the child runs, imported here first
        outcome = as_user(without_home, uid=12345, gid=12345)
        assert outcome.error is None, outcome.error
        assert outcome.value == (0.4, str(project / ".gemini" / "settings.json"), "auto")
    finally:
        shutil.rmtree(project)
