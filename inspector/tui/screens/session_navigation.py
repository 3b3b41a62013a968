"""Getting around a long session: the split at the cursor, the CLI's agentic split, turn N, search.

A mixin of ``SessionScreen`` (like ``SessionActions``).  Searching runs in a
thread worker over every string a turn holds (text, thoughts, tool arguments
and outputs); the matches come back as one message, ``n`` / ``N`` step through them.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from textual import work
from textual.worker import get_current_worker

from inspector.analysis import Analysis
from inspector.compaction.budget import Truncation, truncated_content
from inspector.compaction.compress import agentic_split
from inspector.format import visible
from inspector.tui.loading import Loaded
from inspector.tui.messages import SearchFound, ViewCleared, ViewReady
from inspector.tui.screens.ask import AskScreen
from inspector.tui.screens.base import InspectorScreen
from inspector.tui.widgets.status_line import StatusLine
from inspector.tui.widgets.turn_table import TurnTable

SEARCH_GROUP = "search"
VIEW_GROUP = "view"
_SIZE = re.compile(r"([<>])=?([\d,_]+)")


@dataclass(frozen=True)
class TurnFilter:
    """Which turns the table shows: every word must hold.  ``user`` / ``model`` name a role,
    ``>N`` / ``<N`` bound the estimated tokens, any other word is part of the turn's kind
    ("tool result", "thought") or of a tool's name ("read_file")."""

    text: str
    words: tuple[str, ...] = ()
    roles: frozenset[str] = frozenset()
    at_least: int | None = None
    at_most: int | None = None

    def keeps(self, analysis: Analysis, index: int) -> bool:
        turn = analysis.turns[index]
        if self.roles and turn.role not in self.roles:
            return False
        tokens = analysis.turn_tokens(index)
        if self.at_least is not None and tokens < self.at_least:
            return False
        if self.at_most is not None and tokens > self.at_most:
            return False
        if not self.words:
            return True
        about = " ".join([analysis.kinds[index], *tool_names(turn.content)]).casefold()
        return all(word in about for word in self.words)


def parse_filter(text: str) -> TurnFilter:
    """What was typed in the filter dialog; ValueError with a sentence when it makes no sense."""
    words: list[str] = []
    roles: set[str] = set()
    at_least = at_most = None
    for word in text.split():
        size = _SIZE.fullmatch(word)
        if size is not None:
            number = int(size.group(2).replace(",", "").replace("_", ""))
            if size.group(1) == ">":
                at_least = number
            else:
                at_most = number
        elif word.casefold() in ("user", "model"):
            roles.add(word.casefold())
        elif word[0] in "<>":
            raise ValueError(f"{word!r} is not a size: write >1000 or <500 (estimated tokens).")
        else:
            words.append(word.casefold())
    if not (words or roles or at_least is not None or at_most is not None):
        raise ValueError("Type what to keep: a kind (tool result), a tool (read_file), user or model, >1000.")
    return TurnFilter(text.strip(), tuple(words), frozenset(roles), at_least, at_most)


def tool_names(content: dict[str, Any]) -> list[str]:
    """The tools a turn calls or answers."""
    names: list[str] = []
    parts = content.get("parts")
    for part in parts if isinstance(parts, list) else ():
        if isinstance(part, dict):
            for key in ("functionCall", "functionResponse"):
                inner = part.get(key)
                if isinstance(inner, dict) and isinstance(inner.get("name"), str):
                    names.append(inner["name"])
    return names


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


AGENTIC_GROUP = "agentic"  # the worker that finds compact --agentic's split


class SessionNavigation(InspectorScreen):
    """Split here, the agentic split, go to turn N, search (for the session view, SessionScreen)."""

    loaded: Loaded | None
    split: int
    agentic_point: int | None = None  # compact --agentic's split; None: not yet computed
    search_text: str = ""
    matches: list[int] = []  # noqa: RUF012 - replaced, never mutated
    _search_from: int | None = None  # the first turn changed since ``matches`` were found (None: none)
    turn_filter: TurnFilter | None = None
    by_tokens: bool = False

    @property
    def table(self) -> TurnTable:
        return self.query_one(TurnTable)

    @property
    def status(self) -> StatusLine:
        return self.query_one(StatusLine)

    def set_split(self, split: int) -> None:
        raise NotImplementedError  # SessionScreen moves the split

    def find_agentic(self, loaded: Loaded) -> object:
        raise NotImplementedError  # SessionScreen's worker

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
            if self.loaded.changed_from is not None and not any(
                    w.group == AGENTIC_GROUP and not w.is_finished for w in self.workers):
                self.find_agentic(self.loaded)  # not looked for since the last live append
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
                self._search_from = None
                self.status.set("search", f"searching for {visible(query, one_line=True)!r}…")
                self.search_turns(self.loaded, query)

        self.app.push_screen(AskScreen("Search the text of every turn", search_query, initial=self.search_text,
                                       placeholder="words from a prompt, a reply, a tool's arguments or output"),
                             callback=chosen)

    def search_again(self, loaded: Loaded) -> None:
        """After the file changed, the search shown (found or not) runs again on what is shown now: after
        an append only from the first turn that changed, the matches before it kept."""
        if not self.search_text:
            return
        changed = loaded.changed_from
        start = 0 if changed is None else changed if self._search_from is None else min(self._search_from, changed)
        self._search_from = start
        self.search_turns(loaded, self.search_text, jump=False, start=start,
                          kept=[turn for turn in self.matches if turn < start])

    @work(thread=True, exclusive=True, exit_on_error=False, group=SEARCH_GROUP, description="searching the turns")
    def search_turns(self, loaded: Loaded, query: str, jump: bool = True, start: int = 0,
                     kept: list[int] | None = None) -> None:
        worker = get_current_worker()
        needle = query.casefold()
        found: list[int] = list(kept or ())
        turns = loaded.analysis.turns
        for index in range(start, len(turns)):
            if worker.is_cancelled:
                return
            if any(needle in text.casefold() for text in strings_of(turns[index].content)):
                found.append(index)
        self.post_message(SearchFound(query, found, loaded, jump))

    def on_search_found(self, message: SearchFound) -> None:
        if message.loaded is not self.loaded:
            return  # the file was read again meanwhile
        self._search_from = None
        self.matches = message.matches
        shown = visible(message.query, one_line=True)
        if not self.matches:
            self.status.set("search", f"no turn holds {shown!r}")
            if message.jump:  # (run again after a change on disk: the status line says it, no toast per append)
                self.notify(f"No turn holds {shown!r}.", severity="warning", timeout=4)
            return
        at = bisect.bisect_left(self.matches, self.table.cursor)
        if message.jump:
            self.show_match(at % len(self.matches))
        else:
            self.status.set("search", f"{self.holding(message.query)} (n / N)")

    def show_match(self, position: int) -> None:
        turn = self.matches[position]
        self.table.move_to(turn)
        self.status.set("search", f"{self.holding(self.search_text)}: turn {turn:,} is match {position + 1:,} (n / N)")

    def holding(self, query: str) -> str:
        """How many turns hold the words searched for: "3 turns hold 'pelican'"."""
        count = len(self.matches)
        return f"{count:,} {'turn holds' if count == 1 else 'turns hold'} {visible(query, one_line=True)!r}"

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

    # -- filter and order ------------------------------------------------------------------
    def action_filter(self) -> None:
        if self.loaded is None:
            return

        def chosen(turn_filter: TurnFilter | None) -> None:
            if turn_filter is not None:
                self.turn_filter = turn_filter
                self.apply_view()

        self.app.push_screen(AskScreen("Show only the turns that match (Esc on the table shows all again)",
                                       parse_filter, initial=self.turn_filter.text if self.turn_filter else "",
                                       placeholder="tool result   read_file   model   >1000"), callback=chosen)

    def action_order(self) -> None:
        """Turn order <-> largest first."""
        if self.loaded is None:
            return
        self.by_tokens = not self.by_tokens
        self.apply_view()

    def clear_view(self) -> bool:
        """Drop the filter and the order; True when there was one."""
        if self.turn_filter is None and not self.by_tokens:
            return False
        self.turn_filter, self.by_tokens = None, False
        self.apply_view()
        return True

    def apply_view(self) -> None:
        """Show the turns the filter keeps, in the order chosen (worked out in a thread)."""
        if self.loaded is None:
            return
        if self.turn_filter is None and not self.by_tokens:
            self.workers.cancel_group(self, VIEW_GROUP)
            self.table.set_view(None)
            self.status.set("view", "")
            return
        self.status.set("view", "filtering…")
        self.compute_view(self.loaded, self.turn_filter, self.by_tokens)

    @work(thread=True, exclusive=True, exit_on_error=False, group=VIEW_GROUP, description="filtering the turns")
    def compute_view(self, loaded: Loaded, turn_filter: TurnFilter | None, by_tokens: bool) -> None:
        worker = get_current_worker()
        analysis = loaded.analysis
        shown = list(range(len(analysis.turns)))
        if turn_filter is not None:
            shown = [i for i in shown if not worker.is_cancelled and turn_filter.keeps(analysis, i)]
        if by_tokens:
            shown.sort(key=lambda i: (-analysis.quarters[i], i))
        if not worker.is_cancelled:
            self.post_message(ViewReady(shown, by_tokens, loaded))

    def on_view_ready(self, message: ViewReady) -> None:
        if message.loaded is not self.loaded:
            return
        shown = message.shown or []
        total = len(message.loaded.analysis.turns)
        if self.turn_filter is not None and not shown:
            self.notify(f"No turn matches {visible(self.turn_filter.text, one_line=True)!r}; every turn is shown.",
                        severity="warning", timeout=4)
            self.turn_filter = None
            self.apply_view()
            return
        self.table.set_view(shown, by_tokens=message.by_tokens)
        what = []
        if self.turn_filter is not None:
            noun = "turn" if total == 1 else "turns"
            what.append(f"{len(shown):,} of {total:,} {noun} match "
                        f"{visible(self.turn_filter.text, one_line=True)!r} (F)")
        if message.by_tokens:
            what.append("largest first (o)")
        self.status.set("view", ", ".join(what) + "; Esc shows all")

    def on_view_cleared(self, message: ViewCleared) -> None:
        self.turn_filter, self.by_tokens = None, False
        self.status.set("view", "")
