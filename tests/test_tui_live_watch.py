"""What another writer does to the open file, as a person watching the app meets it (stop 35's audit).

* the file cannot be read for a while (a folder takes its name, its
  permissions change): said once, watched on, read whole when it can be;
* a line written again in place at the same length: read again, the figures
  follow (the end of the file alone proved nothing);
* the file only touched: read again, found unchanged, the preview still good;
* a line still being written: counted as the whole read (``analyze``) counts it;
* lines appended while "Apply?" is asked: the question is withdrawn, nothing written;
* the store refusing an apply: said as a refusal ("Not applied"), not as a failure of the app.

Real files, the real watcher and Textual's Pilot; the tests wait for the app's own messages.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Callable
from pathlib import Path

from textual.pilot import Pilot
from textual.widgets._footer import FooterKey

from inspector.analysis import analyze
from inspector.session import load
from inspector.tui.app import InspectorApp
from inspector.tui.messages import FileChanged
from inspector.tui.screens.dialogs import ConfirmScreen, ForgettingScreen
from inspector.tui.screens.warnings import WarningsScreen
from inspector.tui.session.screen import SessionScreen
from inspector.tui.widgets.context_header import ContextHeader
from tests.test_tui_live import THRESHOLD, conversation, plain, prompt, shown_as_read_again
from tests.test_tui_live_trust import Seen, append, idle, live_loads, notes, watched


def changes(kind: str) -> object:
    return lambda m: isinstance(m, FileChanged) and m.kind == kind


def header(view: SessionScreen) -> str:
    return plain(view.query_one(ContextHeader).content)


async def test_a_file_that_cannot_be_read_for_a_while_is_watched_on(tmp_path: Path, machine_load: str) -> None:
    seen = Seen()
    async with watched(tmp_path, "session-away.jsonl", conversation(5), seen) as (pilot, view, path):
        app = pilot.app
        shown = view.loaded
        text = path.read_bytes()
        path.unlink()
        path.mkdir()  # a folder takes the session's name (as a broken sync tool might)
        await seen.until(pilot, lambda: seen.count(changes("unreadable")) == 1, "the unreadable file was not said")
        await idle(pilot)
        assert "cannot read the file now (Is a directory)" in view.status.get("live")
        told = notes(app, "Live")
        assert told and "session-away.jsonl cannot be read now: Is a directory" in told[-1]
        assert view.loaded is shown, "the last version read stays on screen"
        assert not [n for n in app._notifications if n.title.startswith("Failed")], "the watch did not stop"

        path.rmdir()
        path.write_bytes(text)
        await seen.until(pilot, lambda: seen.count(live_loads) >= 1, "the file was not read again once it could be")
        await idle(pilot)
        shown_as_read_again(view, path)
        assert view.status.get("live") == "live: read again, unchanged"
        assert "session-away.jsonl can be read again; it has not changed." in notes(app, "Live")[-1]

        append(path, prompt(90))  # and the watch goes on
        await seen.until(pilot, lambda: seen.count(changes("appended")) >= 1, "an append after it was not seen")
        await idle(pilot)
        shown_as_read_again(view, path)


async def test_a_line_written_again_at_the_same_length_is_read_again(tmp_path: Path, machine_load: str) -> None:
    """An early prompt's ASCII becomes CJK of the same byte length: the file's size and its last
    bytes are as they were, its figures are not."""
    seen = Seen()
    async with watched(tmp_path, "session-edit.jsonl", conversation(5), seen) as (pilot, view, path):
        assert view.loaded is not None
        before = sum(view.loaded.analysis.quarters)
        data = path.read_bytes()
        edited = data.replace(b"prompt 1 xxxxxx", "prompt 1 中文".encode(), 1)
        assert len(edited) == len(data) and edited != data
        with path.open("r+b") as handle:  # in place: same file, same length
            handle.write(edited)
        os.utime(path, ns=(path.stat().st_atime_ns, path.stat().st_mtime_ns + 1_000_000))  # (a coarse clock)
        await seen.until(pilot, lambda: seen.count(live_loads) >= 1, "the edit in place was not read")
        await idle(pilot)
        shown_as_read_again(view, path)
        assert sum(view.loaded.analysis.quarters) != before
        assert view.status.get("live") == "live: read again"


async def test_a_file_only_touched_keeps_its_preview(tmp_path: Path, machine_load: str) -> None:
    seen = Seen()
    async with watched(tmp_path, "session-touch.jsonl", conversation(8), seen) as (pilot, view, path):
        await pilot.press("c")
        await idle(pilot)
        await pilot.press("escape")
        assert view.preview is not None and not view.preview.stale
        stat = path.stat()
        os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000))
        await seen.until(pilot, lambda: seen.count(live_loads) >= 1, "the touch was not looked at")
        await idle(pilot)
        assert view.status.get("live") == "live: read again, unchanged"
        assert not view.preview.stale, "nothing changed: the preview still fits the file"
        assert not notes(pilot.app, "Live"), "no notification for a file that did not change"


async def test_a_line_still_being_written_is_counted_as_analyze_counts_it(tmp_path: Path, machine_load: str) -> None:
    seen = Seen()
    async with watched(tmp_path, "session-half.jsonl", conversation(4), seen) as (pilot, view, path):
        assert "warning" not in header(view)
        whole = prompt(40)
        append(path, whole[:30])  # Gemini CLI stopped mid-line (or is still at it)
        await seen.until(pilot, lambda: seen.count(changes("appended")) >= 1, "the half line was not seen")
        await idle(pilot)
        fresh = analyze(load(path), threshold=THRESHOLD).warnings
        assert len(fresh) == 1 and "incomplete last line" in fresh[0].message
        assert view.follower.shown_warnings(view.loaded) == fresh
        assert f"{len(fresh)} warning (w)" in header(view)
        await pilot.press("w")
        assert isinstance(pilot.app.screen, WarningsScreen) and pilot.app.screen.warnings == fresh
        await pilot.press("escape")

        append(path, whole[30:])  # the rest of the line, and its newline
        await seen.until(pilot, lambda: seen.count(live_loads) >= 1, "the finished line was not extended")
        await idle(pilot)
        shown_as_read_again(view, path)
        assert view.follower.shown_warnings(view.loaded) == [] and "warning" not in header(view)


async def test_lines_appended_while_apply_is_asked_withdraw_the_question(tmp_path: Path, machine_load: str) -> None:
    seen = Seen()
    async with watched(tmp_path, "session-ask.jsonl", conversation(8), seen) as (pilot, view, path):
        app = pilot.app
        await pilot.press("c")
        await idle(pilot)
        await pilot.press("a")
        assert isinstance(app.screen, ConfirmScreen)
        append(path, prompt(70))
        await seen.until(pilot, lambda: not isinstance(app.screen, ConfirmScreen), "the question stayed open")
        await idle(pilot)
        after_append = path.read_bytes()
        told = notes(app, "Not applied")
        assert told and told[-1].startswith("Asked to apply, but the preview is stale"), told
        await pilot.press("y")  # the answer the person was about to give reaches nothing that writes
        await idle(pilot)
        assert path.read_bytes() == after_append
        assert not notes(app, "Compaction applied")
        assert view.preview is not None and view.preview.stale


async def test_an_apply_the_store_refuses_is_said_as_a_refusal(tmp_path: Path, machine_load: str) -> None:
    """Not watching (``--no-watch``), the file changes after the preview; the store refuses to
    write over it, and the person reads why, titled as a refusal."""
    path = tmp_path / "chats" / "session-refused.jsonl"
    path.parent.mkdir()
    path.write_text(conversation(8), encoding="utf-8")
    app = InspectorApp(path, threshold=THRESHOLD, live=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await idle(pilot)
        await pilot.press("c")
        await idle(pilot)
        append(path, prompt(80) + json.dumps({"id": "late", "type": "gemini", "content": "late",
                                              "timestamp": "2026-11-20T09:10:00.000Z"}) + "\n")
        changed = path.read_bytes()
        await pilot.press("a")
        assert isinstance(app.screen, ConfirmScreen)
        await pilot.press("y")
        await idle(pilot)
        if isinstance(app.screen, ForgettingScreen):  # under the recall threshold the apply is asked twice
            await pilot.press("y")
            await idle(pilot)
        refused = notes(app, "Not applied")
        assert refused and "bytes were appended since it was made" in refused[-1], refused
        assert refused[-1].endswith("Nothing was written")
        assert not [n for n in app._notifications if n.title.startswith("Failed")]
        assert path.read_bytes() == changed
        view = next(screen for screen in app.screen_stack if isinstance(screen, SessionScreen))
        assert view.preview is not None and view.preview.stale, "the preview no longer fits the file"


async def test_a_watch_that_ends_says_so_and_r_starts_it_again(tmp_path: Path, machine_load: str) -> None:
    """The session's folder is removed (the watcher cannot follow it back): the status says the
    file is not watched any more; once it is back, r reads it and watches it again."""
    seen = Seen()
    async with watched(tmp_path, "session-gone.jsonl", conversation(3), seen) as (pilot, view, path):
        text = path.read_text(encoding="utf-8")
        folder = path.parent
        path.unlink()
        folder.rmdir()
        await seen.until(pilot, lambda: view.status.get("live").startswith("not watching"), "the end was not said")
        assert "chats is gone; r reads the file again and watches it" in view.status.get("live")

        folder.mkdir()
        path.write_text(text + prompt(30), encoding="utf-8")
        view.watch_ready.clear()
        await pilot.press("r")
        await idle(pilot)
        assert view.status.get("live") == "live"
        await asyncio.wait_for(view.watch_ready.wait(), 10)  # the new watch is in place
        append(path, prompt(31))
        await seen.until(pilot, lambda: seen.count(changes("appended")) >= 1, "the new watch saw no append")
        await idle(pilot)
        shown_as_read_again(view, path)


async def test_what_a_change_did_is_said_for_a_while_and_then_the_status_says_live_again(
        tmp_path: Path, machine_load: str) -> None:
    """Issue 40: "live: read again" stayed in the status line for good, long after the change it
    told of.  A change is said for ``SAID_SECONDS``, then the line says "live" again; a state that
    lasts (a file that cannot be read) stays."""
    seen = Seen()
    async with watched(tmp_path, "session-said.jsonl", conversation(5), seen) as (pilot, view, path):
        view.follower.SAID_SECONDS = 0.3  # what the line said is recorded: its time may end before this looks
        said = live_words_said(view)
        spare = path.with_name("spare.tmp")
        spare.write_text(conversation(6), encoding="utf-8")
        os.replace(spare, path)  # written again whole
        await seen.until(pilot, lambda: seen.count(live_loads) >= 1, "the rewrite was not read")
        await condition(pilot, lambda: "live: read again" in said and said[-1] == "live",
                        f"'live: read again' was not said, or stayed: {said}")
        assert said[said.index("live: read again"):] == ["live: read again", "live"], said
        said.clear()
        append(path, prompt(60))  # an append, extended: said, then "live" again
        await seen.until(pilot, lambda: seen.count(live_loads) >= 2, "the append was not shown")
        await condition(pilot, lambda: len(said) >= 2 and said[-1] == "live", f"the append's words stayed: {said}")
        assert said[-2] in ("live: 1 new turn", "live: appended"), said

        path.unlink()
        path.mkdir()  # cannot be read: said in red, and it stays
        await seen.until(pilot, lambda: seen.count(changes("unreadable")) == 1, "the unreadable file was not said")
        assert "cannot read the file now" in view.status.get("live")
        view.follower.say("live: appended")
        view.follower.status.set("live", "live: cannot read the file now", "red")
        await condition(pilot, lambda: view.follower._saying is None, "the words' time did not end")
        assert view.status.get("live") == "live: cannot read the file now"


def live_words_said(view: SessionScreen) -> list[str]:
    """Every text the status line's "live" slot is given from now on, in order (the line itself shows
    only the last, which a short ``SAID_SECONDS`` may already have replaced)."""
    said: list[str] = []
    status = view.follower.status
    shown = status.set

    def set_and_record(slot: str, text: str, style: str = "", short: str = "") -> None:
        if slot == "live" and text != status.get("live"):
            said.append(text)
        shown(slot, text, style, short)

    status.set = set_and_record  # type: ignore[method-assign]
    return said


async def condition(pilot: object, test: Callable[[], bool], what: str, timeout: float = 20) -> None:
    """Wait until ``test()`` holds, looking again each time the app has handled what was pending."""
    assert isinstance(pilot, Pilot)

    async def wait() -> None:
        while not test():
            await pilot.pause(0.05)

    try:
        await asyncio.wait_for(wait(), timeout)
    except TimeoutError:
        raise AssertionError(f"not within {timeout:g} s: {what}") from None


def footer_keys(view: SessionScreen) -> list[str]:
    """The keys the footer offers now, as "key description"."""
    return [f"{key.key_display} {key.description}" for key in view.query(FooterKey) if key.display]


async def test_a_stale_preview_is_not_offered_to_apply_and_a_says_why(tmp_path: Path, machine_load: str) -> None:
    """Issue 40: the footer offered "a Apply" for a preview the file no longer fits (pressed, it
    refused).  It is offered only while the preview fits; pressed anyway, ``a`` says why not."""
    seen = Seen()
    async with watched(tmp_path, "session-stale.jsonl", conversation(8), seen) as (pilot, view, path):
        await pilot.press("c")
        await idle(pilot)
        await pilot.press("escape")
        await idle(pilot)
        assert view.preview is not None and not view.preview.stale
        assert "a Apply" in footer_keys(view)
        append(path, prompt(90))
        await seen.until(pilot, lambda: view.preview is not None and bool(view.preview.stale), "not made stale")
        await idle(pilot)
        assert "a Apply" not in footer_keys(view), footer_keys(view)
        assert "p Preview" in footer_keys(view) or view.check_action("show_preview", ())  # still there to look at
        await pilot.press("a")
        await idle(pilot)
        told = notes(pilot.app, "Not applied")
        assert told and "the preview is stale" in told[-1], told
