"""Lone surrogates: Gemini CLI resumes such sessions, so they apply and revert too."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from inspector.cli import main
from inspector.session import history, load
from inspector.store import JournalInfo, apply_history, read_history, revert, store_dir
from tests.test_store import compacted, sample_copy

LONE = "half a pair: \ud800 and \udfff"




@pytest.mark.parametrize("name", ["coding-task.jsonl", "legacy-pomodoro.json"])
def test_a_session_with_lone_surrogates_applies_and_reverts(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = sample_copy(tmp_path, name)
    if path.suffix == ".jsonl":
        lines = path.read_text().splitlines()
        records = [json.loads(line) for line in lines]
        last_user = max(i for i, r in enumerate(records) if r.get("type") == "user")
        records[last_user]["content"] = [{"text": LONE}]
        path.write_text("".join(json.dumps(r) + "\n" for r in records))  # \ud800 escaped, as Node writes it
    else:
        doc = json.loads(path.read_text())
        users = [m for m in doc["messages"] if m.get("type") == "user"]
        users[-1]["content"] = [{"text": LONE}]
        path.write_text(json.dumps(doc, indent=2))
    original = path.read_bytes()
    session = load(path)
    turns = history(session)
    split = next(i for i, t in enumerate(turns) if LONE in json.dumps(t.content, ensure_ascii=False))
    new, sources = compacted(turns, split)
    entry = apply_history(session, turns, new, sources, journal=JournalInfo(snapshot=f"<state_snapshot>{LONE}"))
    assert entry.state == "applied"
    assert LONE in json.dumps([t.content for t in history(load(path))], ensure_ascii=False)
    [again] = read_history(path).entries
    assert again.info.snapshot == f"<state_snapshot>{LONE}"
    assert main(["history", "--snapshots", str(path)]) == 0
    assert "\\ud800" in capsys.readouterr().out  # shown visibly
    assert len(list((store_dir(path) / "backups").iterdir())) == 1
    revert(path)
    assert path.read_bytes() == original
    assert list((store_dir(path) / "backups").iterdir()) == []  # an apply undone needs its backup no more
