"""A recorded count no real session holds, but a finite number all the same (``1.7e308``): Gemini CLI
reads it as a number, so the project loads it (tests/test_reader_hostile.py), and every face shows it
short ("1.7e+308"), never as the 309-digit integer it is exactly."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from rich.console import Console

from inspector.cli import main
from inspector.format import EXACT_COUNTS, compact_number, count_text
from inspector.tui.app import InspectorApp
from inspector.tui.screens.figures import FiguresScreen
from inspector.tui.session.screen import SessionScreen
from tests.snapshot_app import SAMPLES, screen_after, settle

ABSURD = 1.7e308
SHOWN = f"{ABSURD:.1e}"  # 1.7e+308
DIGITS = re.compile(r"\d(?:,?\d){20,}")  # a run of over 20 digits: no count a reader can take in


def absurd_session(folder: Path, value: float | int = ABSURD) -> Path:
    """The coding-task sample, its every usage figure ``value``."""
    lines = []
    for line in (SAMPLES / "coding-task.jsonl").read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        if isinstance(record.get("tokens"), dict):
            record["tokens"] = dict.fromkeys(record["tokens"], value)
        lines.append(json.dumps(record))
    path = folder / "proj" / "chats" / "absurd.jsonl"
    path.parent.mkdir(parents=True)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.mark.parametrize(("value", "shown"), [
    (9163, "9,163"), (EXACT_COUNTS, f"{EXACT_COUNTS:,}"), (EXACT_COUNTS + 1, "9.0e+15"), (2**70, "1.2e+21"),
    (ABSURD, SHOWN), (-ABSURD, "-" + SHOWN), (10**400, "1.0e+400"), (-(10**400), "-1.0e+400"),
])
def test_a_count_past_what_javascript_holds_exactly_is_short(value: float, shown: str) -> None:
    assert count_text(value) == shown  # an integer past a float's range too (it raised OverflowError)
    assert compact_number(value) == (shown if abs(value) > 1e300 else compact_number(float(value)))


def test_the_reports_show_the_figure_short(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = absurd_session(tmp_path)
    assert main(["analyze", str(path)]) == 0
    out = capsys.readouterr().out
    assert f"context: {SHOWN} / 1,048,576" in out and f"recorded prompt {SHOWN} >= threshold" in out
    assert not DIGITS.search(out), DIGITS.search(out)

    assert main(["compact", str(path), "--provider", "offline"]) == 0
    out = capsys.readouterr().out
    assert f"recorded last prompt: {SHOWN}" in out and not DIGITS.search(out)

    for form in ("md", "html"):
        target = tmp_path / f"export.{form}"
        assert main(["export", str(path), "--format", form, "--compaction", "--provider", "offline",
                     "--out", str(target)]) == 0
        text = target.read_text(encoding="utf-8")
        assert SHOWN in text and not DIGITS.search(text), (form, DIGITS.search(text))


def test_json_keeps_the_number_a_program_reads(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``--json`` is for programs: the figure is the number the file holds (as any JSON reader reads it)."""
    assert main(["analyze", "--json", str(absurd_session(tmp_path))]) == 0
    data = json.loads(capsys.readouterr().out)
    assert float(data["recorded_prompt_tokens"]) == ABSURD and data["would_compress"] is True


async def test_the_app_shows_the_figure_short(tmp_path: Path) -> None:
    app = InspectorApp(absurd_session(tmp_path), threshold=0.5, live=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, SessionScreen)
        figures = await screen_after(pilot, "i", FiguresScreen)
        console = Console(width=200, record=True, color_system=None)
        for name in ("#figures-verdict", "#figures-table"):
            console.print(figures.query_one(name).content)
        text = " ".join(console.export_text().split())
        assert SHOWN in text and not DIGITS.search(text), DIGITS.search(text)
