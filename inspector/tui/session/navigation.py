"""Getting around a long session: search, filter and order of the turn table.

``Navigator`` is a part of ``SessionScreen``.  Searching runs in a thread
worker over every string a turn holds (text, thoughts, tool arguments and
outputs); the matches come back as one message, ``n`` / ``N`` step through
them.  The filter and the order are worked out in a worker too and shown by
the table (``TurnTable.set_view``).  What is typed is read by ``queries``.
"""

from __future__ import annotations

import bisect

from textual import work
from textual.worker import get_current_worker

from inspector.format import visible
from inspector.tui.loading import Loaded
from inspector.tui.messages import SearchFound, ViewReady
from inspector.tui.screens.ask import AskScreen
from inspector.tui.session.part import Part
from inspector.tui.session.queries import TurnFilter, parse_filter, parse_turn, search_query, strings_of
from inspector.tui.widgets.status_line import StatusLine
from inspector.tui.widgets.turn_table import TurnTable

SEARCH_GROUP = "search"
VIEW_GROUP = "view"


class Navigator(Part):
    """Search, filter and order for the session view's turn table."""

    def __init__(self, table: TurnTable, status: StatusLine) -> None:
        super().__init__()
        self.table = table
        self.status = status  # its "search" and "view" slots are this part's
        self.loaded: Loaded | None = None  # the version shown (the screen says, ``loaded_shown``)
        self.search_text = ""
        self.matches: list[int] = []
        self._search_from: int | None = None  # the first turn changed since ``matches`` were found (None: none)
        self.turn_filter: TurnFilter | None = None
        self.by_tokens = False
        self._to_largest = False  # the order was just switched to largest first

    def loaded_shown(self, loaded: Loaded) -> None:
        """The screen shows ``loaded``: the filter, the order and the search, on the turns as read now."""
        self.loaded = loaded
        if self.turn_filter is not None or self.by_tokens:
            self.apply_view()
        self.search_again(loaded)

    # -- turn N, the largest ------------------------------------------------------------------
    def goto_turn(self) -> None:
        if self.loaded is None or not self.loaded.analysis.turns:
            return
        count = len(self.loaded.analysis.turns)

        def chosen(turn: int | None) -> None:
            if turn is not None:
                self.table.move_to(turn)

        self.app.push_screen(AskScreen(f"Go to turn (0 to {count - 1:,})", lambda text: parse_turn(text, count),
                                       placeholder="a turn number"), callback=chosen)

    def largest_turn(self) -> None:
        if self.loaded is not None and self.loaded.analysis.turns:
            quarters = self.loaded.analysis.quarters
            self.table.move_to(max(range(len(quarters)), key=quarters.__getitem__))

    # -- search -------------------------------------------------------------------------
    def search(self) -> None:
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
        message.stop()
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

    def search_next(self, direction: int) -> None:
        if not self.matches:
            if self.search_text:
                self.notify(f"No turn holds {visible(self.search_text, one_line=True)!r}.", timeout=3)
            else:
                self.search()
            return
        cursor = self.table.cursor
        if direction > 0:
            at = bisect.bisect_right(self.matches, cursor) % len(self.matches)
        else:
            at = (bisect.bisect_left(self.matches, cursor) - 1) % len(self.matches)
        self.show_match(at)

    # -- filter and order ------------------------------------------------------------------
    def filter(self) -> None:
        if self.loaded is None:
            return

        def chosen(turn_filter: TurnFilter | None) -> None:
            if turn_filter is not None:
                self.turn_filter = turn_filter
                self.apply_view()

        self.app.push_screen(AskScreen("Show only the turns that match (Esc on the table shows all again)",
                                       parse_filter, initial=self.turn_filter.text if self.turn_filter else "",
                                       placeholder="tool result   read_file   model   >1000"), callback=chosen)

    def order(self) -> None:
        """Turn order <-> largest first."""
        if self.loaded is None:
            return
        self.by_tokens = not self.by_tokens
        self._to_largest = self.by_tokens  # once shown, the cursor goes to the largest turn, at the top
        self.apply_view()

    def clear_view(self) -> bool:
        """Drop the filter and the order; True when there was one."""
        if self.turn_filter is None and not self.by_tokens:
            return False
        self.turn_filter, self.by_tokens = None, False
        self.apply_view()
        return True

    def view_cleared(self) -> None:
        """The table dropped its filter and order itself (to show a turn the filter hid)."""
        self.turn_filter, self.by_tokens = None, False
        self.status.set("view", "")

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
        message.stop()
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
        if message.by_tokens and self._to_largest and shown:  # the largest turns fill the view from the top,
            self._to_largest = False  # the cursor on the largest
            self.table.move_to(shown[0])
            self.table.scroll_to(y=0, animate=False, immediate=True)
        what = []
        if self.turn_filter is not None:
            noun = "turn" if total == 1 else "turns"
            what.append(f"{len(shown):,} of {total:,} {noun} match "
                        f"{visible(self.turn_filter.text, one_line=True)!r} (F)")
        if message.by_tokens:
            what.append("largest first (o)")
        self.status.set("view", ", ".join(what) + "; Esc shows all")
