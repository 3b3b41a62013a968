"""A big file that holds NUL bytes is named as binary data without being read whole.

A recording of 8 MB or more is read block by block; a NUL byte made that
reader give up and read the whole file into memory, only to say "binary
data" at the first NUL (a 900 MB file of NULs after one good line: 1.9 GB
and 8 s).  Now the block that holds the first NUL says so, with the same
offset and line as before.  The checks run in a child process limited to
1 GB of memory, on sparse files (no disk space is used).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

SAMPLE = Path(__file__).resolve().parents[1] / "sample_sessions" / "coding-task.jsonl"
LIMITED = "import resource, runpy, sys\n" \
          "resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))\n" \
          "sys.argv = ['session-inspector', *sys.argv[1:]]\n" \
          "runpy.run_module('inspector', run_name='__main__')\n"


def _run(*argv: str, serial: bool = False) -> tuple[int, str, str]:
    env = dict(os.environ)
    env.pop("SESSION_INSPECTOR_SERIAL", None)
    if serial:
        env["SESSION_INSPECTOR_SERIAL"] = "1"
    done = subprocess.run([sys.executable, "-c", LIMITED, *argv], capture_output=True, text=True, env=env,
                          timeout=120, check=False)
    return done.returncode, done.stdout, done.stderr


def _expected(path: Path, nul: int) -> str:
    """The words the reader says for the first NUL at ``nul`` (its line counted here, from the bytes)."""
    with path.open("rb") as handle:
        line = handle.read(nul).count(b"\n") + 1
    return f"session-inspector: {path}:{line}: binary data (a NUL byte at offset {nul:,}), not a session file\n"


@pytest.mark.parametrize("serial", [True, False])
def test_a_good_line_then_700_mb_of_nuls(tmp_path: Path, serial: bool) -> None:
    path = tmp_path / "zeros.jsonl"
    head = SAMPLE.read_bytes().split(b"\n", 1)[0] + b"\n"
    path.write_bytes(head)
    os.truncate(path, 700 << 20)  # a hole: reads as NULs
    for command in ("analyze", "export"):
        code, out, err = _run(command, str(path), serial=serial)
        assert (code, out, err) == (2, "", _expected(path, len(head))), err[-1500:]


@pytest.mark.parametrize("serial", [True, False])
def test_a_nul_in_the_last_part_of_a_big_recording(tmp_path: Path, serial: bool) -> None:
    """With two processes, the second one's part holds the NUL: its line is counted from the file's start."""
    path = tmp_path / "late.jsonl"
    data = SAMPLE.read_bytes()
    body = data.split(b"\n", 2)[2]
    copies = (12 << 20) // len(body) + 1
    good = data + body.replace(b'"id":"', b'"id":"x') * copies  # the ids repeat: each copy replaces the last
    nul = len(good) * 9 // 10
    path.write_bytes(good[:nul] + b"\x00" + good[nul + 1:])
    code, out, err = _run("analyze", str(path), serial=serial)
    assert (code, out, err) == (2, "", _expected(path, nul)), err[-1500:]


@pytest.mark.parametrize("filler", [b" ", b"a"])
def test_a_line_too_long_for_the_memory_is_one_line_not_a_traceback(tmp_path: Path, filler: bytes) -> None:
    """A 250 MB last line (blanks, or a prompt's text) under a 1 GB limit: a MemoryError traceback before.
    The prompt's is said in one line; the blank one is read, as Gemini CLI reads it (it skips it)."""
    path = tmp_path / "long-line.jsonl"
    with path.open("wb") as out:
        out.write(SAMPLE.read_bytes())
        out.write(b"" if filler == b" " else b'{"id":"long","type":"user","content":"')
        block = filler * (1 << 20)
        for _ in range(250):
            out.write(block)
        out.write(b"" if filler == b" " else b'"}\n')
    size = path.stat().st_size
    for command in ("analyze", "export"):
        code, out, err = _run(command, str(path))
        if filler == b" ":  # a blank line, skipped as Gemini CLI skips it, costs no parse and no copy (issue 37.8)
            assert code == 0 and out and "Traceback" not in err, err[-1500:]
            continue
        assert code == 2 and out == "" and "Traceback" not in err, err[-1500:]
        assert err == (f"session-inspector: {path}: cannot be read in the memory this process may use "
                       f"({size:,} bytes; reading a session takes several times its size, a very long line more)\n")
