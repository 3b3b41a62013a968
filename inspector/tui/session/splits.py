"""Where the split of the session view may go: plain functions over the version shown, and
``AgenticFinder``, the part that finds the agentic split points.

The screen owns the split (every part reads it); these say where it may move
and where it lands after the file was read again.
"""

from __future__ import annotations

import bisect
from itertools import accumulate

from textual import work

from inspector.analysis import Analysis, json_deltas
from inspector.compaction.split import split_point
from inspector.tui.loading import Loaded
from inspector.tui.long_lived import Handed, keep_long_lived
from inspector.tui.messages import AgenticFound
from inspector.tui.session.part import Part
from inspector.tui.turn_set import TurnSet

AGENTIC_GROUP = "agentic"  # the worker that finds compact --agentic's split


def cli_agentic_split(analysis: Analysis) -> int:
    """The split ``compact --agentic`` takes: the core's agentic rule on the history after the
    tool-output budget, as ``compress`` applies it (0: there is none).  From the analysis's figures:
    its agentic candidates (the pairing ``agentic_split`` finds in the contents), each turn's JSON
    length, and the turns the budget changes (the only contents built)."""
    if not analysis.turns:
        return 0
    deltas = json_deltas(analysis.turns, analysis.json_chars, analysis.truncations)
    return split_point([0, *accumulate(analysis.json_chars)], analysis.agentic_candidates, False, deltas)


def split_points(loaded: Loaded) -> list[int]:
    """Every turn the kept part may start at: Gemini CLI's candidates and the agentic ones."""
    return sorted(set(loaded.analysis.candidates) | loaded.agentic_set)


def parting_words(points: list[int], turn: int) -> str:
    """Why the kept part cannot start at ``turn`` (not one of ``points``), and the nearest that can."""
    at = bisect.bisect_left(points, turn)
    near = [f"{p:,}" for p in (points[at - 1] if at else None, points[at] if at < len(points) else None)
            if p is not None]
    return (f"A split before turn {turn:,} would part a tool call from its result. "
            f"The nearest split points are turns {' and '.join(near)}.")


def split_after_load(previous: Loaded | None, loaded: Loaded, split: int, chosen: bool) -> tuple[int, bool]:
    """Where the split is after a (re)load, and whether it is still the user's: Gemini CLI's own
    split point, unless the user moved it (``chosen``) and that turn can still start the kept part."""
    analysis = loaded.analysis
    if previous is None or not chosen or split == analysis.compress_split_point:
        return analysis.compress_split_point, False
    was_agentic = split in previous.agentic_set
    if split in TurnSet(analysis.candidates) or (was_agentic and split < len(analysis.turns)):
        return split, True
    return analysis.compress_split_point, False


def split_lost_words(split: int, loaded: Loaded) -> str:
    """What a person is told when the split they chose can no longer start the kept part."""
    return (f"Turn {split:,} can no longer start the kept part; the split is back at "
            f"Gemini CLI's own, turn {loaded.analysis.compress_split_point:,}.")


class AgenticFinder(Part):
    """Finds the agentic candidates (◆) and ``compact --agentic``'s split for the version shown.

    It reads every turn's content (minutes on a 170,000-turn run): after a full read it is
    looked for once masking and cost are shown (``notes_finished``); after a live append (the
    candidates came extended) when asked for (A), not per append."""

    def __init__(self) -> None:
        super().__init__()
        self.point: int | None = None  # compact --agentic's split; None: not yet computed (0: none)

    def loaded_shown(self, loaded: Loaded) -> None:
        self.point = None
        if loaded.changed_from is None and loaded.agentic is None:
            self.find(loaded)  # the candidates (◆) are not known yet

    def notes_finished(self, loaded: Loaded, shown: Loaded | None) -> None:
        """Masking and cost are done: the next long pass (one at a time: together they would each
        take twice as long)."""
        if shown is loaded and loaded.changed_from is None and self.point is None and not self.busy:
            self.find(loaded)

    @property
    def busy(self) -> bool:
        return any(w.group == AGENTIC_GROUP and not w.is_finished for w in self.workers)

    def find(self, loaded: Loaded) -> None:
        self.find_in_worker(Handed(loaded))

    @work(thread=True, exclusive=True, exit_on_error=False, group=AGENTIC_GROUP,
          description="finding agentic split candidates")
    def find_in_worker(self, handed: Handed[Loaded]) -> None:
        loaded = handed.take()
        if loaded.agentic is None:
            loaded.find_agentic()
            self.post_message(AgenticFound(loaded))  # the ◆ marks first; the --agentic split takes longer
        point = cli_agentic_split(loaded.analysis)
        keep_long_lived()
        self.post_message(AgenticFound(loaded, point))

    def on_agentic_found(self, message: AgenticFound) -> None:
        """Noted here; the screen (it bubbles on) moves the split if it can no longer stay."""
        if message.point is not None:
            self.point = message.point
