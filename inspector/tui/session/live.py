"""Live updates in the session view: watch the file, extend what is shown by what was appended.

``LiveFollower`` is a part of ``SessionScreen`` (``tui/session/part.py``).
The watcher's events come in as ``FileChanged``; an append extends the loaded
session (``inspector.live.extend.extend``) and the extended version goes up as
``SessionLoaded``; anything else asks the screen to read the whole file again
(``LoadRequested``).

The way from an append to its row on screen costs what was appended, not the
session's length:

* the extension runs on the event loop (a few milliseconds: the bytes are
  already held by the watcher's event); a batch too big for that runs in a
  worker;
* what an extension would copy (the long per-turn lists; the state shown
  stays as it was) is copied ahead in a worker once the table has drawn the
  new version (``live.prepare``), and the versions it replaced are let go
  there too, so neither competes with drawing the row;
* masking and cost are ``NotesKeeper``'s (``tui/session/notes.py``).

Anything but an append is read whole, one read at a time: what changes while
a read is under way waits for it (appends are extended from where it ended, a
rewrite reads once more), so a long read on a file Gemini CLI keeps writing
finishes.  ``WholeRead`` says when such a read starts and ends.  A read that
fails keeps the last version on screen, says why once, and waits for the file
to be rewritten or for ``r``: the lines appended after a line that cannot be
read would not make the file readable.
"""

from __future__ import annotations

import asyncio
import gc
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from textual import work

from inspector.session.loader import paused_gc
from inspector.session.release import give_back_free_memory
from inspector.tui.loading import Loaded
from inspector.tui.long_lived import Handed, keep_long_lived
from inspector.tui.messages import (
    FileChanged,
    LoadRequested,
    PreviewOutdated,
    SessionLoaded,
    WarningsChanged,
    WholeRead,
)
from inspector.tui.screens.base import inspector_of
from inspector.tui.session.compaction import STORE_GROUP
from inspector.tui.session.live_words import change_report, skipped_notice, skipped_since
from inspector.tui.session.part import Part
from inspector.tui.session_notes import carry_notes, release_notes

if TYPE_CHECKING:
    from textual.timer import Timer

    from inspector.live.extend import Declined, LiveState
    from inspector.live.watch import Appended, FileState
    from inspector.session.errors import LoadWarning
    from inspector.tui.widgets.status_line import StatusLine

WATCH_GROUP = "watch"
LIVE_GROUP = "live"
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


class LiveFollower(Part):
    """Watching the file and following what is appended to it, for ``SessionScreen``."""

    # An append that takes longer than this to read would stall the screen: it goes to a worker.
    LOOP_BYTES = 1 << 20
    SAID_SECONDS = 10.0  # a change on disk is said this long in the status line, then "live" again

    def __init__(self, path: Path, status: StatusLine, *, model: str | None) -> None:
        super().__init__()
        self.path = path
        self.status = status  # its "live" slot is this part's
        self.model = model
        self.shown: Loaded | None = None  # the version on screen (the screen says, ``loaded_shown``)
        self.watch_ready = asyncio.Event()  # set once the watcher is in place (tests wait on it)
        self._read_kind = "appended"  # the change on disk the last whole read followed (live_words)
        self._read_reason = ""  # for "changed": the line that could not be extended, and why (live.Declined)
        self._extending = False  # an extension is on its way to the screen
        self._appends: list[Appended] = []  # appended lines waiting to extend what is shown
        self._priming: Loaded | None = None  # the load whose live state is being made
        self._retired: list[object] = []  # versions no longer shown, let go in a worker
        self._unsettled: Loaded | None = None  # a version shown by extension, not yet copied ahead for
        self.reading = False  # a whole read of a change on disk is under way (what changes meanwhile waits)
        self._read_again = False  # the file changed other than by an append during that read
        self._unreadable: str | None = None  # why the last whole read failed: appends wait for a rewrite or ``r``
        self._cannot_open: str | None = None  # the watcher could not read the file (watch.Unreadable) since then
        self._watch_stopped = False  # the watch ended on an error: ``r`` (a reload) starts it again
        # A last line still without its newline, as a whole read would report it, and where it starts: shown
        # with the version that ends there (``analyze`` at this moment says the same).
        self._unfinished: tuple[int, LoadWarning] | None = None
        self._held: list[FileChanged] = []  # changes seen while this app's own apply or undo ran
        self._saying: Timer | None = None  # "live" again once a change was said long enough

    @property
    def live(self) -> bool:
        """Whether the app follows files as they change (off: ``--no-live``)."""
        return inspector_of(self).live

    # -- watching ------------------------------------------------------------------------
    def start_watching(self, loaded: Loaded) -> None:
        if self.live:
            self.watch_file(loaded.file_state)
            self.status.set("live", "live")

    @work(exclusive=True, exit_on_error=False, group=WATCH_GROUP, description="watching the file")
    async def watch_file(self, state: FileState | None) -> None:
        from inspector.live.watch import Appended, Deleted, Rewritten, Unreadable, watch_session
        from inspector.session.jsonl import unfinished_line

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
        except Exception as exc:  # the failure itself is notified (report_failure): the status says what it means
            self.watch_ended(str(exc).splitlines()[0] if str(exc) else type(exc).__name__)
            raise
        # The watch ends by itself only when its folder is gone (the watcher cannot follow it back).
        self.watch_ended(f"{self.path.parent.name or self.path.parent} is gone")

    def say(self, words: str) -> None:
        """What a change on disk did, in the status line for ``SAID_SECONDS``; then "live" again (a
        state that lasts, such as a file that cannot be read, is set in red and stays)."""
        self.status.set("live", words)
        if self._saying is not None:
            self._saying.stop()

        def said() -> None:
            self._saying = None
            if self.status.get("live") == words and not self._watch_stopped:
                self.status.set("live", "live")

        self._saying = self.set_timer(self.SAID_SECONDS, said)

    def watch_ended(self, why: str) -> None:
        self._watch_stopped = True
        self.status.set("live", f"not watching: {why}; r reads the file again and watches it", "red")

    def on_file_changed(self, message: FileChanged) -> None:
        message.stop()
        if message.own:
            return  # our own apply / revert: already reloading
        if self.store_writing:  # ours too, most likely: the store notes what it wrote only once done
            self._held.append(message)
            return
        self.changed(message)

    @property
    def store_writing(self) -> bool:
        """This app's own apply or undo is under way (its worker runs)."""
        return any(w.group == STORE_GROUP and not w.is_finished for w in self.workers)

    @property
    def held_changes(self) -> int:
        """Changes seen while this app's own apply or undo wrote the file, waiting for it to end."""
        return len(self._held)

    def store_done(self, wrote: bool) -> None:
        """This app's own apply or undo ended: when it wrote, the whole read after it shows every
        change held meanwhile (one notice, the store's); else they are followed now."""
        held, self._held = self._held, []
        if not wrote:
            for message in held:
                self.changed(message)

    def changed(self, message: FileChanged) -> None:
        """Follow a change on disk another process made."""
        if message.kind == "deleted":
            self.post_message(PreviewOutdated("the file was deleted on disk"))
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
        loaded = self.shown
        if message.appended is not None:
            appended = message.appended
            unfinished = self._unfinished
            self._unfinished = ((appended.start + len(appended.data), message.unfinished)
                                if message.unfinished is not None else None)
            if unfinished != self._unfinished:
                self.post_message(WarningsChanged())  # the header counts the warnings
            if not appended.data:
                return  # only more of a line still being written
        if message.appended is not None and self._unreadable is not None:
            self.status.set("live", f"live: appended, and still cannot be read ({self._unreadable}); "
                                    "r reads it again", "red")
            return
        self.say(f"live: {message.kind}")
        if message.appended is not None and loaded is not None and (
                self.reading or self._extending or loaded.live is not None or self._priming is loaded):
            self._appends.append(message.appended)
            self.next_extension()
            return
        self._appends.clear()
        if message.kind == "rewritten":
            # Written again (or only touched, or readable again): stale only if what is read differs
            # (the compaction controller compares the checksums).
            kind = "readable" if self._cannot_open is not None else "rewritten"
            self._cannot_open = None
            self.read_all(None, kind)
            return
        self.read_all(f"the file was {message.kind} on disk", message.kind)

    def read_all(self, why: str | None, kind: str) -> None:
        """Read the whole file again because of a change on disk (``why``: for a preview it makes
        stale, None when only the read can tell; ``kind``: appended, or a key of live_words.READ_AGAIN_WORDS).
        One read at a time: a change during a read is read once that read is done."""
        if why is not None:
            self.post_message(PreviewOutdated(why))
        if self.reading:
            self._read_again = True
            if kind != "appended":
                self._read_kind = kind
            return
        self.reading = True
        self._read_kind = kind
        self._read_again = False
        self._unreadable = None
        self.post_message(WholeRead(True))
        self.post_message(LoadRequested("live"))

    def read_failed(self, error: BaseException) -> None:
        """A whole read of a change on disk failed: keep what is shown, say why, and wait."""
        self.reading = False
        self._extending = False
        self.post_message(WholeRead(False, len(self._appends)))
        if self._read_again:  # it changed again meanwhile: that version may read
            self.read_all("the file changed on disk", self._read_kind)
            return
        self._appends.clear()
        first_line = str(error).splitlines()[0] if str(error) else type(error).__name__
        self._unreadable = first_line
        self.status.set("live", "live: cannot read the file now; r reads it again", "red")
        self.post_message(PreviewOutdated("the file changed on disk and cannot be read now"))
        self.notify(f"{first_line}\nShown: the last version read. r reads the file again.",
                    title="Changed on disk, cannot be read", severity="error", timeout=12)

    # -- extending ---------------------------------------------------------------------------
    def next_extension(self) -> None:
        loaded = self.shown
        if self._extending or self.reading or not self._appends or loaded is None:
            return  # (after a whole read, ``loaded_shown`` goes on with them)
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
        from inspector.live.extend import unread

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
        from inspector.live.extend import Declined, LiveState, extend

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
    def settled(self) -> bool:
        """Nothing left of the last append's work: no extension under way, the version shown
        copied ahead for the next one, no worker but the watcher's running."""
        return not self._extending and not self._appends and self._unsettled is None and all(
            worker.is_finished for worker in self.workers if worker.group != WATCH_GROUP)

    def table_drawn(self) -> None:
        """The turn table drew the version shown (``TableDrawn``)."""
        if self._unsettled is not None and self._unsettled is self.shown:
            self.settle()

    def settle(self) -> None:
        """The new version is drawn (or the next one came first): copy ahead for its next
        extension and let the versions it replaced go, in a worker."""
        loaded, self._unsettled = self._unsettled, None
        retired, self._retired = self._retired, []
        state = loaded.live if loaded is not None and loaded is self.shown else None
        self.settle_live(Retired([*retired, *release_notes()], state))

    @work(thread=True, exit_on_error=False, group=SETTLE_GROUP, description="copying ahead for the next append")
    def settle_live(self, job: Retired) -> None:
        from inspector.live.extend import prepare

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
        give_back_free_memory()  # what the versions let go of and the collection freed (session/release.py)

    @work(thread=True, exit_on_error=False, group=LIVE_GROUP, description="preparing for live updates")
    def prime_live(self, handed: Handed[Loaded]) -> None:
        from inspector.live.extend import start

        loaded = handed.take()
        state = start(loaded.session, loaded.analysis, model=self.model)
        keep_long_lived()
        self.app.call_from_thread(self.live_primed, loaded, state)

    def live_primed(self, loaded: Loaded, state: LiveState | None) -> None:
        if self._priming is loaded:
            self._priming = None
        loaded.live = state
        if self.shown is loaded:
            self._unsettled = loaded
            self.settle()
            self.next_extension()  # appends that came meanwhile

    def loaded_shown(self, previous: Loaded | None, loaded: Loaded, reason: str) -> None:
        """The screen shows ``loaded`` (read whole, or extended): watch, report a live change, go on
        with the appends that waited."""
        self.shown = loaded
        self._extending = False
        if loaded.changed_from is None:  # a whole read: what waited for it goes on below
            if self.reading:
                self.post_message(WholeRead(False, len(self._appends)))
            self.reading = False
            self._unreadable = None
            if self._read_again:
                self.call_later(self.read_all, "the file changed on disk while it was read", self._read_kind)
        if loaded.live is None and self.live:
            self._priming = loaded
            self.call_after_refresh(self.prime_live, Handed(loaded))  # once the table is on screen
        if loaded.changed_from is not None:
            if self._unsettled is not None:
                self.settle()  # the last version was never drawn (the table is covered): no waiting
            if previous is not None:
                self._retired.append(previous)  # let go in the worker, not on the way to the screen
            self._unsettled = loaded  # settled once the table has drawn it (TableDrawn)
        if previous is None or self._watch_stopped:
            self._watch_stopped = False
            self.start_watching(loaded)
        if previous is None:
            return
        if reason == "live":
            self.report_change(previous, loaded)
        self.next_extension()

    def report_change(self, previous: Loaded, loaded: Loaded) -> None:
        """Say what a change on disk did to what is shown: an extension in the status line (a toast
        per append is noise on a long run), a whole read in a notification, and any line newly
        skipped (but the last line while it is still being written)."""
        report = change_report(previous, loaded, self.path.name, self._read_kind, self._read_reason)
        if report.status is not None:
            self.say(report.status)
        if report.notice is not None:
            self.notify(report.notice, title="Live", severity=report.severity, timeout=report.timeout)
        skipped = skipped_notice(self.path.name, skipped_since(previous, loaded))
        if skipped is not None:
            self.notify(skipped, title="Skipped while reading", severity="warning")

    def shown_warnings(self, loaded: Loaded) -> list[LoadWarning]:
        """What reading the file now skips: the version shown's warnings and, when the file goes on
        with a line still without its newline, what a whole read says of it (``analyze`` now)."""
        unfinished = self._unfinished
        if unfinished is None or unfinished[0] != loaded.session.size:
            return loaded.analysis.warnings
        return [*loaded.analysis.warnings, unfinished[1]]

