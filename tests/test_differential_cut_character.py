"""A recording whose last line ends in the first bytes of a character still to be written (no newline
after it: Gemini CLI killed mid-write, or the file read while it writes).  Node's UTF-8 decoder holds
such bytes back for the rest of the character, and Gemini CLI's line reader ends without asking for
them: the line is read without them.  Bytes that cannot start a character, or a character whole, are
not held back.  Each file is read by Gemini CLI's own code and by the project, and must read the same."""

from __future__ import annotations

from pathlib import Path

import pytest

from inspector.session import load
from inspector.session.records import held_back_at_end
from tests.reference.client import RefServer
from tests.reference.compare import compare_file

pytestmark = pytest.mark.differential

HEAD = (b'{"sessionId":"s-1","projectHash":"p","startTime":"2026-01-01T00:00:00Z","kind":"main"}\n'
        b'{"id":"u1","timestamp":"2026-01-01T00:00:00Z","type":"user","content":"hello"}\n')
LAST = b'{"id":"g1","timestamp":"2026-01-01T00:00:01Z","type":"gemini","content":"done","model":"gemini-2.5-pro"}'

# (the bytes after the last record, how many Node holds back)
ENDINGS = [
    (b"\xc3", 1),  # a two-byte character's lead
    (b"\xe2\x82", 2),  # a three-byte character, one byte to come
    (b"\xe2", 1),
    (b"\xf0\x9f\x98", 3),  # a four-byte character, one byte to come
    (b"\xf0", 1),
    (b"\xc3\xa9", 0),  # a whole character: part of the line
    (b"\x80", 0),  # a continuation byte alone
    (b"\xff", 0),  # no lead byte of UTF-8
    (b"\xe2\x82\xac\x80", 0),  # a whole character, then a continuation byte
    (b" \xc3", 1),
]


@pytest.mark.parametrize(("ending", "held"), ENDINGS, ids=lambda v: v.hex() if isinstance(v, bytes) else str(v))
def test_a_last_line_cut_inside_a_character_reads_as_gemini_cli_reads_it(
        reference: RefServer, tmp_path: Path, ending: bytes, held: int) -> None:
    assert held_back_at_end(LAST + ending) == held
    path = tmp_path / "session.jsonl"
    path.write_bytes(HEAD + LAST + ending)
    outcome = compare_file(reference, path, may_reject=False)
    assert outcome != "rejected"
    kept = [m["id"] for m in load(path).messages]
    assert kept == (["u1", "g1"] if held else ["u1"]), f"{ending!r}: {kept}"
