"""The offline snapshot's candidate lines as values: ``Item``, the collection ``Items`` that gathers them
(dropping repeats, raising what the user's focus names), and the tiers (``priority``) and kinds (``K_*``)
every part of the digest writes them with (``lines``, ``requests``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from inspector.compaction import snapshot as snap
from inspector.compaction.summarisers.words import focus_words, neutral

# Tiers: higher stays longer when the budget is short.
GOAL, LATEST, RULE, ROOT = 1000, 950, 910, 990
PREVIOUS, PREVIOUS_RULE, PREVIOUS_STATE = 900, 920, 640
TIME_BOUND = frozenset({"task_state", "recent_actions"})  # sections that say where the work stood
AS_OF_PREVIOUS = "As the earlier snapshot had it:"
PLAN, PENDING, MEMORY, FAILURE = 860, 850, 820, 800
CHANGED, COMMIT, COMMAND_FAILED, COMMAND_OK = 780, 760, 700, 650
OTHER_TOOL, READ_PATH, WEB = 560, 600, 500
EARLIER, SINCE_PREVIOUS = 601, 921  # the lowest: newer requests rank higher, below the next tier up
RULE_SINCE = LATEST - 1  # a rule said since an earlier snapshot: above all it carried (it may undo its rules)
# Context for the goal (either may hold the ultimate aim the current task is a step of): an earlier
# snapshot's goal once a request since is the goal, just below it; the user's first request, when it is not
# the current task, below the rules and the earlier snapshot's lines.  Both above ``offline.MUST_KEEP``: the
# budget grows to hold them.
PREVIOUS_GOAL, FIRST_REQUEST = 980, 880
FIXED, AGENT = 300, 200
SHELL_FILE = 775  # a file the shell made, moved or deleted: beside the changed paths
STATUS = 855  # the latest request's status: below the rules and the earlier snapshot, above the plan
REASON, REASONS = 740, 6  # the agent's stated reasons and decisions: the newest six
LOOKUP, LOOKUPS, LOOKUPS_SAID = 590, 655, 3  # a read-only command's line; the count of them; said from 3 on
FINDING, LOOP_RUNS = 790, 5  # what a command printed; a command run this often with no edit between is a loop
FOCUS_BONUS, FOCUS_CAP = 250, 940

# What each item states, in the words the budget report uses (``offline.fit`` drops the lowest tiers first).
K_GOAL, K_LATEST, K_RULE, K_ROOT, K_PREVIOUS = "goal", "latest request", "constraint", "path base", "earlier snapshot"
K_PLAN, K_PENDING, K_MEMORY, K_FAILURE = "plan", "call without result", "memory", "failure"
K_CHANGED, K_COMMIT, K_COMMAND_FAILED, K_COMMAND = "changed path", "commit", "failed command", "command"
K_OTHER_TOOL, K_READ_PATH, K_WEB = "other tool", "read/listed/searched path", "web lookup"
K_EARLIER, K_AGENT, K_FIXED = "earlier request", "agent's last words", "fixed failure"
K_FINDING, K_REASON, K_STATUS = "command finding", "agent's reason", "request status"
K_SHELL_FILE = "file the shell changed"
# The "path base" line (it sits in file_system_state, after artifact_trail and key_knowledge, which use it too).
ROOT_WORDS = "In this snapshot, a path in backticks without a leading `/` is relative to"


@dataclass(frozen=True)
class Item:
    section: str
    priority: int
    seq: int  # reading order within the section
    text: str
    turns: tuple[int, ...]
    group: str = ""  # items of one group share a line: "<group>: a; b"
    focused: bool = False
    kind: str = ""  # what it states (``K_*``)
    relative: bool = False  # names a path relative to the "path base" line: useless without it


class Items:
    """The lines gathered so far, in the order they were said."""

    def __init__(self, focus: str | None, names: Sequence[int | None]) -> None:
        self.items: list[Item] = []
        self.focus = focus_words(focus)
        self.names = names
        self._seen: set[tuple[str, str, str]] = set()

    def name(self, turn: int) -> int:
        """How a line's text names turn ``turn`` of the digested history: its number as recorded
        (``names``, where the history is not the recorded one: staged stages drop turns)."""
        found = self.names[turn] if 0 <= turn < len(self.names) else None
        return turn if found is None else found

    def add(self, section: str, kind: str, priority: int, turn: int, text: str, turns: Iterable[int],
            group: str = "", *, relative: bool = False) -> None:
        text = neutral(text)  # every piece of history text in it, whatever made the line
        key = (section, group, snap.normalise_line(text))
        if not text or key in self._seen:
            return
        self._seen.add(key)
        low = text.lower()
        focused = bool(self.focus) and any(w in low for w in self.focus)
        if focused:
            priority = max(priority, min(priority + FOCUS_BONUS, FOCUS_CAP))
        self.items.append(Item(section, priority, turn * 64 + len(self.items) % 64, text,
                               tuple(sorted(set(turns))), group, focused, kind, relative))
