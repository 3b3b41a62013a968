"""The fact extraction of a history, started before the summariser runs and collected after it.

``start`` begins ``ground.extract`` on the history a compaction is about to
summarise.  In a single-threaded process (the command line) with a second
CPU, on a long history, it runs in a forked child at the same time as the
summariser, and its facts come back through a pipe as plain values;
anywhere else (the app's threads, a short history, one CPU,
``SESSION_INSPECTOR_SERIAL``) it runs when the facts are asked for.  Either
way the facts are the same: the child runs the very same ``extract``.  A
child that fails is replaced by extracting here; one that is no longer
wanted (the summariser failed, the user cancelled) is killed.
"""

from __future__ import annotations

import contextlib
import marshal
import os
import signal
from collections.abc import Sequence
from typing import Any

from inspector.compaction.reading import fork_allowed
from inspector.compaction.statuses import ToolStatuses
from inspector.progress import Reporter
from inspector.quality.ground import STAGE, Fact, Ground, extract

PARALLEL_MIN_TURNS = 10_000  # below this a fork costs more than it saves


def _plain(ground: Ground) -> tuple[Any, ...]:
    facts = [(f.kind, f.value, f.turn, f.turns, f.key, f.state, f.extra) for f in ground.facts]
    return (facts, ground.ops_by_path, ground.outcomes_by_command, ground.programs, ground.shell_text,
            ground.previous_text)


def _from_plain(value: tuple[Any, ...]) -> Ground:
    facts, ops, outcomes, programs, shell_text, previous_text = value
    return Ground([Fact(*f) for f in facts], ops, outcomes, programs, shell_text, previous_text)


class Extraction:
    """``extract(contents, statuses)``, begun by ``start`` and read with ``result``; ``close`` when done."""

    def __init__(self, contents: Sequence[dict[str, Any]], statuses: ToolStatuses, *, parallel: bool) -> None:
        self._contents = contents
        self._statuses = statuses
        self._ground: Ground | None = None
        self._pid = 0
        self._reader = -1
        if parallel:
            self._fork()

    def _fork(self) -> None:
        reader, writer = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child: extract, send the facts, leave at once
            status = 1
            try:
                os.close(reader)
                payload = marshal.dumps(_plain(extract(self._contents, self._statuses)))
                with os.fdopen(writer, "wb") as out:
                    out.write(payload)
                status = 0
            finally:
                os._exit(status)
        os.close(writer)
        self._pid, self._reader = pid, reader

    def result(self, reporter: Reporter) -> Ground:
        """The facts: the child's when it sent them, else read here (with progress and cancellation)."""
        if self._ground is None and self._pid:
            reporter.check()
            reporter.report(STAGE, 0, len(self._contents))
            with os.fdopen(self._reader, "rb") as incoming:
                payload = incoming.read()
            self._reader = -1
            _, status = os.waitpid(self._pid, 0)
            self._pid = 0
            if status == 0 and payload:
                self._ground = _from_plain(marshal.loads(payload))
                reporter.report(STAGE, len(self._contents), len(self._contents))
        if self._ground is None:
            self._ground = extract(self._contents, self._statuses, reporter)
        return self._ground

    def close(self) -> None:
        """Stop a child whose facts were never asked for."""
        if self._reader >= 0:
            os.close(self._reader)
            self._reader = -1
        if self._pid:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self._pid, signal.SIGKILL)
            os.waitpid(self._pid, 0)
            self._pid = 0

    def __enter__(self) -> Extraction:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def start(contents: Sequence[dict[str, Any]], statuses: ToolStatuses) -> Extraction:
    """Begin extracting the facts of ``contents``; see the module doc for where it runs."""
    return Extraction(contents, statuses, parallel=fork_allowed(len(contents), PARALLEL_MIN_TURNS))
