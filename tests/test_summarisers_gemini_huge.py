"""A runaway answer from Gemini (10 MB of snapshot lines): the report says how much there is instead of
printing all of it, and nothing is written."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from inspector.cli import main
from tests.gemini_server import GeminiServer, reply

KEY = "AIzaMoreHuge-0123456789abcdefXYZ"
SAMPLE = Path(__file__).resolve().parents[1] / "sample_sessions" / "coding-task.jsonl"


def runaway(word: str, lines: int) -> str:
    body = "\n".join(f"- {word} fact number {i} about src/module_{i}.py" for i in range(lines))
    return f"<state_snapshot><key_knowledge>\n{body}\n</key_knowledge></state_snapshot>"


def test_a_10_mb_answer_is_counted_not_printed(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("GOOGLE_API_KEY", "GOOGLE_GENAI_USE_VERTEXAI", "GOOGLE_GENAI_USE_ENTERPRISE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("GEMINI_API_KEY", KEY)
    (tmp_path / "chats").mkdir()
    session = Path(shutil.copyfile(SAMPLE, tmp_path / "chats" / SAMPLE.name))
    before = session.read_bytes()
    draft, final = runaway("draft", 200_000), runaway("final", 200_000)
    assert len(final) > 10_000_000
    with GeminiServer([reply(draft), reply(final)]) as server:
        code = main(["compact", str(session), "--force", "--provider", "gemini", "--base-url", server.url, "--apply"])
    out, err = capsys.readouterr()
    assert code == 1 and session.read_bytes() == before
    assert "COMPRESSION_FAILED_INFLATED_TOKEN_COUNT" in out and "nothing was written" in err
    (more,) = re.findall(r"… and ([\d,]+) more lines \(--json prints the whole snapshot\)", out)
    fact = re.compile(r"- final fact number \d+ about src/module_\d+\.py")
    shown = sum(1 for line in out.splitlines() if fact.fullmatch(line))
    assert shown >= 20 and 1 + shown + int(more.replace(",", "")) == 200_002  # the opening tags' line, the facts
    assert "draft -> final: +200,000 -200,000 =0 lines (the lines: --json, draft_final_diff)" in out
    assert len(out) < 200_000 and KEY not in out + err
