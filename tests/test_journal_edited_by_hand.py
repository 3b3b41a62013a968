"""A journal edited by hand (or by anything else) to hold numbers this project never writes.

A number past the doubles' range (``1e400`` written out in digits) or NaN
in a journal event made ``history``, ``history --snapshots`` and ``revert
--list`` end with a traceback (OverflowError while writing the count).  Such
a line is damage: every command that reads the journal says so in one line
naming the journal, the line and the field, exit 2, and writes nothing.  A
session recording a huge but finite count (``1.7e308``, which Gemini CLI
reads as a number) still applies, and its journal still reads.
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import shutil
import sys
from pathlib import Path

import pytest

from inspector.cli import main
from inspector.store import files, store_dir
from inspector.store.journal import JournalEntry

SAMPLE = Path(__file__).resolve().parents[1] / "sample_sessions" / "gemini-cli-0.61-tool-calls.jsonl"
READERS = (["history"], ["history", "--json"], ["history", "--snapshots"], ["revert", "--list"], ["revert"])


def _applied(tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str | None = None) -> Path:
    path = tmp_path / "session.jsonl"
    if text is None:
        shutil.copy(SAMPLE, path)
    else:
        path.write_text(text, encoding="utf-8")
    assert main(["compact", str(path), "--provider", "offline", "--force", "--apply"]) == 0
    capsys.readouterr()
    return path


def _journal(path: Path) -> Path:
    return store_dir(path) / "journal.jsonl"


@pytest.mark.parametrize(("field", "written", "said"), [
    ("tokens_before", "1" + "0" * 400, "info.tokens_before: a number past any count"),
    ("tokens_after", "-1" + "0" * 400, "info.tokens_after: a number past any count"),
    ("duration_seconds", "NaN", "info.duration_seconds: nan is not a number JSON holds"),
    ("split_point", "Infinity", "info.split_point: inf is not a number JSON holds"),
])
def test_a_number_no_journal_holds_is_named_as_damage(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                      field: str, written: str, said: str) -> None:
    path = _applied(tmp_path, capsys)
    journal = _journal(path)
    event = json.loads(journal.read_text(encoding="utf-8").splitlines()[0])
    value = event["info"][field]
    assert isinstance(value, (int, float)) and not isinstance(value, bool)
    lines = journal.read_bytes().split(b"\n")
    old = f'"{field}":{json.dumps(value)}'.encode()
    assert old in lines[0]
    lines[0] = lines[0].replace(old, f'"{field}":{written}'.encode())
    journal.write_bytes(b"\n".join(lines))
    session, record = path.read_bytes(), journal.read_bytes()
    for argv in READERS:
        code = main([*argv, str(path)])
        out, err = capsys.readouterr()
        assert code == 2 and out == "" and len(err.splitlines()) == 1, (argv, out[-300:], err[-600:])
        assert f"{journal}: line 1 is damaged ({said}" in err, (argv, err)
    assert path.read_bytes() == session and journal.read_bytes() == record, "nothing is written"


def test_a_huge_finite_recorded_count_still_applies_and_reads(tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    text = re.sub(r'"input":\d+', '"input":1.7e308', SAMPLE.read_text(encoding="utf-8"))
    assert '"input":1.7e308' in text
    path = _applied(tmp_path, capsys, text)
    assert main(["history", "--json", str(path)]) == 0
    entry = json.loads(capsys.readouterr().out)["entries"][0]
    assert entry["info"]["recorded_prompt_tokens"] > sys.float_info.max / 2
    assert main(["history", str(path)]) == 0 and "applied" in capsys.readouterr().out
    assert main(["revert", str(path)]) == 0 and path.read_text(encoding="utf-8") == text


def test_an_apply_recorded_twice_is_damage_not_two_applies(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A journal joined from two copies holds one apply twice: it was listed as two applies, one revert
    undid it, and the other then stood as 'can be undone' with nothing left to undo."""
    path = _applied(tmp_path, capsys)
    journal = _journal(path)
    events = journal.read_bytes()
    journal.write_bytes(events + events)
    session = path.read_bytes()
    for argv in READERS:
        code = main([*argv, str(path)])
        out, err = capsys.readouterr()
        assert code == 2 and out == "" and len(err.splitlines()) == 1, (argv, out[-300:], err[-600:])
        assert f"{journal}: line 3 is damaged (apply " in err and "recorded a second time" in err, (argv, err)
    assert path.read_bytes() == session and journal.read_bytes() == events + events


@pytest.mark.parametrize("made", ["file", "fifo"])
def test_a_store_that_is_no_folder_is_said_by_revert_as_by_history(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                                 made: str) -> None:
    """A file or a FIFO where the store's folder goes: revert said 'nothing to undo: no compaction was
    applied', while history said the journal cannot be read.  Both say the same now, and nothing is written."""
    path = tmp_path / "session.jsonl"
    shutil.copy(SAMPLE, path)
    store = store_dir(path)
    store.parent.mkdir()
    if made == "file":
        store.write_bytes(b"")
    else:
        os.mkfifo(store)
    said = []
    for argv in (["history"], ["revert"], ["revert", "--list"]):
        code = main([*argv, str(path)])
        out, err = capsys.readouterr()
        assert code == 2 and out == "" and len(err.splitlines()) == 1, (argv, out, err)
        said.append(err)
    assert said[0] == said[1] == said[2]
    assert f"{store / 'journal.jsonl'}: cannot read the journal: " in said[1] and "nothing to undo" not in said[1]
    assert path.read_bytes() == SAMPLE.read_bytes()


def test_a_lock_held_by_a_stopped_process_is_said_not_waited_on(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """Another session-inspector stopped (Ctrl+Z) in the middle of an apply holds the store's lock: an apply or a
    revert then waited for ever.  Now each waits a while, then says so in one line and changes nothing."""
    monkeypatch.setattr(files, "LOCK_WAIT_SECONDS", 0.3, raising=False)
    (tmp_path / "a").mkdir()
    applied = _applied(tmp_path / "a", capsys)  # one to revert
    fresh = tmp_path / "b" / "session.jsonl"  # one to apply
    fresh.parent.mkdir()
    shutil.copy(SAMPLE, fresh)
    store_dir(fresh).mkdir(parents=True)
    for path, argv in ((applied, ["revert"]), (fresh, ["compact", "--provider", "offline", "--force", "--apply"])):
        store = store_dir(path)
        holder = os.open(store / "lock", os.O_RDWR | os.O_CREAT, 0o600)
        before = {p: p.read_bytes() for p in (path, *store.rglob("*")) if p.is_file()}
        try:
            fcntl.flock(holder, fcntl.LOCK_EX)  # (another open file: a lock of its own, as another process's is)
            code = main([*argv, str(path)])  # (waiting for ever, it would run into the suite's timeout)
            out, err = capsys.readouterr()
            assert code == 2 and len(err.splitlines()) == 1, (argv, out[-500:], err)
            assert "another session-inspector has been applying or reverting this session for over 0.3 s" in err
            assert str(store / "lock") in err and err.rstrip().endswith("nothing was changed")
            after = {p: p.read_bytes() for p in (path, *store.rglob("*")) if p.is_file()}
            assert after == before, "nothing is written"
        finally:
            os.close(holder)
        assert main([*argv, str(path)]) == 0, capsys.readouterr().err  # the lock free again: it goes through
        capsys.readouterr()


def test_a_journal_of_thousands_of_applies_reads_in_linear_time(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """Each event found its apply by comparing it with every apply before it: 20,000 applies (a 30 MB
    journal) kept history, revert and apply busy for minutes.  10,000 take seconds now, not most of a minute."""
    path = _applied(tmp_path, capsys)
    journal = _journal(path)
    apply, applied = (json.loads(line) for line in journal.read_text(encoding="utf-8").splitlines())
    lines = []
    for k in range(10_000):
        ident = f"{k + 1:04d}-{k:08x}"
        lines += [json.dumps({**apply, "id": ident, "seq": k + 1}), json.dumps({**applied, "id": ident}),
                  json.dumps({"event": "revert", "id": ident, "at": "2026-11-27T00:00:00.000Z", "note": None})]
    journal.write_text("\n".join(lines) + "\n", encoding="utf-8")
    compared = 0  # how often two applies were compared: each event looked at every apply before it
    equal = JournalEntry.__eq__

    def counted(self: JournalEntry, other: object) -> bool:
        nonlocal compared
        compared += 1
        return equal(self, other)

    monkeypatch.setattr(JournalEntry, "__eq__", counted)
    assert main(["history", "--json", str(path)]) == 0
    entries = json.loads(capsys.readouterr().out)["entries"]
    assert len(entries) == 10_000 and {e["state"] for e in entries} == {"reverted"}
    assert entries[-1]["id"] == "10000-0000270f"
    assert compared <= 2 * len(lines), f"{compared:,} comparisons of applies for {len(lines):,} events"
