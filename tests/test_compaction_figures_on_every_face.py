"""A compaction's tokens before -> after read the same on every face: ``compact`` (text and
``--json``), ``export --compaction`` (Markdown and HTML), the app's preview footer and apply
confirmation, then, once applied, ``compact --apply``'s report, ``history`` and the app's timeline;
and who wrote the snapshot is said by the export as ``format.written_by`` says it."""

from __future__ import annotations

import asyncio
import html
import json
from pathlib import Path

import pytest

from inspector import cli
from inspector.format import before_after, written_by
from inspector.tui.app import InspectorApp
from inspector.tui.screens.dialogs import ConfirmScreen
from inspector.tui.screens.snapshot import SnapshotScreen
from inspector.tui.screens.timeline import TimelineScreen
from tests.snapshot_app import copy_sample, screen_after, settle
from tests.test_tui_compaction import plain

SHARED = Path("/work/shared/gemini-cli-sessions")


def run(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    code = cli.main(list(args))
    out = capsys.readouterr().out
    assert code == 0, out
    return out


def one_line(text: str) -> str:
    return " ".join(text.split())


async def preview_and_confirmation(path: Path, before: int, after: int) -> None:
    """The app: c (below the threshold it compacts anyway, as --force), the footer, then a's question."""
    app = InspectorApp(path, threshold=0.5, live=False, provider="offline")
    async with app.run_test(size=(160, 45)) as pilot:
        await settle(pilot)
        await pilot.press("c")
        await settle(pilot)
        preview = app.screen
        assert isinstance(preview, SnapshotScreen) and preview.preview.tokens == (before, after)
        assert before_after(before, after, unit=" tokens", change=True) in \
            one_line(plain(preview.query_one("#preview-footer").content))
        await pilot.press("a")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmScreen)
        assert before_after(before, after, unit=" tokens", change=True) in one_line(plain(app.screen.body))
        await pilot.press("n")


async def timeline_row(path: Path) -> str:
    """The newest apply's row of the app's timeline (t), as drawn."""
    app = InspectorApp(path, threshold=0.5, live=False)
    async with app.run_test(size=(160, 45)) as pilot:
        await settle(pilot)
        timeline = await screen_after(pilot, "t", TimelineScreen)
        table = timeline.query_one("#timeline")
        return one_line(table.render_line(1).text)


@pytest.mark.parametrize("name", ["coding-task.jsonl", "legacy-pomodoro.json"])
def test_before_and_after_read_the_same_everywhere(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], name: str) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    path = copy_sample(tmp_path, name)
    report = json.loads(run(capsys, "compact", "--force", "--provider", "offline", "--json", str(path)))
    before, after = report["original_token_count"], report["new_token_count"]
    assert report["status"] == "COMPRESSED" and after < before
    change = before_after(before, after, change=True)
    assert f"{before:,} -> {after:,} (" in change and change.endswith("%)")  # the figures, as written

    assert f"tokens (estimate): {change}" in run(capsys, "compact", "--force", "--provider", "offline", str(path))
    markdown = run(capsys, "export", "--compaction", str(path))
    assert f"| tokens | {html.escape(change)} |" in markdown
    page = run(capsys, "export", "--compaction", "--format", "html", str(path))
    assert f"<td>tokens</td><td>{html.escape(change)}</td>" in page
    assert f"<td>written by</td><td>{html.escape(written_by('offline', report['model']))}</td>" in page
    asyncio.run(preview_and_confirmation(path, before, after))

    applied = run(capsys, "compact", "--force", "--provider", "offline", "--apply", str(path))
    assert f"tokens (estimate): {before_after(before, after)}" in applied
    history = one_line(run(capsys, "history", str(path)))
    assert before_after(before, after, unit=" tokens") in history
    assert before_after(before, after) in asyncio.run(timeline_row(path))
    assert run(capsys, "revert", str(path))


@pytest.mark.skipif(not SHARED.is_dir(), reason="Gemini CLI's own sessions are not here")
@pytest.mark.parametrize("name", ["b_headless_toolcalls.jsonl", "c_interactive_manual_compress.jsonl"])
def test_gemini_clis_own_sessions(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                  capsys: pytest.CaptureFixture[str], name: str) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    path = tmp_path / "chats" / name
    path.parent.mkdir()
    path.write_bytes((SHARED / name).read_bytes())
    report = json.loads(run(capsys, "compact", "--force", "--provider", "offline", "--json", str(path)))
    if report["status"] != "COMPRESSED":
        pytest.skip(f"{name}: {report['status']}")
    change = before_after(report["original_token_count"], report["new_token_count"], change=True)
    assert f"tokens (estimate): {change}" in run(capsys, "compact", "--force", "--provider", "offline", str(path))
    assert f"| tokens | {html.escape(change)} |" in run(capsys, "export", "--compaction", str(path))
