"""Masking and cost in the session view: worked out after each version is shown, not on the way to it.

``NotesKeeper`` is a part of ``SessionScreen``.  Masking and cost read every
turn (seconds on a big session): after a whole read they are worked out once
the table is on screen; after live appends once the appends pause, and at the
latest ``NOTES_LONGEST`` seconds after the first append that changed them.
Until then the previous figures are shown, said to be for fewer turns
(``session_notes.carry_notes``).  ``NotesShown`` tells the screen to redraw
them, ``NotesFinished`` that the pass ended (the next long pass may start).
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from textual import work

from inspector.tui.long_lived import Handed, keep_long_lived
from inspector.tui.messages import NotesFinished, NotesReady, NotesShown
from inspector.tui.session.part import Part
from inspector.tui.session_notes import carry_notes, note_session, release_notes

if TYPE_CHECKING:
    from textual.timer import Timer

    from inspector.tui.loading import Loaded

NOTES_GROUP = "notes"


class NotesKeeper(Part):
    """When masking and cost are worked out again, for the version shown."""

    NOTES_QUIET = 5.0  # seconds without an append before masking and cost are worked out again
    NOTES_LONGEST = 30.0  # ... and at the latest, however often lines are appended

    def __init__(self) -> None:
        super().__init__()
        self.shown: Loaded | None = None  # the version on screen
        self._read = 0  # full reads so far: what an append extends goes back to the last one
        self._timer: Timer | None = None
        self._pending_since: float | None = None  # when shown notes were first carried over unchanged

    def loaded_shown(self, loaded: Loaded) -> None:
        """The screen shows ``loaded``: read whole, its notes once the table is on screen; extended,
        once the appends pause."""
        self.shown = loaded
        if loaded.changed_from is not None:
            self.note_when_quiet(loaded)
            return
        self._read += 1
        if self._timer is not None:
            self._timer.stop()
        self.call_after_refresh(self.note_again, loaded)

    def note_when_quiet(self, loaded: Loaded) -> None:
        """After live appends, once they pause, not for each one, and at the latest ``NOTES_LONGEST``
        seconds after they were first carried over (an agent that never pauses)."""
        if self._timer is not None:
            self._timer.stop()
        now = time.monotonic()
        if self._pending_since is None:
            self._pending_since = now
        wait = min(self.NOTES_QUIET, self._pending_since + self.NOTES_LONGEST - now)
        if wait <= 0:  # the longest wait is over: at once (a Textual timer of no delay dies dividing by it)
            self._timer = None
            self.call_later(self.note_again, loaded)
            return
        self._timer = self.set_timer(wait, lambda: self.note_again(loaded))

    def note_again(self, loaded: Loaded) -> None:
        if self.shown is loaded:
            self._pending_since = None
            self.note_session(Handed(loaded), self._read)

    @work(thread=True, exclusive=True, exit_on_error=False, group=NOTES_GROUP, description="pricing the session")
    def note_session(self, handed: Handed[Loaded], read: int) -> None:
        loaded = handed.take()
        try:
            note_session(loaded.analysis, loaded.session)
            release_notes().clear()  # the analyses they hold are let go here
            keep_long_lived()
            self.post_message(NotesReady(loaded, read))
        finally:
            self.post_message(NotesFinished(loaded))

    def on_notes_ready(self, message: NotesReady) -> None:
        message.stop()
        loaded = self.shown
        if loaded is None:
            return
        if loaded is not message.loaded and (message.read != self._read or not carry_notes(
                message.loaded.analysis, loaded.analysis, loaded.session)):
            return  # a full read replaced it (and notes its own)
        self.post_message(NotesShown(loaded))
