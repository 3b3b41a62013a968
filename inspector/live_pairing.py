"""The agentic candidates of a growing history, turn by turn (``inspector.live``'s part of them).

``crossing_free_model_turns`` pairs each function response with its call and
keeps the model turns no pair spans; ``Pairing`` does the same one turn at a
time, so an append adds only its own turns.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from inspector.session.figures import CallKey

_UNSET = object()


@dataclass
class Pairing:
    """Function calls waiting for their responses, as ``crossing_free_model_turns`` pairs them,
    and the agentic candidates so far (turn by turn: a pair removes the candidates it spans).

    What the turns of the last message changed is logged (``mark``), so that when Gemini CLI
    writes that message again the pairing goes back to before it (``undo``) instead of being
    copied before every message.  ``low``: how short ``found`` has been since it was set."""

    by_id: dict[str, int] = field(default_factory=dict)
    pending: dict[str | None, list[int]] = field(default_factory=dict)
    found: list[int] = field(default_factory=list)
    log: list[tuple[Any, ...]] | None = None  # what to do to go back to the mark (None: no mark)
    low: int = 0

    def mark(self) -> None:
        self.log = []

    def undo(self) -> None:
        """Back to the state at ``mark``."""
        assert self.log is not None
        found = self.found
        for what, *args in reversed(self.log):
            if what == "id":
                ident, before = args
                if before is _UNSET:
                    del self.by_id[ident]
                else:
                    self.by_id[ident] = before
            elif what == "wait":
                self.pending[args[0]].pop()
            elif what == "unwait":
                self.pending[args[0]].insert(0, args[1])
            elif what == "found":
                found.pop()
                self.low = min(self.low, len(found))
            else:  # "lost": a candidate the pairing removed
                found.append(args[0])
        self.log = None

    def add(self, i: int, role: str, calls: tuple[CallKey, ...], answers: tuple[CallKey, ...]) -> None:
        log = self.log
        covered = False
        for ident, name in answers:
            call_turn = self.by_id.get(ident, -1) if ident else -1
            if call_turn < 0:
                waiting = self.pending.get(name)
                if waiting:
                    call_turn = waiting.pop(0)
                    if log is not None:
                        log.append(("unwait", name, call_turn))
            if 0 <= call_turn < i:
                covered = True
                found = self.found
                while found and found[-1] > call_turn:
                    lost = found.pop()
                    if log is not None:
                        log.append(("lost", lost))
                self.low = min(self.low, len(found))
        if not covered and i > 0 and role == "model":
            self.found.append(i)
            if log is not None:
                log.append(("found",))
        for ident, name in calls:
            if ident:
                if log is not None:
                    log.append(("id", ident, self.by_id.get(ident, _UNSET)))
                self.by_id[ident] = i
            else:
                self.pending.setdefault(name, []).append(i)
                if log is not None:
                    log.append(("wait", name))
