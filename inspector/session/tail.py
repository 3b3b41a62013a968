"""The newest turns of a big recording, read from the end of its file before the rest.

A 100 MB session takes seconds to read whole; what a person looks at first is
its end.  ``read_tail`` reads the last ``TAIL_BYTES`` of a JSONL recording
(cut at a line start) and the metadata line, and replays those lines with the
reader's own functions (``jsonl.scan`` and ``replay``, ``figures``, the turns
of ``turns.lazy_turns``): each turn it gives has exactly the figures the whole
read gives the same turn (estimate, JSON length, kind, recorded usage), since
every one of them is measured from the turn's own message record, and the
record's last version is in the tail.

What the tail cannot tell, and so does not say:

* where its turns stand in the history (their numbers), nor any figure that
  adds up or compares turns (the total, the split, the gauge, shares,
  masking, cost, the breakdown): those wait for the whole read;
* which messages written before the tail a ``$rewindTo`` or a ``$set.messages``
  checkpoint in it drops: only the messages written after the last such line
  are kept (each of them is in the history the whole read gives);
* the place of a record written first before the tail and again within it
  (Gemini CLI writes a message again when its usage or tool results arrive,
  right after it first writes it): it shows where its last version appears;
  the whole read puts it where it belongs.

Only a recording (line 1 holds the metadata: ``sessionId``, ``projectHash``)
has a tail to read.  A legacy single-document JSON session, a ``/chat save``
file or an Antigravity transcript can only be read whole: ``read_tail`` gives
no rows for it (``recording`` false), only that the file is being read.  A
file no bigger than ``TAIL_BYTES`` has no tail step (None): it is read whole
at once, as before.  A line of the tail that cannot be read is skipped here;
the whole read reports it.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from inspector.session.history import Turn
from inspector.session.jsonl import ITEM_KIND, ITEM_LISTED, collect, replay, scan
from inspector.session.loader import Session
from inspector.session.reader import read_at
from inspector.session.records import MessageList, loads_line
from inspector.session.turn_index import TurnIndex
from inspector.session.turns import lazy_turns

TAIL_BYTES = 1 << 20  # read from the end of a recording before the rest (1,453 turns of the bench file, in ~40 ms)
HEAD_BYTES = 1 << 16  # the metadata line is looked for in the first this many bytes


@dataclass(frozen=True)
class TailRead:
    """What the end of a session file shows before the whole file is read.

    ``turns`` are the newest turns, in the order the tail replays them (their
    figures in ``index``, turn ``k`` at position ``k``); their numbers in the
    history are not known.  ``recording`` false: the file is no recording
    (read whole, no rows until then)."""

    path: Path
    size: int  # the file's size when its tail was read
    recording: bool
    session_id: str | None = None
    turns: Sequence[Turn] = field(default_factory=list)
    index: TurnIndex = field(default_factory=lambda: TurnIndex.of_messages([], {}))
    start: int = 0  # where in the file the lines read begin

    def tokens(self, k: int) -> int:
        """Turn ``k``'s estimate, as ``Analysis.turn_tokens`` gives the same turn."""
        return self.index.quarters[k] // 4

    def place_in(self, turns: Sequence[Turn], k: int) -> int | None:
        """Where turn ``k`` of the tail is in ``turns`` (the history the whole read gives): the turn
        built from the same record (its tool results, for a tool-result turn), looked for from the
        end; None when it is not there (the file changed meanwhile) or ``k`` is no turn of the tail."""
        if not 0 <= k < len(self.turns):
            return None
        wanted = self.turns[k]
        for i in range(len(turns) - 1, -1, -1):
            turn = turns[i]
            if turn.record_id == wanted.record_id and turn.is_tool_result == wanted.is_tool_result:
                return i
        return None


def read_tail(path: Path, fd: int, size: int | None = None, limit: int = TAIL_BYTES) -> TailRead | None:
    """The tail of the file open as ``fd`` (``size``: its size, else its size now); None when the
    file is no bigger than ``limit`` (it is read whole at once)."""
    if size is None:
        size = os.fstat(fd).st_size
    if size <= limit:
        return None
    metadata = _metadata(read_at(fd, 0, min(size, HEAD_BYTES)))
    if metadata is None:
        return TailRead(path, size, recording=False)
    begin = size - limit - 1  # one byte before: a line that starts exactly at the cut is kept whole
    data = read_at(fd, begin, size - begin)
    start = _after_first_break(data)
    session_id = metadata.get("sessionId")
    found = TailRead(path, size, recording=True, session_id=session_id if isinstance(session_id, str) else None,
                     start=begin + start)
    if start >= len(data):
        return found  # one line longer than the tail: no whole line in it
    items = scan(data, start, len(data))
    last = max((k for k, item in enumerate(items) if item[ITEM_KIND] == "r"
                or (item[ITEM_KIND] == "s" and item[ITEM_LISTED] is not None)), default=None)
    if last is not None:  # what came before it depends on lines before the tail: left out
        items = items[last + 1:] if items[last][ITEM_KIND] == "r" else items[last:]
    state = replay(items)
    if state.problem is not None:
        return found  # a message the whole read refuses, and says why
    wheres, lines, rows = collect(state)
    index = TurnIndex.of_messages(rows, state.blocks)
    session = Session(path=path, format="jsonl", metadata=metadata, messages=MessageList(data, wheres),
                      message_lines=lines, size=size, turn_index=index)
    return TailRead(path, size, True, found.session_id, lazy_turns(session), index, begin + start)


def _metadata(head: bytes) -> dict[str, object] | None:
    """The metadata a recording's first line holds (``sessionId`` and ``projectHash``), else None."""
    end = min((k for k in (head.find(b"\n"), head.find(b"\r")) if k != -1), default=-1)
    if end == -1:
        return None
    try:
        record = loads_line(head[:end])
    except (ValueError, RecursionError):
        return None
    if not isinstance(record, dict):
        return None
    if not isinstance(record.get("sessionId"), str) or not isinstance(record.get("projectHash"), str):
        return None
    return {k: v for k, v in record.items() if k != "messages"}


def _after_first_break(data: bytes) -> int:
    """Where the first line that starts in ``data`` after its first byte begins (past LF, CRLF or CR)."""
    breaks = [k for k in (data.find(b"\n"), data.find(b"\r")) if k != -1]
    if not breaks:
        return len(data)
    k = min(breaks)
    if data[k:k + 2] == b"\r\n":
        return k + 2
    return k + 1
