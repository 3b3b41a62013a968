"""The session list: every session under GEMINI_CLI_HOME, newest first, filter, open."""

from __future__ import annotations

import json
import os
import shutil
from datetime import UTC
from pathlib import Path

import pytest
from textual.widgets import DataTable, Static

from inspector.tui.app import InspectorApp
from inspector.tui.screens.session_list import SessionListScreen
from inspector.tui.session.screen import SessionScreen
from tests.conftest import SAMPLES
from tests.snapshot_app import idle

SIZE = (160, 45)
CONTEXT = "<session_context>\nThis is the Gemini CLI.\n</session_context>"


def write_session(path: Path, prompts: list[str], mtime: float, *, updated: str = "2026-01-01T00:00:00Z",
                  session_id: str | None = None, kind: str = "main") -> None:
    lines: list[dict[str, object]] = [
        {"sessionId": session_id or path.stem, "projectHash": "p" * 64, "startTime": "2026-01-01T00:00:00Z",
         "lastUpdated": updated, "kind": kind},
        {"$set": {"messages": [{"id": "ctx", "timestamp": "t", "type": "user", "content": [{"text": CONTEXT}]}]}},
    ]
    for i, prompt in enumerate(prompts):
        lines.append({"id": f"u{i}", "timestamp": "t", "type": "user", "content": [{"text": prompt}]})
        lines.append({"id": f"g{i}", "timestamp": "t", "type": "gemini", "content": "done", "model": "gemini-2.5-pro"})
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    os.utime(path, (mtime, mtime))


@pytest.fixture
def gemini_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    chats = home / ".gemini" / "tmp"
    # the file times say the opposite of lastUpdated: the list follows lastUpdated
    write_session(chats / "alpha" / "chats" / "session-old.jsonl", ["fix the [bold]parser[/]"], 1_700_100_000,
                  updated="2026-01-01T00:00:00Z")
    write_session(chats / "beta" / "chats" / "session-new.jsonl", ["write docs", "more"], 1_700_000_000,
                  updated="2026-02-01T00:00:00Z")
    (chats / "beta" / "chats" / "session-bad.json").write_text("not json at all", encoding="utf-8")
    os.utime(chats / "beta" / "chats" / "session-bad.json", (1_600_000_000, 1_600_000_000))
    monkeypatch.setenv("GEMINI_CLI_HOME", str(home))
    return home


async def listed(pilot) -> SessionListScreen:  # type: ignore[no-untyped-def]
    await pilot.pause()
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()
    screen = pilot.app.screen
    assert isinstance(screen, SessionListScreen)
    return screen


def column(table: DataTable, name: str) -> list[str]:  # type: ignore[type-arg]
    return [str(table.get_cell(row, name)) for row in table.rows]


async def test_lists_sessions_newest_first_with_first_real_prompt(gemini_home: Path) -> None:
    app = InspectorApp(None, threshold=0.5, live=False)
    async with app.run_test(size=SIZE) as pilot:
        screen = await listed(pilot)
        table = screen.table
        assert column(table, "project") == ["beta", "alpha", "beta"]
        prompts = column(table, "title")
        assert prompts[0] == "write docs"
        assert prompts[1] == "fix the [bold]parser[/]"  # shown literally, context block skipped
        assert "broken JSON" in prompts[2]  # the reason it cannot be read
        assert column(table, "turns")[:2] == ["4", "2"]  # history turns, as the session header counts them


async def test_filter_and_open(gemini_home: Path) -> None:
    app = InspectorApp(None, threshold=0.5, live=False)
    async with app.run_test(size=SIZE) as pilot:
        screen = await listed(pilot)
        await pilot.press("slash", *"parser")
        assert screen.table.row_count == 1
        await pilot.press("enter")  # leaves the filter box
        await pilot.press("enter")  # opens the row
        await idle(pilot)
        assert isinstance(app.screen, SessionScreen)
        assert app.screen.path.name == "session-old.jsonl"
        assert app.screen.loaded is not None
        await pilot.press("escape")
        assert app.screen is screen


async def test_folder_path_lists_the_sessions_in_it(gemini_home: Path) -> None:
    folder = gemini_home / ".gemini" / "tmp" / "beta" / "chats"
    app = InspectorApp(folder, threshold=0.5, live=False)
    async with app.run_test(size=SIZE) as pilot:
        screen = await listed(pilot)
        assert sorted(Path(str(key.value)).name for key in screen.table.rows) == ["session-bad.json",
                                                                               "session-new.jsonl"]


async def test_empty_home_says_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GEMINI_CLI_HOME", str(tmp_path))
    app = InspectorApp(None, threshold=0.5, live=False)
    async with app.run_test(size=SIZE) as pilot:
        screen = await listed(pilot)
        assert screen.table.row_count == 0
        assert "No session files" in str(screen.query_one("#list-empty").content)


async def test_no_sessions_says_how_to_open_one(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GEMINI_CLI_HOME", str(tmp_path / "nobody"))
    app = InspectorApp(None, threshold=0.5, live=False)
    async with app.run_test(size=SIZE) as pilot:
        screen = await listed(pilot)
        message = screen.query_one("#list-empty")
        assert message.display and "session-inspector PATH" in str(message.render())
        assert not screen.table.display


async def test_at_80x24_the_list_shows_session_title_and_turns(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home"
    project = "e" * 64  # the project hash that used to push every other column off screen
    write_session(home / ".gemini" / "tmp" / project / "chats" / "session-2026-01-01T00-00-1a2b3c4d.jsonl",
                  ["explain the build"], 1_700_000_000, session_id="1a2b3c4d-0000-4000-8000-000000000000")
    monkeypatch.setenv("GEMINI_CLI_HOME", str(home))
    app = InspectorApp(None, threshold=0.5, live=False)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await listed(pilot)
        table = screen.table
        keys = [str(column.key.value) for column in table.columns.values()]
        assert keys[0] == "session" and "title" in keys and "turns" in keys
        assert sum(column.get_render_width(table) for column in table.columns.values()) <= 80
        assert column(table, "session") == ["1a2b3c4d"]
        assert column(table, "title") == ["explain the build"]
        assert column(table, "turns") == ["2"]
        if "project" in keys:
            assert len(column(table, "project")[0]) <= 12


async def test_subagents_under_their_parent_and_linked_from_its_view(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home"
    chats = home / ".gemini" / "tmp" / "proj" / "chats"
    parent = chats / "session-parent.jsonl"
    write_session(parent, ["delegate the survey"], 1_700_000_000, session_id="parent-id",
                  updated="2026-01-01T00:00:00Z")
    write_session(chats / "session-other.jsonl", ["unrelated"], 1_700_000_000, updated="2026-06-01T00:00:00Z")
    agent = chats / "parent-id" / "agent-77.jsonl"
    write_session(agent, ["survey the files", "and the tests"], 1_700_000_000, session_id="agent-77",
                  kind="subagent", updated="2026-01-01T00:01:00Z")
    monkeypatch.setenv("GEMINI_CLI_HOME", str(home))
    app = InspectorApp(None, threshold=0.5, live=False)
    async with app.run_test(size=SIZE) as pilot:
        screen = await listed(pilot)
        table = screen.table
        rows = [Path(str(key.value)).name for key in table.rows]
        assert rows == ["session-other.jsonl", "session-parent.jsonl", "agent-77.jsonl"]
        assert column(table, "session")[2] == "└ agent-77"
        assert "1 subagent" in column(table, "title")[1]
        table.move_cursor(row=1)
        await pilot.press("enter")
        await idle(pilot)
        view = app.screen
        assert isinstance(view, SessionScreen) and view.path == parent
        assert view.check_action("subagents", ()) is True
        await pilot.press("b")
        await pilot.pause()
        from inspector.tui.screens.subagents import SubagentsScreen

        assert isinstance(app.screen, SubagentsScreen)
        await pilot.press("enter")
        await idle(pilot)
        opened = app.screen
        assert isinstance(opened, SessionScreen) and opened.path == agent
        assert opened.loaded is not None and len(opened.loaded.analysis.turns) == 4  # analysed like any session
        assert opened.check_action("subagents", ()) is False  # it started none
        await pilot.press("escape")  # back to the parent it was opened from, then to the list
        await idle(pilot)
        assert app.screen is view
        await pilot.press("escape")
        await idle(pilot)
        assert app.screen is screen


async def test_the_list_is_read_again_on_return(gemini_home: Path) -> None:
    app = InspectorApp(None, threshold=0.5, live=False)
    async with app.run_test(size=SIZE) as pilot:
        screen = await listed(pilot)
        assert column(screen.table, "turns")[0] == "4"
        await pilot.press("enter")
        await pilot.pause()
        await app.workers.wait_for_complete()
        path = app.screen.path  # type: ignore[attr-defined]
        write_session(path, ["write docs", "more", "and more"], 1_700_200_000, updated="2026-03-01T00:00:00Z")
        await pilot.press("escape")
        assert app.screen is screen
        await listed(pilot)
        assert column(screen.table, "turns")[0] == "6"


async def test_the_session_context_turn_is_labelled(tmp_path: Path) -> None:
    from inspector.session.history import is_environment_content
    from tests.snapshot_app import copy_sample

    path = copy_sample(tmp_path, "gemini-cli-0.61-chat-save.json")  # a /chat save keeps the context turn first
    app = InspectorApp(path, threshold=0.5, live=False)
    async with app.run_test(size=SIZE) as pilot:
        await idle(pilot)
        view = app.screen
        assert isinstance(view, SessionScreen) and view.loaded is not None
        turns = view.loaded.analysis.turns
        assert is_environment_content(turns[0].parts) and not is_environment_content(turns[1].parts)
        width = view.table.content_width
        assert "session context" in view.table._row(0, width).text
        assert "session context" not in view.table._row(1, width).text


async def test_at_80x24_the_browser_lists_what_resume_lists(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Files Gemini CLI wrote, in a home laid out as Gemini CLI lays it out: the `$set.summary` title,
    one row per session id (the later copy), side files and warning-only files left out, newest
    `lastUpdated` first whatever the file times say, and each row's turns the opened session's."""
    from tests.snapshot_app import SAMPLES

    home = tmp_path / "home"
    project = home / ".gemini" / "tmp" / ("60c307ff" * 8) / "chats"
    other = home / ".gemini" / "tmp" / ("e31ed48b" * 8) / "chats"
    project.mkdir(parents=True)
    other.mkdir(parents=True)
    tools = project / "session-2026-11-22T05-22-8ba1ee29.jsonl"
    prompts = project / "session-2026-11-22T05-23-c1fdd0dc.jsonl"
    older = project / "session-2026-11-21T09-00-c1fdd0dc.jsonl"  # the same session id, an older copy
    compressed = other / "session-2026-11-22T05-23-bdc740a7.jsonl"
    for source, target in (("gemini-cli-0.61-tool-calls.jsonl", tools),
                           ("gemini-cli-0.61-three-prompts.jsonl", prompts),
                           ("gemini-cli-0.61-compress.jsonl", compressed)):
        target.write_bytes((SAMPLES / source).read_bytes())
    first, rest = prompts.read_text(encoding="utf-8").split("\n", 1)
    metadata = json.loads(first)
    metadata["lastUpdated"] = "2026-11-21T09:00:00.000Z"
    older.write_text(json.dumps(metadata) + "\n" + rest.replace("2026-11-22T05:23:0", "2026-11-21T09:00:0"),
                     encoding="utf-8")
    warning = project / "session-2026-11-23T08-00-deadbeef.jsonl"  # Gemini CLI wrote only a warning
    warning.write_text(json.dumps({"sessionId": "deadbeef-0000-4000-8000-000000000000", "projectHash": "60c307ff" * 8,
                                   "startTime": "2026-11-23T08:00:00.000Z", "lastUpdated": "2026-11-23T08:00:00.000Z",
                                   "kind": "main"}) + "\n" +
                       json.dumps({"id": "w", "timestamp": "2026-11-23T08:00:00.000Z", "type": "warning",
                                   "content": "Skipping project agents: the folder is not trusted."}) + "\n",
                       encoding="utf-8")
    (project / "logs.json").write_text("[]", encoding="utf-8")  # a side file
    # file times the opposite of lastUpdated: the oldest session has the newest file
    for offset, path in enumerate((compressed, prompts, tools, older, warning)):
        os.utime(path, (1_700_000_000 + offset * 1000, 1_700_000_000 + offset * 1000))
    monkeypatch.setenv("GEMINI_CLI_HOME", str(home))
    app = InspectorApp(None, threshold=0.5, live=False)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await listed(pilot)
        table = screen.table
        assert sum(c.get_render_width(table) for c in table.columns.values()) <= 80
        rows = [Path(str(key.value)) for key in table.rows]
        assert rows == [compressed, prompts, tools]  # newest lastUpdated first; one row per session id
        assert column(table, "session") == ["bdc740a7", "c1fdd0dc", "8ba1ee29"]
        assert column(table, "title")[2] == "Survey the demo project files"  # the $set.summary title
        assert column(table, "title")[1].startswith("Hello there")  # else the first prompt
        title = screen.query_one("#list-title")
        assert "3 sessions; not listed: 1 with no conversation, 1 older copy" in str(title.render())
        assert title.region.height > 1  # wrapped at 80 columns, not cut
        listed_turns = column(table, "turns")
        for row, path in enumerate(rows):
            table.move_cursor(row=row)
            await pilot.press("enter")
            await idle(pilot)
            view = app.screen
            assert isinstance(view, SessionScreen) and view.path == path and view.loaded is not None
            header = str(view.query_one("#context").render())
            assert f" {listed_turns[row]} turns " in header  # the list's turns are the header's
            await pilot.press("escape")
            await listed(pilot)


async def test_at_80_columns_the_highlighted_row_is_named_in_full(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """Every /chat save checkpoint begins "checkpoint-": the session column cuts them alike, so the
    highlighted row's file name and title are shown whole below the table."""
    folder = tmp_path / "saved"  # a folder of files, as `session-inspector FOLDER` lists it
    folder.mkdir()
    for name in ("checkpoint-bare-array.json", "checkpoint-rate-limit.json"):
        shutil.copy(SAMPLES / name, folder / name)
    monkeypatch.setenv("GEMINI_CLI_HOME", str(tmp_path / "home"))
    app = InspectorApp(folder, threshold=0.5, live=False)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await listed(pilot)
        table = screen.table
        cut = column(table, "session")
        assert len(set(cut)) == 1 or any(cell.endswith("…") for cell in cut)  # the column does cut them
        named = set()
        for row in range(table.row_count):
            table.move_cursor(row=row)
            await pilot.pause()
            line = str(screen.query_one("#list-row", Static).content)
            assert line.startswith(Path(str(table.coordinate_to_cell_key((row, 0)).row_key.value)).name)
            named.add(line.split()[0])
        assert named == {"checkpoint-bare-array.json", "checkpoint-rate-limit.json"}


async def test_help_on_the_list_says_what_the_list_is_for(gemini_home: Path) -> None:
    from inspector.tui.screens.help import LIST_INTRO, SESSION_INTRO, HelpScreen

    app = InspectorApp(None, threshold=0.5, live=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await listed(pilot)
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        assert app.screen.intro == LIST_INTRO != SESSION_INTRO  # not the session view's divider and splits
        assert {"sessions.filter", "sessions.search"} <= {row[4] for row in app.screen.rows}


async def test_the_newest_session_is_selected_and_opened_by_enter(gemini_home: Path) -> None:
    """The newest by lastUpdated (session-new) is selected, though its file is older and its name later."""
    app = InspectorApp(None, threshold=0.5, live=False)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await listed(pilot)
        assert screen.table.cursor_row == 0
        assert str(screen.selected_path()).endswith("session-new.jsonl")
        await pilot.press("enter")
        await idle(pilot)
        assert isinstance(app.screen, SessionScreen) and app.screen.path.name == "session-new.jsonl"


async def test_relative_times_project_names_and_the_resume_command(gemini_home: Path) -> None:
    import time
    from datetime import datetime

    chats = gemini_home / ".gemini" / "tmp" / "beta" / "chats"
    two_hours_ago = datetime.fromtimestamp(time.time() - 7200, UTC).isoformat().replace("+00:00", "Z")
    write_session(chats / "session-new.jsonl", ["write docs", "more"], 1_700_000_000, updated=two_hours_ago,
                  session_id="9d41b7e2-55c0-4f0e")
    registry = {"projects": {"/home/ana/payments service": "beta"}}
    (gemini_home / ".gemini" / "projects.json").write_text(json.dumps(registry), encoding="utf-8")
    app = InspectorApp(None, threshold=0.5, live=False)
    async with app.run_test(size=SIZE) as pilot:
        screen = await listed(pilot)
        assert column(screen.table, "updated")[0] == "2 h ago"
        assert column(screen.table, "project")[:2] == ["payments service", "alpha"]
        below = str(screen.query_one("#list-row", Static).render())
        command = "cd '/home/ana/payments service' && gemini --resume 9d41b7e2-55c0-4f0e"
        assert command in below
        await pilot.press("c")
        assert app.clipboard == command


async def test_delete_moves_the_session_aside_and_u_puts_it_back(gemini_home: Path) -> None:
    chats = gemini_home / ".gemini" / "tmp" / "beta" / "chats"
    path = chats / "session-new.jsonl"
    before = path.read_bytes()
    app = InspectorApp(None, threshold=0.5, live=False)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await listed(pilot)
        await pilot.press("D")
        await pilot.press("y")
        screen = await listed(pilot)
        assert not path.exists()
        assert (chats / ".session-inspector" / "deleted" / "session-new.jsonl").read_bytes() == before
        assert not any(str(key.value).endswith("session-new.jsonl") for key in screen.table.rows)
        await pilot.press("u")
        screen = await listed(pilot)
        assert path.read_bytes() == before
        assert any(str(key.value).endswith("session-new.jsonl") for key in screen.table.rows)


async def test_the_title_says_what_is_not_listed_and_why(gemini_home: Path) -> None:
    chats = gemini_home / ".gemini" / "tmp" / "alpha" / "chats"
    (chats / "session-empty.jsonl").write_text(json.dumps({"sessionId": "e", "kind": "main"}) + "\n",
                                               encoding="utf-8")
    app = InspectorApp(None, threshold=0.5, live=False)
    async with app.run_test(size=SIZE) as pilot:
        screen = await listed(pilot)
        title = str(screen.query_one("#list-title", Static).render())
        assert "not listed: 1 with no conversation" in title
