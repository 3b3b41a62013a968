"""A real apply or revert process, started from a fork server that has the project imported already.

Each fault-injection try needs a process of its own to kill.  Started as ``python -c ...`` it spent
about 0.3 s of CPU importing the project before doing a few milliseconds of work, a hundred times per
test.  Here multiprocessing's fork server imports the store once (``set_forkserver_preload``) and forks
each child from it: still a separate process with its own pid, killed by a real ``SIGKILL`` (from the
store's write hook at a chosen call, or by the test at a chosen moment), its exit code read as before.

The child tells the test over a pipe when it is ready (the session is read; the operation starts next)
and, if it lives, how many hook calls it made, how long the operation took and the calls' names.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import signal
import time
from dataclasses import dataclass
from multiprocessing.connection import Connection
from pathlib import Path

_CONTEXT = multiprocessing.get_context("forkserver")
_CONTEXT.set_forkserver_preload(["inspector.session", "inspector.store", "tests.fault_child"])


def _operate(mode: str, path: str, kill_at: int, cores: set[int] | None, conn: Connection) -> None:
    """The child: apply (or revert) ``path``; its own hook SIGKILLs it at call ``kill_at`` (0: never).
    It runs on the test's ``cores`` (forked from the server, it would otherwise run where the server may)."""
    if cores is not None:
        os.sched_setaffinity(0, cores)
    from inspector.session import history, load
    from inspector.store import apply_history, revert

    file = Path(path)
    calls: list[str] = []

    def hook(step: str) -> None:
        calls.append(step)
        if len(calls) == kill_at:
            os.kill(os.getpid(), signal.SIGKILL)

    if mode == "apply":
        session = load(file)
        turns = history(session)
        new = [{"role": "user", "parts": [{"text": "<state_snapshot>kept</state_snapshot>"}]},
               {"role": "model", "parts": [{"text": "Got it."}]}] + [t.content for t in turns[2:]]
    conn.send("ready")
    began = time.perf_counter()
    if mode == "apply":
        apply_history(session, turns, new, [None, None, *turns[2:]], hook=hook)
    else:
        revert(file, hook=hook)
    conn.send((len(calls), time.perf_counter() - began, calls))
    conn.close()


@dataclass
class Child:
    """One running apply or revert process and the test's end of its pipe."""

    process: multiprocessing.process.BaseProcess
    conn: Connection

    def ready(self) -> None:
        """Wait for the child to say it has read the session (it may also die first, killed by its hook)."""
        if self.conn.poll(120):
            with contextlib.suppress(EOFError):  # killed before it got there
                assert self.conn.recv() == "ready"

    def kill(self) -> None:
        if self.process.pid is not None:
            with contextlib.suppress(ProcessLookupError):  # it finished first
                os.kill(self.process.pid, signal.SIGKILL)

    def finish(self) -> tuple[bool, int, float, list[str]]:
        """(killed, hook calls, seconds the operation took, the calls' names) once the child has ended;
        raises if it failed in another way."""
        result: tuple[int, float, list[str]] | None = None
        try:
            while self.conn.poll(120):
                message = self.conn.recv()
                if message != "ready":
                    result = message
        except EOFError:
            pass
        self.process.join(120)
        self.conn.close()
        code = self.process.exitcode
        if code == -signal.SIGKILL:
            return True, 0, 0.0, []
        assert code == 0 and result is not None, f"the child ended with {code}"
        calls, seconds, names = result
        return False, calls, seconds, names


def start(mode: str, path: Path, kill_at: int) -> Child:
    """Fork an apply (``mode`` "apply") or revert of ``path`` that SIGKILLs itself at hook call ``kill_at``."""
    reader, writer = _CONTEXT.Pipe(duplex=False)
    cores = os.sched_getaffinity(0) if hasattr(os, "sched_getaffinity") else None
    process = _CONTEXT.Process(target=_operate, args=(mode, str(path), kill_at, cores, writer), daemon=True)
    process.start()
    writer.close()  # the child's end: once the child is gone, the test's end reads EOF
    return Child(process, reader)
