"""Words and numbers on screen as a person reads them: plurals, separators, plain sentences,
no keys offered that cannot work, every warning reachable."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import Static

from inspector.format import plural, written_by
from inspector.tui.app import InspectorApp
from inspector.tui.screens.compare import CompareScreen
from inspector.tui.screens.dialogs import FocusScreen
from inspector.tui.screens.snapshot import SnapshotScreen
from inspector.tui.screens.warnings import WarningsScreen
from inspector.tui.session.screen import SessionScreen
from tests.conftest import write_agent_run
from tests.snapshot_app import SAMPLES, copy_sample, screen_after, settle
from tests.test_tui_idle import redrawing

SAMPLE = SAMPLES / "coding-task.jsonl"


@pytest.fixture
def session_file(tmp_path: Path) -> Path:
    return copy_sample(tmp_path, SAMPLE.name)


def footer_keys(screen: object) -> list[str]:
    return [str(key.key_display) for key in screen.query("FooterKey")]  # type: ignore[attr-defined]


def test_plural_and_separators() -> None:
    assert plural(1, "turn") == "1 turn"
    assert plural(0, "turn") == "0 turns"
    assert plural(90_000, "tool output") == "90,000 tool outputs"
    assert plural(2, "match", "matches") == "2 matches"
    assert written_by("offline", "gemini-2.5-pro") == "offline digest (no model was called)"
    assert written_by("gemini", "gemini-2.5-pro") == "gemini (gemini-2.5-pro)"


def test_short_numbers_and_the_usage_column_keep_the_thoughts_suffix() -> None:
    from inspector.format import compact_number, usage_text
    from inspector.tui.widgets.turn_table import COLUMNS

    assert [compact_number(n) for n in (999, 1_234, 9_999, 999_999, 12_345_678)] == ["999", "1.2k", "10k", "1.0M",
                                                                                        "12M"]
    width = next(c.width for c in COLUMNS if c.key == "usage")
    for big in (9_999, 999_999, 9_949_999, 999_999_999):  # every size, each at its longest short form
        text = usage_text({"input": big, "output": big, "cached": big, "thoughts": big})
        assert len(text) <= width and text.count("/") == 3, text  # input/output/cached/thoughts


def test_a_count_no_session_holds_is_still_short() -> None:
    """Gemini CLI reads any finite number as a token count, so a hostile file may record 10^29 tokens:
    it is shown short like any other (the figure is the recorded one, never cut with an ellipsis)."""
    from inspector.format import compact_number, percent

    assert [compact_number(n) for n in (1_234_567_890_123, 2**60, 123456789012345678901234567890)] == [
        "1.2T", "1.2E", "1.2e+29"]
    assert percent(0.501) == "50.1%" and percent(123456789012345678901234567890 / 1_048_576) == "1.2e+25%"
    assert all(len(compact_number(10**k - 1)) <= 8 for k in range(1, 309))  # up to the largest double


async def test_a_file_that_failed_to_load_offers_no_session_keys(tmp_path: Path) -> None:
    path = tmp_path / "chats" / "session-broken.json"
    path.parent.mkdir()
    path.write_text('{"sessionId": "x", "messages": [', encoding="utf-8")
    app = InspectorApp(path, threshold=0.5, live=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        view = app.screen
        assert isinstance(view, SessionScreen) and view.failed is not None
        await pilot.pause()
        keys = footer_keys(view)
        assert keys, "the footer still offers help and quit"
        for key in ("[", "]", "{", "}", "c", "a", "u", "d"):
            assert key not in keys, f"{key} is offered although nothing is loaded"
        assert redrawing(view) == []  # the loading bar went too (hidden, it redrew itself 15 times a second)


async def test_help_lists_no_unnamed_textual_binding(session_file: Path) -> None:
    app = InspectorApp(session_file, threshold=0.5, live=False)
    async with app.run_test(size=(160, 45)) as pilot:
        await settle(pilot)
        rows = app.help_rows(app.screen)
        assert all(description and description != action for _, _, description, _, action in rows)
        assert not any("help_quit" in " ".join(row) for row in rows)


async def test_warnings_can_be_opened(tmp_path: Path) -> None:
    path = tmp_path / "chats" / "session-warned.jsonl"
    path.parent.mkdir()
    lines = SAMPLE.read_text(encoding="utf-8").splitlines()
    lines.insert(3, '{"id": "broken", "type": "user", "content": [')  # a line Gemini CLI skips
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    app = InspectorApp(path, threshold=0.5, live=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        view = app.screen
        assert isinstance(view, SessionScreen)
        warnings = view.loaded.analysis.warnings
        assert warnings and warnings[0].line == 4
        await pilot.press("w")
        assert isinstance(app.screen, WarningsScreen)
        table = app.screen.query_one("#warnings-table")
        shown = "\n".join(strip.text for strip in table.render_lines(table.region.reset_offset))
        assert "4" in shown.split() and warnings[0].message.split()[0] in shown
        await pilot.press("escape")
        assert app.screen is view


async def test_c_below_the_threshold_says_it_compacts_anyway(session_file: Path) -> None:
    app = InspectorApp(session_file, threshold=0.9, live=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        assert not app.screen.loaded.analysis.would_compress
        await pilot.press("c")
        await app.workers.wait_for_complete()
        assert any(n.title == "Below threshold" and "under the threshold" in n.message
                   and "c compacts it anyway" in n.message for n in app._notifications)


async def test_over_the_threshold_with_nothing_before_the_split_is_said_as_such(tmp_path: Path) -> None:
    """One prompt and an agent still calling tools, its last prompt over the threshold: the header
    and c's note say Gemini CLI has nothing to summarise, never that the session is below the threshold."""
    from inspector.tui.widgets.context_header import ContextHeader

    path = write_agent_run(tmp_path / "proj" / "chats" / "agent-run.jsonl")
    app = InspectorApp(path, threshold=0.5, live=False, provider="offline")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        header = " ".join(str(app.screen.query_one(ContextHeader).render()).split())
        assert "nothing to summarise" in header and "below threshold" not in header
        await pilot.press("c")
        await app.workers.wait_for_complete()
        note = next(n for n in app._notifications if n.title == "Nothing to summarise")
        assert "nothing comes before its split" in note.message and "under the threshold" not in note.message
        # the NOOP preview names the key that gives the agentic split, and that split summarises
        assert isinstance(app.screen, SnapshotScreen)
        said = " ".join(str(app.screen.query_one("#preview-summary", Static).render()).split())
        assert "A in the session view moves the split to model turn 5" in said
        await pilot.press("escape")
        await pilot.press("A")
        await settle(pilot)
        assert app.screen.split == 5
        await pilot.press("c")
        await app.workers.wait_for_complete()
        await settle(pilot)
        assert isinstance(app.screen, SnapshotScreen)
        assert app.screen.preview.result.status.value == "COMPRESSED"


async def test_focus_dialog_says_what_the_offline_summariser_does_with_a_focus(session_file: Path) -> None:
    app = InspectorApp(session_file, threshold=0.5, live=False, provider="offline")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        dialog = await screen_after(pilot, "f", FocusScreen)
        assert "cannot follow an instruction" in str(dialog.query_one("#focus-offline").render())


async def test_focus_dialogs_hints_are_whole_at_80_columns(session_file: Path) -> None:
    """An input's placeholder cannot wrap: the target's hint must fit the field at 80x24."""
    from textual.widgets import Input

    app = InspectorApp(session_file, threshold=0.5, live=False, provider="offline")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        dialog = await screen_after(pilot, "f", FocusScreen)
        for field in dialog.query(Input):
            assert len(field.placeholder) <= field.content_size.width, (field.id, field.placeholder)


async def test_compare_gives_the_cli_command_with_force(session_file: Path) -> None:
    app = InspectorApp(session_file, threshold=0.5, live=False, provider="offline")
    async with app.run_test(size=(160, 45)) as pilot:
        await settle(pilot)
        command = (await screen_after(pilot, "C", CompareScreen)).cli_command()  # --provider as the app was started
        assert " --compare --force" in command and "--provider offline" in command and "--threshold 0.5" in command
        await pilot.press("escape")


async def test_running_dialog_shows_the_cores_progress() -> None:
    from textual.app import App
    from textual.widgets import ProgressBar

    from inspector.progress import Progress
    from inspector.tui.screens.dialogs import RunningScreen

    cancelled: list[bool] = []
    app: App[None] = App()
    async with app.run_test(size=(80, 24)) as pilot:
        dialog = RunningScreen("Compacting", cancel=lambda: cancelled.append(True))
        await app.push_screen(dialog)
        dialog.show(Progress("summary draft", 1_234, 5_000))
        await pilot.pause()
        bar = dialog.query_one("#running-bar", ProgressBar)
        assert bar.total == 5_000 and bar.progress == 1_234
        assert "summary draft: 1,234 of 5,000 turns" in str(dialog.query_one("#running-step").render())
        dialog.show(Progress("verification", 0, 0))
        await pilot.pause()
        assert bar.total is None
        await pilot.press("escape")
        assert cancelled == [True]


async def test_provider_switch_says_which_summariser_runs_before_anything_is_sent(
    session_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.gemini_server import GeminiServer

    monkeypatch.delenv("GEMINI_API_KEY", raising=False)
    monkeypatch.delenv("GOOGLE_API_KEY", raising=False)
    monkeypatch.delenv("GOOGLE_GENAI_USE_VERTEXAI", raising=False)
    monkeypatch.setenv("PATH", str(session_file.parent))  # no gemini on it
    with GeminiServer([]) as server:
        app = InspectorApp(session_file, threshold=0.5, live=False, provider="offline", base_url=server.url)
        async with app.run_test(size=(160, 45)) as pilot:
            await settle(pilot)
            view = app.screen
            assert isinstance(view, SessionScreen)
            assert "offline: nothing leaves this machine" in view.status.get("provider")
            await pilot.press("P")
            assert app.request.provider == "gemini"
            assert "gemini: no credentials found, a run fails" in view.status.get("provider")
            assert any(n.message.startswith("Gemini cannot run") for n in app._notifications)
            await pilot.press("P")
            assert app.request.provider == "gemini-cli"
            assert "gemini-cli: no gemini on PATH, a run fails" in view.status.get("provider")
            assert any(n.message.startswith("Gemini CLI cannot run: no gemini was found on PATH")
                       for n in app._notifications)
            await pilot.press("P")
            assert app.request.provider == "auto"
            assert "auto -> offline: nothing leaves" in view.status.get("provider")
            monkeypatch.setenv("GEMINI_API_KEY", "AIza-test-key-never-shown")
            await pilot.press("P", "P", "P", "P")  # round the four again, now with a key
            assert app.request.provider == "auto"
            assert "auto -> Gemini (API key) gemini-2.5-pro: the turns are sent" in view.status.get("provider")
            assert any("GEMINI_API_KEY" in n.message for n in app._notifications)  # the variable's name only
            assert not any("AIza" in n.message for n in app._notifications)
            assert "AIza" not in view.status.get("provider")
            await pilot.press("P")
            assert app.request.provider == "offline"
        assert not server.requests  # switching sends nothing


async def test_undo_and_apply_are_offered_only_when_they_can_work(session_file: Path) -> None:
    app = InspectorApp(session_file, threshold=0.5, live=False, provider="offline")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        view = app.screen
        assert "u" not in footer_keys(view) and "a" not in footer_keys(view)  # nothing applied, no preview
        await pilot.press("c")
        await settle(pilot)
        await pilot.press("escape")
        await pilot.pause()
        assert "a" in footer_keys(view)
        await pilot.press("a", "y")
        await settle(pilot)
        assert "u" in footer_keys(view) and "a" not in footer_keys(view)
        assert "Quit" in " ".join(str(k.render()) for k in view.query("FooterKey"))  # still fits 80 columns


async def test_after_an_apply_the_header_still_names_the_model(tmp_path: Path) -> None:
    """An apply that summarises every turn leaves no turn naming a model (as Gemini CLI's own
    checkpoint does): the header names the one the session had, says so, and never 'unknown'."""
    from inspector.tui.widgets.context_header import ContextHeader

    path = copy_sample(tmp_path, "legacy-pomodoro.json")
    app = InspectorApp(path, threshold=0.5, live=False, provider="offline")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        view = app.screen
        assert isinstance(view, SessionScreen) and view.loaded is not None
        model = view.loaded.analysis.model
        assert model and view.split == len(view.loaded.analysis.turns)  # everything is summarised
        await pilot.press("c")
        await settle(pilot)
        await pilot.press("a", "y")
        await settle(pilot)
        assert view.loaded.analysis.model is None  # the file names no model now
        header = str(view.query_one(ContextHeader).render()).splitlines()[0]
        assert f"{model} (before the compaction)" in header and "not recorded" not in header
        await pilot.press("u", "y")
        await settle(pilot)
        header = str(view.query_one(ContextHeader).render()).splitlines()[0]
        assert model in header and "before the compaction" not in header


async def test_a_running_compaction_shows_the_stage_and_the_turns_done_on_a_real_bar(session_file: Path) -> None:
    """The app's own run hands the core's reports to the dialog (stage, turns done of how many),
    so its bar fills instead of reading --% while the words say 80%."""
    from inspector.tui.messages import CompactionProgress

    reports: list[CompactionProgress] = []

    def hook(message: object) -> None:
        if isinstance(message, CompactionProgress):
            reports.append(message)

    app = InspectorApp(session_file, threshold=0.5, live=False, provider="offline")
    async with app.run_test(size=(80, 24), message_hook=hook) as pilot:
        await settle(pilot)
        await pilot.press("c")
        await settle(pilot)
    measured = [r for r in reports if r.progress is not None and r.progress.total > 0]
    assert measured, [r.text for r in reports]  # before: words only, the bar never had a total
    for report in measured:
        assert report.progress is not None
        assert f"{report.progress.stage}: {report.progress.done:,} of {report.progress.total:,} turns" in report.text
