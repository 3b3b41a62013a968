"""Live updates in the session view: watch the file, extend what is shown by what was appended.

A mixin of ``SessionScreen`` (like ``SessionActions``).  The watcher's events
come in as ``FileChanged``; an append extends the loaded session
(``inspector.live.extend``), anything else reads the whole file again.

The way from an append to its row on screen costs what was appended, not the
session's length:

* the extension runs on the event loop (a few milliseconds: the bytes are
  already held by the watcher's event); a batch too big for that runs in a
  worker;
* what an extension would copy (the long per-turn lists; the state shown
  stays as it was) is copied ahead in a worker once the table has drawn the
  new version (``live.prepare``), and the versions it replaced are let go
  there too, so neither competes with drawing the row;
* masking and cost, which read every turn, are worked out in a worker when
  the appends pause, or at the latest ``NOTES_LONGEST`` seconds after the
  first append that changed them; until then the previous figures are shown,
  and said to be for fewer turns.

Anything but an append is read whole, one read at a time: what changes while
a read is under way waits for it (appends are extended from where it ended, a
rewrite reads once more), so a long read on a file Gemini CLI keeps writing
finishes.  A read that fails keeps the last version on screen, says why once,
and waits for the file to be rewritten or for ``r``: the lines appended after
a line that cannot be read would not make the file readable.
"""

from __future__ import annotations

import asyncio
import gc
import time
from dataclasses import replace
from typing import TYPE_CHECKING

from textual import work

from inspector.format import plural
from inspector.session.loader import paused_gc
from inspector.tui.loading import Loaded
from inspector.tui.long_lived import keep_long_lived
from inspector.tui.messages import FileChanged, NotesReady, SessionLoaded, TableDrawn
from inspector.tui.screens.base import InspectorScreen
from inspector.tui.screens.session_navigation import AGENTIC_GROUP
from inspector.tui.session_notes import carry_notes, note_session, release_notes

if TYPE_CHECKING:
    from collections.abc import Sequence
    from pathlib import Path

    from textual.timer import Timer

    from inspector.live import Declined, LiveState
    from inspector.session.errors import LoadWarning
    from inspector.tui.preview import Preview
    from inspector.tui.widgets.status_line import StatusLine
    from inspector.watch import Appended, FileState

WATCH_GROUP = "watch"
# What a person is told happened when a change on disk was read whole (an append that extends is
# said in the status line only).
READ_AGAIN_WORDS = {
    "rewritten": "was rewritten on disk",
    "truncated": "was cut short on disk",
    "changed": "changed on disk other than by new turns at its end",  # + what stopped the extension
    "readable": "can be read again",  # after it could not be read for a while (watch.Unreadable)
}
LIVE_GROUP = "live"
NOTES_GROUP = "notes"
SETTLE_GROUP = "settle"


class LiveWork:
    """What one extension starts from, handed over once (then the worker holds nothing)."""

    def __init__(self, loaded: Loaded, batch: list[Appended]) -> None:
        self._job: tuple[Loaded, list[Appended]] | None = (loaded, batch)

    def take(self) -> tuple[Loaded, list[Appended]]:
        assert self._job is not None
        job, self._job = self._job, None
        return job


class Retired:
    """Versions the view no longer shows, and the state to copy ahead for: handed to a worker once."""

    def __init__(self, versions: list[object], state: LiveState | None) -> None:
        self._job: tuple[list[object], LiveState | None] | None = (versions, state)

    def take(self) -> tuple[list[object], LiveState | None]:
        assert self._job is not None
        job, self._job = self._job, None
        return job


class SessionLive(InspectorScreen):
    """Watching the file and following what is appended to it (SessionScreen)."""

    path: Path
    model: str | None
    loaded: Loaded | None
    preview: Preview | None = None
    _watch_ready: asyncio.Event | None = None
    _read_kind: str = "appended"  # the change on disk the last whole read followed (READ_AGAIN_WORDS)
    _read_reason: str = ""  # for "changed": the line that could not be extended, and why (live.Declined)
    _extending: bool = False  # an extension is on its way to the screen
    _appends: list[Appended]  # appended lines waiting to extend what is shown
    _priming: Loaded | None = None  # the load whose live state is being made
    _retired: list[object]  # versions no longer shown, let go in a worker
    _unsettled: Loaded | None = None  # a version shown by extension, not yet copied ahead for
    _read: int = 0  # full reads so far: what an append extends goes back to the last one
    _reading: bool = False  # a whole read of a change on disk is under way (what changes meanwhile waits)
    _read_again: bool = False  # the file changed other than by an append during that read
    _unreadable: str | None = None  # why the last whole read failed: appends wait for a rewrite or ``r``
    _cannot_open: str | None = None  # the watcher could not read the file (watch.Unreadable) since the last read
    _watch_stopped: bool = False  # the watch ended on an error: ``r`` (a reload) starts it again
    # A last line still without its newline, as a whole read would report it, and where it starts: shown
    # with the version that ends there (``analyze`` at this moment says the same).
    _unfinished: tuple[int, LoadWarning] | None = None
    _notes_timer: Timer | None = None
    _notes_pending_since: float | None = None  # when shown notes were first carried over unchanged
    agentic_point: int | None = None  # compact --agentic's split (SessionNavigation)

    # An append that takes longer than this to read would stall the screen: it goes to a worker.
    LOOP_BYTES = 1 << 20
    NOTES_QUIET = 5.0  # seconds without an append before masking and cost are worked out again
    NOTES_LONGEST = 30.0  # ... and at the latest, however often lines are appended

    @property
    def status(self) -> StatusLine:
        raise NotImplementedError  # SessionActions' status line

    def load_session(self, reason: str = "open") -> object:
        raise NotImplementedError  # SessionScreen's loading worker

    def mark_stale(self, why: str) -> None:
        raise NotImplementedError  # SessionActions marks the preview

    def notes_shown(self, loaded: Loaded) -> None:
        raise NotImplementedError  # SessionScreen shows masking and cost

    def refresh_figures(self) -> None:
        raise NotImplementedError  # SessionScreen redraws its header and table

    def find_agentic(self, loaded: Loaded) -> object:
        raise NotImplementedError  # SessionScreen's worker

    # -- watching ------------------------------------------------------------------------
    @property
    def watch_ready(self) -> asyncio.Event:
        if self._watch_ready is None:
            self._watch_ready = asyncio.Event()
        return self._watch_ready

    def start_watching(self, loaded: Loaded) -> None:
        if self.inspector.live:
            self.watch_file(loaded.file_state)
            self.status.set("live", "live")

    @work(exclusive=True, exit_on_error=False, group=WATCH_GROUP, description="watching the file")
    async def watch_file(self, state: FileState | None) -> None:
        from inspector.session.jsonl import unfinished_line
        from inspector.watch import Appended, Deleted, Rewritten, Unreadable, watch_session

        try:
            async for event in watch_session(self.path, state=state, ready=self.watch_ready):
                if isinstance(event, Deleted):
                    self.post_message(FileChanged("deleted", self.path))
                elif isinstance(event, Unreadable):
                    self.post_message(FileChanged("unreadable", self.path, reason=event.reason))
                elif isinstance(event, Appended):
                    unfinished = None
                    if event.pending:  # (a long one is read off the event loop)
                        unfinished = (unfinished_line(event.pending, event.pending_line)
                                      if len(event.pending) <= self.LOOP_BYTES else
                                      await asyncio.to_thread(unfinished_line, event.pending, event.pending_line))
                    self.post_message(FileChanged("appended", self.path, own=event.own, appended=event,
                                                  unfinished=unfinished))
                else:
                    kind = "rewritten" if isinstance(event, Rewritten) else "truncated"
                    self.post_message(FileChanged(kind, self.path, own=event.own))
        except Exception as exc:  # the failure itself is notified (app.report_worker): the status says what it means
            self.watch_ended(str(exc).splitlines()[0] if str(exc) else type(exc).__name__)
            raise
        # The watch ends by itself only when its folder is gone (the watcher cannot follow it back).
        self.watch_ended(f"{self.path.parent.name or self.path.parent} is gone")

    def watch_ended(self, why: str) -> None:
        self._watch_stopped = True
        self.status.set("live", f"not watching: {why}; r reads the file again and watches it", "red")

    def on_file_changed(self, message: FileChanged) -> None:
        if message.own:
            return  # our own apply / revert: already reloading
        if message.kind == "deleted":
            self.mark_stale("the file was deleted on disk")
            self.status.set("live", "live: the file was deleted", "red")
            self.notify(f"{self.path.name} was deleted on disk; what is shown is the last version read.",
                        severity="warning", timeout=10)
            return
        if message.kind == "unreadable":
            self._cannot_open = message.reason
            self.status.set("live", f"live: cannot read the file now ({message.reason}); watching", "red")
            self.notify(f"{self.path.name} cannot be read now: {message.reason}. Shown: the last version read; "
                        "it is read again once it can be.", title="Live", severity="warning", timeout=10)
            return
        loaded = self.loaded
        if message.appended is not None:
            appended = message.appended
            unfinished = self._unfinished
            self._unfinished = ((appended.start + len(appended.data), message.unfinished)
                                if message.unfinished is not None else None)
            if unfinished != self._unfinished:
                self.refresh_figures()  # the header counts the warnings
            if not appended.data:
                return  # only more of a line still being written
        if message.appended is not None and self._unreadable is not None:
            self.status.set("live", f"live: appended, and still cannot be read ({self._unreadable}); "
                                    "r reads it again", "red")
            return
        self.status.set("live", f"live: {message.kind}")
        if message.appended is not None and loaded is not None and (
                self._reading or self._extending or loaded.live is not None or self._priming is loaded):
            self._appends.append(message.appended)
            self.next_extension()
            return
        self._appends.clear()
        if message.kind == "rewritten":
            # Written again (or only touched, or readable again): stale only if what is read differs
            # (``after_load`` compares the checksums).
            kind = "readable" if self._cannot_open is not None else "rewritten"
            self._cannot_open = None
            self.read_all(None, kind)
            return
        self.read_all(f"the file was {message.kind} on disk", message.kind)

    def read_all(self, why: str | None, kind: str) -> None:
        """Read the whole file again because of a change on disk (``why``: for a preview it makes
        stale, None when only the read can tell; ``kind``: appended, or a key of READ_AGAIN_WORDS).
        One read at a time: a change during a read is read once that read is done."""
        if why is not None:
            self.mark_stale(why)
        if self._reading:
            self._read_again = True
            if kind != "appended":
                self._read_kind = kind
            return
        self._reading = True
        self._read_kind = kind
        self._read_again = False
        self._unreadable = None
        self.load_session("live")

    def read_failed(self, error: BaseException) -> None:
        """A whole read of a change on disk failed: keep what is shown, say why, and wait."""
        self._reading = False
        self._extending = False
        if self._read_again:  # it changed again meanwhile: that version may read
            self.read_all("the file changed on disk", self._read_kind)
            return
        self._appends.clear()
        first_line = str(error).splitlines()[0] if str(error) else type(error).__name__
        self._unreadable = first_line
        self.status.set("load", "")
        self.status.set("live", "live: cannot read the file now; r reads it again", "red")
        self.mark_stale("the file changed on disk and cannot be read now")
        self.notify(f"{first_line}\nShown: the last version read. r reads the file again.",
                    title="Changed on disk, cannot be read", severity="error", timeout=12)

    # -- extending ---------------------------------------------------------------------------
    def next_extension(self) -> None:
        loaded = self.loaded
        if self._extending or self._reading or not self._appends or loaded is None:
            return  # (after a whole read, its ``after_load`` goes on with them)
        if loaded.live is None:
            if self._priming is loaded:
                return  # ``live_primed`` goes on with them
            self._appends.clear()  # the last read cannot be extended: read it all
            self.read_all("the file changed on disk", "appended")
            return
        batch = self._unread(loaded)
        if batch is None:
            self.extension_declined("the lines appended while the file was read do not line up with "
                                    "where that read ended")
            return
        if not batch:
            return
        self._extending = True
        job = LiveWork(loaded, batch)
        if sum(len(event.data) for event in batch) > self.LOOP_BYTES:
            self.extend_session(job)
            return
        extended = self.extend_batch(job)
        if isinstance(extended, Loaded):
            self.post_message(SessionLoaded(extended, "live"))
        else:
            self.extension_declined(extended.reason)

    def _unread(self, loaded: Loaded) -> list[Appended] | None:
        """The waiting appends, less what the version shown already read (lines appended while it was
        read whole); None when one cannot be lined up with it."""
        from inspector.live import unread

        size = loaded.session.size
        batch: list[Appended] = []
        for event in self._appends:
            data = unread(event.data, event.start, size)
            if data is None:
                return None
            if data:
                batch.append(event if len(data) == len(event.data)
                             else replace(event, data=data, start=event.start + len(event.data) - len(data)))
        self._appends.clear()
        return batch

    def extend_batch(self, job: LiveWork) -> Loaded | Declined:
        """What is shown, extended by the batch's lines, or why only a full read will do."""
        from inspector.live import Declined, LiveState, extend

        loaded, batch = job.take()
        state: LiveState | Declined | None = loaded.live
        first = len(loaded.analysis.turns)
        try:
            mtime_ns = self.path.stat().st_mtime_ns
        except OSError:
            mtime_ns = 0
        for event in batch:
            if not isinstance(state, LiveState):
                break
            state = extend(state, event.data, event.start, mtime_ns)
            if isinstance(state, LiveState) and state.changed_from is not None:
                first = min(first, state.changed_from)
        if not isinstance(state, LiveState):
            return state if state is not None else Declined("the version shown cannot be extended")
        extended = Loaded(state.session, state.analysis, loaded.threshold, loaded.configured, None,
                          agentic=state.analysis.agentic_candidates, live=state, changed_from=first)
        carry_notes(loaded.analysis, state.analysis, state.session)  # worked out again when appends pause
        return extended

    @work(thread=True, exit_on_error=False, group=LIVE_GROUP, description="reading the appended lines")
    def extend_session(self, job: LiveWork) -> None:
        extended = self.extend_batch(job)  # a finished worker keeps its arguments: not the session it replaced
        if isinstance(extended, Loaded):
            self.post_message(SessionLoaded(extended, "live"))
        else:
            self.app.call_from_thread(self.extension_declined, extended.reason)

    def extension_declined(self, reason: str) -> None:
        """The append could not be extended (``reason``: a line written again, a rewind, a line that
        cannot be read, ...): read it all."""
        self._extending = False
        self._appends.clear()
        self._read_reason = reason
        self.read_all(f"the file changed on disk other than by new lines at its end: {reason}", "changed")

    # -- after a version is on screen -----------------------------------------------------------
    @property
    def live_settled(self) -> bool:
        """Nothing left of the last append's work: no extension under way, the version shown
        copied ahead for the next one, no worker but the watcher's running."""
        return not self._extending and not self._appends and self._unsettled is None and all(
            worker.is_finished for worker in self.workers if worker.group != "watch")

    def on_table_drawn(self, message: TableDrawn) -> None:
        if self._unsettled is not None and self._unsettled is self.loaded:
            self.settle()

    def settle(self) -> None:
        """The new version is drawn (or the next one came first): copy ahead for its next
        extension and let the versions it replaced go, in a worker."""
        loaded, self._unsettled = self._unsettled, None
        retired, self._retired = self._retired, []
        state = loaded.live if loaded is not None and loaded is self.loaded else None
        self.settle_live(Retired([*retired, *release_notes()], state))

    @work(thread=True, exit_on_error=False, group=SETTLE_GROUP, description="copying ahead for the next append")
    def settle_live(self, job: Retired) -> None:
        from inspector.live import prepare

        versions, state = job.take()
        versions.clear()  # freed here
        if state is None:
            return
        with paused_gc():
            prepare(state)
        # The copies are young: the collector's next passes would scan them (millions of references)
        # wherever they happen, likely while the next append is drawn.  One pass here instead, a full
        # one when the collector is about to consider one of its own (it would run where it falls).
        full = gc.get_count()[2] + 1 >= gc.get_threshold()[2]
        gc.collect(2 if full else 1)

    @work(thread=True, exit_on_error=False, group=LIVE_GROUP, description="preparing for live updates")
    def prime_live(self, loaded: Loaded) -> None:
        from inspector.live import start

        state = start(loaded.session, loaded.analysis, model=self.model)
        keep_long_lived()
        self.app.call_from_thread(self.live_primed, loaded, state)

    def live_primed(self, loaded: Loaded, state: LiveState | None) -> None:
        if self._priming is loaded:
            self._priming = None
        loaded.live = state
        if self.loaded is loaded:
            self._unsettled = loaded
            self.settle()
            self.next_extension()  # appends that came meanwhile

    # -- masking and cost ----------------------------------------------------------------------
    def note_when_quiet(self, loaded: Loaded) -> None:
        """Masking and cost read every turn (seconds on a big session): after live appends they are
        worked out again once the appends pause, not for each one, and at the latest
        ``NOTES_LONGEST`` seconds after they were first carried over (an agent that never pauses)."""
        if self._notes_timer is not None:
            self._notes_timer.stop()
        now = time.monotonic()
        if self._notes_pending_since is None:
            self._notes_pending_since = now
        wait = min(self.NOTES_QUIET, self._notes_pending_since + self.NOTES_LONGEST - now)
        if wait <= 0:  # the longest wait is over: at once (a Textual timer of no delay dies dividing by it)
            self._notes_timer = None
            self.call_later(self.note_again, loaded)
            return
        self._notes_timer = self.set_timer(wait, lambda: self.note_again(loaded))

    def note_again(self, loaded: Loaded) -> None:
        if self.loaded is loaded:
            self._notes_pending_since = None
            self.note_session(loaded, self._read)

    @work(thread=True, exclusive=True, exit_on_error=False, group=NOTES_GROUP, description="pricing the session")
    def note_session(self, loaded: Loaded, read: int) -> None:
        try:
            note_session(loaded.analysis, loaded.session)
            release_notes().clear()  # the analyses they hold are let go here
            keep_long_lived()
            self.post_message(NotesReady(loaded, read))
        finally:
            self.app.call_from_thread(self.after_notes, loaded)

    def after_notes(self, loaded: Loaded) -> None:
        """After a full read, compact --agentic's split is looked for next (one long pass at a time:
        together they would each take twice as long)."""
        if self.loaded is loaded and loaded.changed_from is None and self.agentic_point is None and not any(
                w.group == AGENTIC_GROUP and not w.is_finished for w in self.workers):
            self.find_agentic(loaded)

    def on_notes_ready(self, message: NotesReady) -> None:
        loaded = self.loaded
        if loaded is None:
            return
        if loaded is not message.loaded and (message.read != self._read or not carry_notes(
                message.loaded.analysis, loaded.analysis, loaded.session)):
            return  # a full read replaced it (and notes its own)
        self.notes_shown(loaded)

    # -- after every load --------------------------------------------------------------------------
    def after_load(self, previous: Loaded | None, loaded: Loaded, reason: str) -> None:
        """Called by the view after every load: start watching, report live changes, check the preview."""
        self._extending = False
        if loaded.changed_from is None:  # a whole read: what waited for it goes on below
            self._reading = False
            self._unreadable = None
            if self._read_again:
                self.call_later(self.read_all, "the file changed on disk while it was read", self._read_kind)
        if loaded.live is None and self.inspector.live:
            self._priming = loaded
            self.call_after_refresh(self.prime_live, loaded)  # once the table is on screen
        if loaded.changed_from is not None:
            self.note_when_quiet(loaded)
            if self._unsettled is not None:
                self.settle()  # the last version was never drawn (the table is covered): no waiting
            if previous is not None:
                self._retired.append(previous)  # let go in the worker, not on the way to the screen
            self._unsettled = loaded  # settled once the table has drawn it (TableDrawn)
        else:
            self._read += 1
            if self._notes_timer is not None:
                self._notes_timer.stop()
            self.call_after_refresh(self.note_again, loaded)  # masking and cost, once the table is on screen
        if previous is None or self._watch_stopped:
            self._watch_stopped = False
            self.start_watching(loaded)
        if previous is None:
            return
        source = self.preview.source if self.preview is not None and not self.preview.stale else None
        if source is not None and source.session.sha256 != loaded.session.sha256:
            self.mark_stale(self.why_stale(source, previous, loaded))
        if reason == "live":
            self.report_change(previous, loaded)
        self.next_extension()

    def report_change(self, previous: Loaded, loaded: Loaded) -> None:
        """Say what a change on disk did to what is shown: an extension in the status line (a toast
        per append is noise on a long run), a whole read in a notification, and any line newly
        skipped (but the last line while it is still being written)."""
        turns, before = len(loaded.analysis.turns), len(previous.analysis.turns)
        added = turns - before
        name = self.path.name
        session = loaded.session
        seen = set(previous.analysis.warnings)
        skipped = [w for w in loaded.analysis.warnings if w not in seen
                   and not (w.line == session.line_count and not session.ends_with_newline)]
        if loaded.changed_from is not None:
            self.status.set("live", f"live: {plural(added, 'new turn')}" if added > 0 else "live: appended")
        elif self._read_kind == "appended":
            if added > 0:
                self.notify(f"{plural(added, 'new turn')} in {name}.", title="Live", timeout=4)
        elif session.sha256 == previous.session.sha256:  # touched, or written again as it was
            self.status.set("live", "live: read again, unchanged")
            if self._read_kind == "readable":
                self.notify(f"{name} {self.read_again_words()}; it has not changed.", title="Live", timeout=4)
        else:
            self.status.set("live", "live: read again")
            if not (skipped and self._read_kind == "changed" and added == 0):  # (then the skipped line says it)
                self.notify(f"{name} {self.read_again_words()}; read again: {plural(turns, 'turn')} "
                            f"(was {before:,}).", title="Live", severity="warning", timeout=8)
        self.tell_skipped(skipped)

    def read_again_words(self) -> str:
        """What happened on disk that made the last whole read, in words (READ_AGAIN_WORDS; for a
        change an append could not extend, the line that stopped it)."""
        words = READ_AGAIN_WORDS[self._read_kind]
        return f"{words}: {self._read_reason}" if self._read_kind == "changed" and self._read_reason else words

    def shown_warnings(self, loaded: Loaded) -> list[LoadWarning]:
        """What reading the file now skips: the version shown's warnings and, when the file goes on
        with a line still without its newline, what a whole read says of it (``analyze`` now)."""
        unfinished = self._unfinished
        if unfinished is None or unfinished[0] != loaded.session.size:
            return loaded.analysis.warnings
        return [*loaded.analysis.warnings, unfinished[1]]

    def tell_skipped(self, skipped: Sequence[LoadWarning]) -> None:
        """One notification for lines skipped while reading (none when there are none)."""
        if skipped:
            more = f" (and {len(skipped) - 1:,} more)" if len(skipped) > 1 else ""
            self.notify(f"{self.path.name}: {skipped[0]}{more}. Press w to see every warning.",
                        title="Skipped while reading", severity="warning")

    def why_stale(self, source: Loaded, previous: Loaded, loaded: Loaded) -> str:
        """Why a preview computed from ``source`` no longer fits the file ``loaded`` read, where
        ``previous`` was shown before it.

        Any change makes it stale: an apply writes the file the preview was
        computed from, and the kept part runs to the end of the history.  The
        reason says what changed, from what the extension found changed
        (``changed_from``); after a whole read, or a preview older than the
        version before, only that the file changed."""
        preview = self.preview
        if loaded.changed_from is None or preview is None or source is not previous:
            return "the file changed on disk since the preview was computed"
        changed = loaded.changed_from
        before = len(previous.analysis.turns)
        added = len(loaded.analysis.turns) - before
        if changed < preview.split:
            return f"turn {changed:,}, which the snapshot summarises, was written again on disk"
        what = []
        if changed < before:
            what.append(f"turn {changed:,}, in the kept part, was written again")
        if added > 0:
            what.append(f"{plural(added, 'turn')} appended after it" if what else f"{plural(added, 'turn')} appended")
        if not what:
            return ("a line that changes no turn (metadata, such as the session's summary) was appended: "
                    "the preview was computed from the file without it")
        return " and ".join(what) + " on disk: the kept part changed, so the new history and its figures differ"
