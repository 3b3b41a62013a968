"""What a checkpoint's list of messages holds that is no message is named, and rewinds replay as
Gemini CLI replays them however many there are."""

from __future__ import annotations

import json
import random
from pathlib import Path

from inspector.session import load

META = {"sessionId": "s-1", "projectHash": "p", "startTime": "2026-01-01T00:00:00Z",
        "lastUpdated": "2026-01-01T00:00:00Z", "kind": "main"}


def user(ident: str) -> dict[str, object]:
    return {"id": ident, "timestamp": "2026-01-01T00:00:01Z", "type": "user", "content": [{"text": f"say {ident}"}]}


def write(path: Path, records: list[object]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def test_entries_of_a_checkpoint_that_are_no_message_are_named_with_their_line(tmp_path: Path) -> None:
    listed = [user("a"), None, 5, {"id": 7, "type": "user", "content": "x"}, user("b")]
    path = write(tmp_path / "s.jsonl", [META, user("old"), {"$set": {"messages": listed}}, user("c")])
    session = load(path)
    assert [m["id"] for m in session.messages] == ["a", "b", "c"]
    said = [(w.line, w.message) for w in session.warnings]
    assert said == [
        (3, "$set.messages[1] is null: left out, as Gemini CLI leaves it out"),
        (3, "$set.messages[2] is a number: left out, as Gemini CLI leaves it out"),
        (3, "$set.messages[3] is an object whose id is a number: left out, as Gemini CLI leaves it out"),
    ], said
    assert not any(w.gemini_reads for w in session.warnings)  # nothing Gemini CLI reads is skipped: apply allowed


def test_many_rewinds_replay_as_a_list_cut_at_each_target(tmp_path: Path) -> None:
    """Rewinds to the newest message, to older ones and to unknown ids, thousands of them, against the
    plain rule: a rewind drops its target and all after it (all of them for an unknown id)."""
    rng = random.Random(7)
    records: list[object] = [META]
    expected: list[str] = []
    for n in range(3000):
        ident = f"m{n}"
        records.append(user(ident))
        expected.append(ident)
        if rng.random() < 0.4 and expected:
            target = rng.choice([expected[-1], expected[rng.randrange(len(expected))], "unknown"])
            records.append({"$rewindTo": target})
            expected = expected[:expected.index(target)] if target in expected else []
    session = load(write(tmp_path / "rewinds.jsonl", records))
    assert [m["id"] for m in session.messages] == expected
