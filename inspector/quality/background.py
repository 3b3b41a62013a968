"""The fact extraction of a history, started before the summariser runs and collected after it.

``start`` begins ``ground.extract`` on the history a compaction is about to
summarise.  In a single-threaded process (the command line) with a second
CPU, on a long history, it runs in a forked child at the same time as the
summariser, and its facts come back as plain values (``session.reader.ForkedCall``);
anywhere else (the app's threads, a short history, one CPU,
``SESSION_INSPECTOR_SERIAL``) it runs when the facts are asked for.  Either
way the facts are the same: the child runs the very same ``extract``.  A
child that fails is replaced by extracting here; one that is no longer
wanted (the summariser failed, the user cancelled) is killed.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from inspector.compaction.reading import fork_allowed
from inspector.compaction.statuses import ToolStatuses
from inspector.progress import Reporter
from inspector.quality.ground import STAGE, Fact, Ground, extract
from inspector.session.reader import ForkedCall

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
        self._child = ForkedCall(lambda: _plain(extract(contents, statuses))) if parallel else None

    @property
    def child_pid(self) -> int:
        """The forked child's process id while it runs (0: none)."""
        return self._child.pid if self._child is not None else 0

    def result(self, reporter: Reporter) -> Ground:
        """The facts: the child's when it sent them, else read here (with progress and cancellation)."""
        if self._ground is None and self._child is not None:
            reporter.check()
            reporter.report(STAGE, 0, len(self._contents))
            sent, value = self._child.result()
            self._child = None
            if sent:
                self._ground = _from_plain(value)
                reporter.report(STAGE, len(self._contents), len(self._contents))
        if self._ground is None:
            self._ground = extract(self._contents, self._statuses, reporter)
        return self._ground

    def close(self) -> None:
        """Stop a child whose facts were never asked for."""
        if self._child is not None:
            self._child.kill()
            self._child = None

    def __enter__(self) -> Extraction:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def start(contents: Sequence[dict[str, Any]], statuses: ToolStatuses) -> Extraction:
    """Begin extracting the facts of ``contents``; see the module doc for where it runs."""
    return Extraction(contents, statuses, parallel=fork_allowed(len(contents), PARALLEL_MIN_TURNS))
