"""Masking in the session view: marks in the table, and the detail pane's lines."""

from __future__ import annotations

from pathlib import Path

import pytest

from inspector.compaction.masking import MASKING_TAG, masking_of, outputs_folder
from inspector.session import history, load
from inspector.tui.widgets.turn_detail import TurnDetail
from inspector.tui.widgets.turn_table import TurnTable
from tests.snapshot_app import build_app
from tests.test_masking import SESSION_ID, write_session
from tests.test_tui_view import SIZE, opened, plain, table_lines


def marker(path: Path) -> str:
    return (f"<{MASKING_TAG}>\nhead of it\n\nOutput too large. Full output available at: {path}\n"
            f"</{MASKING_TAG}>")


async def test_marks_and_saved_outputs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("GEMINI_CLI_HOME", str(tmp_path / "home"))
    project_tmp = tmp_path / "gemini-tmp" / "proj"
    folder = Path(outputs_folder(str(project_tmp), SESSION_ID))
    kept, gone = folder / "read_file_call-0_abcdef.txt", folder / "read_file_call-1_ghijkl.txt"
    outputs = [marker(kept), marker(gone)] + [f"file {n}\n" + "x = 1\n" * 6_000 for n in range(12)]
    path = write_session(project_tmp, outputs)
    folder.mkdir(parents=True)
    kept.write_text("the whole saved output [b]not markup[/b]\n", encoding="utf-8")
    session = load(path)
    plan = masking_of(session, history(session))
    assert plan.masked_count > 0 and len(plan.markers) == 2
    upcoming = plan.parts[0]

    async with build_app(path).run_test(size=SIZE) as pilot:
        screen = await opened(pilot)
        table = screen.query_one(TurnTable)
        detail = screen.query_one(TurnDetail)
        await pilot.press("home")
        rows = table_lines(table)
        masked_rows = [r for r in rows if "■" in r]
        assert [r.split()[0] for r in masked_rows] == ["2", "5"]
        await pilot.press("down", "down")  # turn 2: masked, its file still there
        text = plain(detail.body.content)
        assert "was masked by Gemini CLI" in text
        assert "the whole saved output [b]not markup[/b]" in text
        await pilot.press("down", "down", "down")  # turn 5: masked, its file gone
        text = plain(detail.body.content)
        assert f"saved to {gone}; that file is gone" in text.replace("\n", "")

        table.move_to(upcoming.turn)
        await pilot.pause()
        row = next(r for r in table_lines(table) if r.split() and r.split()[0] == str(upcoming.turn))
        assert "□" in row
        text = plain(detail.body.content, width=300)
        freed = sum(p.saved for p in plan.parts_of(upcoming.turn))
        assert f"The next turn masks 1 output here, freeing {freed:,} tokens" in text
        assert f"{plan.masked_count:,} outputs and {plan.tokens_saved:,} tokens" in text
