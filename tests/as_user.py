"""Run a function as another user (the tests run as root in CI): fork, drop privileges, report back.

The child is a fork of the test process, so it runs the code already
imported (the interpreter's own files may not be readable by that user);
call what it will run once in the parent first, so that nothing is left to
import.  It sends back what the function returned, or the exception's type
and text, and never returns into pytest.
"""

from __future__ import annotations

import contextlib
import io
import os
import pickle
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest

NOBODY = 65534


@dataclass(frozen=True)
class Outcome:
    value: Any = None
    error: str | None = None  # "ExceptionType: message"
    stdout: str = ""
    stderr: str = ""


def needs_root() -> None:
    if os.geteuid() != 0:
        pytest.skip("needs root, to drop to another user (CI runs as root)")


def as_user(function: Callable[[], Any], uid: int = NOBODY, gid: int = NOBODY) -> Outcome:
    """``function()`` run by ``uid``:``gid`` (no supplementary groups), with stdout/stderr captured."""
    needs_root()
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns
        code = 0
        try:
            os.close(read)
            os.setgroups([])
            os.setgid(gid)
            os.setuid(uid)
            out, err = io.StringIO(), io.StringIO()
            try:
                with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                    value = function()
                outcome = Outcome(value, None, out.getvalue(), err.getvalue())
            except BaseException as exc:  # reported to the parent, which asserts on it
                outcome = Outcome(None, f"{type(exc).__name__}: {exc}", out.getvalue(), err.getvalue())
            os.write(write, pickle.dumps(outcome))
        except BaseException:
            code = 1
        finally:
            os._exit(code)
    os.close(write)
    chunks = []
    while chunk := os.read(read, 1 << 16):
        chunks.append(chunk)
    os.close(read)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0 and chunks, "the child process failed"
    result: Outcome = pickle.loads(b"".join(chunks))
    return result
