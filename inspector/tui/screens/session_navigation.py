"""Getting around a long session: the split at the cursor, the CLI's agentic split, turn N, search.

A mixin of ``SessionScreen`` (like ``SessionActions``).  Searching runs in a
thread worker over every string a turn holds (text, thoughts, tool arguments
and outputs); the matches come back as one message, ``n`` / ``N`` step through them.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterator
from typing import Any

from textual import work
from textual.worker import get_current_worker

from inspector.analysis import Analysis
from inspector.compaction.budget import Truncation, truncated_content
from inspector.compaction.compress import agentic_split
from inspector.format import visible
from inspector.tui.loading import Loaded
from inspector.tui.messages import SearchFound
from inspector.tui.screens.ask import AskScreen
from inspector.tui.screens.base import InspectorScreen
from inspector.tui.widgets.status_line import StatusLine
from inspector.tui.widgets.turn_table import TurnTable

SEARCH_GROUP = "search"


def cli_agentic_split(analysis: Analysis) -> int:
    """The split ``compact --agentic`` takes: the core's agentic rule on the history after the
    tool-output budget, as ``compress`` applies it (0: there is none)."""
    by_turn: dict[int, list[Truncation]] = {}
    for truncation in analysis.truncations:
        by_turn.setdefault(truncation.turn, []).append(truncation)
    contents = [truncated_content(turn.content, by_turn[i]) if i in by_turn else turn.content
                for i, turn in enumerate(analysis.turns)]
    return agentic_split(contents) if contents else 0


def strings_of(value: Any) -> Iterator[str]:
    """Every string in a turn's content, keys excepted: what a person could have read in it."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from strings_of(item)
    elif isinstance(value, list):
        for item in value:
            yield from strings_of(item)


def parse_turn(text: str, count: int) -> int:
    """A turn number as typed ("145", "1,605"); ValueError with a sentence when it is not one."""
    cleaned = text.strip().replace(",", "").replace("_", "").lstrip("#")
    if not cleaned.isdigit():
        raise ValueError(f"Type a turn number from 0 to {count - 1:,}.")
    number = int(cleaned)
    if number >= count:
        raise ValueError(f"This session has turns 0 to {count - 1:,}; there is no turn {number:,}.")
    return number


def search_query(text: str) -> str:
    if not text.strip():
        raise ValueError("Type the words to look for.")
    return text.strip()


class SessionNavigation(InspectorScreen):
    """Split here, the agentic split, go to turn N, search (for the session view, SessionScreen)."""

    loaded: Loaded | None
    split: int
    agentic_point: int | None = None  # compact --agentic's split; None: not yet computed
    search_text: str = ""
    matches: list[int] = []  # noqa: RUF012 - replaced, never mutated

    @property
    def table(self) -> TurnTable:
        return self.query_one(TurnTable)

    @property
    def status(self) -> StatusLine:
        return self.query_one(StatusLine)

    def set_split(self, split: int) -> None:
        raise NotImplementedError  # SessionScreen moves the split

    # -- the split ----------------------------------------------------------------------
    def split_points(self) -> list[int]:
        """Every turn the kept part may start at: Gemini CLI's candidates and the agentic ones."""
        if self.loaded is None:
            return []
        return sorted(set(self.loaded.analysis.candidates) | self.loaded.agentic_set)

    def action_split_here(self) -> None:
        """Start the kept part at the cursor's turn, when a split may fall there."""
        if self.loaded is None:
            return
        turn = self.table.cursor
        points = self.split_points()
        if turn in points:
            self.set_split(turn)
            return
        if self.loaded.agentic is None and self.loaded.analysis.turns[turn].role == "model":
            self.notify("Still looking for the model turns a split may start at; try again in a moment.", timeout=3)
            return
        at = bisect.bisect_left(points, turn)
        near = [f"{p:,}" for p in (points[at - 1] if at else None, points[at] if at < len(points) else None)
                if p is not None]
        self.notify(f"A split before turn {turn:,} would part a tool call from its result. "
                    f"The nearest split points are turns {' and '.join(near)}.", severity="warning", timeout=6)

    def action_agentic_point(self) -> None:
        """Move the split where ``compact --agentic`` puts it (70% of the weight, before a model turn)."""
        if self.loaded is None:
            return
        if self.agentic_point is None:
            self.notify("Still looking for the agentic split; try again in a moment.", timeout=3)
            return
        if self.agentic_point == 0:
            self.notify("This history has no agentic split: no model turn can start the kept part.",
                        severity="warning", timeout=4)
            return
        self.set_split(self.agentic_point)
        self.table.move_to(self.agentic_point)

    # -- turn N -------------------------------------------------------------------------
    def action_goto_turn(self) -> None:
        if self.loaded is None or not self.loaded.analysis.turns:
            return
        count = len(self.loaded.analysis.turns)

        def chosen(turn: int | None) -> None:
            if turn is not None:
                self.table.move_to(turn)

        self.app.push_screen(AskScreen(f"Go to turn (0 to {count - 1:,})", lambda text: parse_turn(text, count),
                                       placeholder="a turn number"), callback=chosen)

    # -- search -------------------------------------------------------------------------
    def action_search(self) -> None:
        if self.loaded is None:
            return

        def chosen(query: str | None) -> None:
            if query and self.loaded is not None:
                self.search_text = query
                self.status.set("search", f"searching for {visible(query, one_line=True)!r}…")
                self.search_turns(self.loaded, query)

        self.app.push_screen(AskScreen("Search the text of every turn", search_query, initial=self.search_text,
                                       placeholder="words from a prompt, a reply, a tool's arguments or output"),
                             callback=chosen)

    @work(thread=True, exclusive=True, exit_on_error=False, group=SEARCH_GROUP, description="searching the turns")
    def search_turns(self, loaded: Loaded, query: str) -> None:
        worker = get_current_worker()
        needle = query.casefold()
        found: list[int] = []
        for index, turn in enumerate(loaded.analysis.turns):
            if worker.is_cancelled:
                return
            if any(needle in text.casefold() for text in strings_of(turn.content)):
                found.append(index)
        self.post_message(SearchFound(query, found, loaded))

    def on_search_found(self, message: SearchFound) -> None:
        if message.loaded is not self.loaded:
            return  # the file was read again meanwhile
        self.matches = message.matches
        shown = visible(message.query, one_line=True)
        if not self.matches:
            self.status.set("search", f"no turn holds {shown!r}")
            self.notify(f"No turn holds {shown!r}.", severity="warning", timeout=4)
            return
        at = bisect.bisect_left(self.matches, self.table.cursor)
        self.show_match(at % len(self.matches))

    def show_match(self, position: int) -> None:
        turn = self.matches[position]
        self.table.move_to(turn)
        count = len(self.matches)
        noun = "turn holds" if count == 1 else "turns hold"
        self.status.set("search", f"{count:,} {noun} {visible(self.search_text, one_line=True)!r}: "
                                  f"turn {turn:,} is match {position + 1:,} (n / N)")

    def action_search_next(self, direction: int) -> None:
        if not self.matches:
            if self.search_text:
                self.notify(f"No turn holds {visible(self.search_text, one_line=True)!r}.", timeout=3)
            else:
                self.action_search()
            return
        cursor = self.table.cursor
        if direction > 0:
            at = bisect.bisect_right(self.matches, cursor) % len(self.matches)
        else:
            at = (bisect.bisect_left(self.matches, cursor) - 1) % len(self.matches)
        self.show_match(at)
