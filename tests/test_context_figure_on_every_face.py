"""The deciding context figure is the same on the app's header as in ``analyze``: at 80 columns the
header drops the window before it rounds the figure, so a 1,000,000-token prompt never reads
"1.0M / 1.0M" (a full window) beside analyze's "1,000,000 / 1,048,576 (95.4%)"; a count past 2**53
is written as analyze writes it (``count_text``), not as hundreds of digits cut off."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from inspector import cli
from inspector.analysis import analyze
from inspector.format import count_text, percent
from inspector.session import load
from inspector.tui.app import InspectorApp
from inspector.tui.session.screen import SessionScreen
from inspector.tui.widgets.context_header import ContextHeader
from tests.snapshot_app import settle
from tests.test_absurd_counts import ABSURD, absurd_session


def agent_run(folder: Path, prompt_tokens: int) -> Path:
    """One prompt, then a model turn calling a tool, recorded at ``prompt_tokens``: nothing can come
    before Gemini CLI's split (its verdict is "nothing to summarise", the longest one)."""
    path = folder / "proj" / "chats" / "session-2026-01-01T00-00-bbbb2222.jsonl"
    path.parent.mkdir(parents=True)
    records = [
        {"sessionId": "bbbb2222", "projectHash": "p", "startTime": "2026-01-01T00:00:00Z",
         "lastUpdated": "2026-01-01T00:00:00Z", "kind": "main"},
        {"id": "u1", "timestamp": "2026-01-01T00:00:01Z", "type": "user", "content": [{"text": "migrate it all"}]},
        {"id": "g1", "timestamp": "2026-01-01T00:00:02Z", "type": "gemini", "content": "reading",
         "model": "gemini-2.5-pro",
         "tokens": {"input": prompt_tokens, "output": 5, "cached": 0, "thoughts": 0, "tool": 0,
                    "total": prompt_tokens + 5},
         "toolCalls": [{"id": "c1", "name": "read_file", "args": {"file_path": "a.py"}, "status": "success",
                        "timestamp": "2026-01-01T00:00:03Z", "result": [{"functionResponse": {
                            "id": "c1", "name": "read_file", "response": {"output": "print(1)"}}}]}]},
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def header_context(app: InspectorApp) -> str:
    assert isinstance(app.screen, SessionScreen)
    return str(app.screen.query_one(ContextHeader).render()).splitlines()[1]


@pytest.mark.parametrize("size", [(80, 24), (160, 45)])
async def test_a_prompt_near_the_window_reads_the_same_in_analyze_and_the_header(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], size: tuple[int, int]) -> None:
    path = agent_run(tmp_path, 1_000_000)
    context = analyze(load(path), threshold=0.5).context
    assert cli.main(["analyze", "--threshold", "0.5", str(path)]) == 0
    report = capsys.readouterr().out
    figure, share = count_text(context.deciding_tokens), percent(context.share)
    assert f"context: {figure} / {context.token_limit:,} ({share}, recorded prompt)" in report
    app = InspectorApp(path, threshold=0.5, live=False)
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        line = header_context(app)
        assert f"{figure} " in line and f"({share})" in line, line
        assert "nothing to summarise" in line and len(line) <= size[0] - 2, line


async def test_an_absurd_count_reads_as_analyze_writes_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = absurd_session(tmp_path)
    assert cli.main(["analyze", "--threshold", "0.5", str(path)]) == 0
    shown = f"{count_text(ABSURD)} / {analyze(load(path), threshold=0.5).token_limit:,}"
    assert f"context: {shown} (" in capsys.readouterr().out
    app = InspectorApp(path, threshold=0.5, live=False)
    async with app.run_test(size=(160, 45)) as pilot:
        await settle(pilot)
        line = header_context(app)
        assert f"{shown} (" in line, line
