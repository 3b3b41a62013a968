"""The turns of a loaded session: the curated history Gemini CLI would resume with.

``history.py`` builds turns from messages and contents and knows nothing of how a file was
loaded; this module joins the two (``loader.Session`` in, ``Turn`` list out), so neither imports
the other's module.
"""

from __future__ import annotations

import bisect
from collections import OrderedDict
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from inspector.session.history import Turn, contents_to_turns, message_contents, messages_to_turns
from inspector.session.lazy import LazyList
from inspector.session.loader import Session
from inspector.session.records import MessageList
from inspector.session.turn_index import TurnIndex


def history(session: Session) -> list[Turn] | TurnList:
    """The curated history of a session: what Gemini CLI would resume with."""
    if session.contents is not None:
        return contents_to_turns(session.contents)
    if session.turn_index is not None:
        return lazy_turns(session)
    return messages_to_turns(session.messages)


def content_from(message: dict[str, Any], turn: Turn) -> dict[str, Any]:
    """The content a turn is, rebuilt from its message: the model turn, or the tool results after it."""
    return message_contents(message)[1 if turn.is_tool_result else 0][0]


# How many contents the turns of one history keep built: the ones read last (the turn opened, the rows
# around it).  A pass over every turn keeps no more than these.
KEPT_CONTENTS = 256


def lazy_turns(session: Session) -> TurnList:
    """Turns whose content is rebuilt from the message when asked for; the ``KEPT_CONTENTS`` read last
    are kept (the same object while they are)."""
    index = session.turn_index
    assert index is not None
    messages = session.messages
    peek = messages.peek if isinstance(messages, MessageList) else messages.__getitem__
    kept: OrderedDict[tuple[int, bool], dict[str, Any]] = OrderedDict()

    def source(turn: Turn) -> dict[str, Any]:
        assert turn.message_index is not None
        key = (turn.message_index, turn.is_tool_result)
        content = kept.get(key)
        if content is not None:
            kept.move_to_end(key)
            return content
        content = kept[key] = content_from(peek(turn.message_index), turn)
        if len(kept) > KEPT_CONTENTS:
            kept.popitem(last=False)
        return content

    return TurnList(index, source)


class TurnList(LazyList[Turn]):
    """The turns of a recording, each made when asked for from the reader's columns (no object a turn
    is held: 170,000 of them were ~23 MB), then the turns a live extension appended (held).  Equal to a
    list of equal turns; a slice is a list."""

    __slots__ = ("_count", "_record_ids", "_results", "_roles", "_source", "_starts", "_tail")

    def __init__(self, index: TurnIndex, source: Callable[[Turn], dict[str, Any]], count: int | None = None,
                 tail: list[Turn] | None = None) -> None:
        self._record_ids, self._results, self._roles = index.record_ids, index.is_tool_result, index.roles
        self._starts = index.message_starts
        self._source = source
        self._count = len(index) if count is None else count  # the turns made from the columns
        self._tail: list[Turn] = [] if tail is None else tail

    def __len__(self) -> int:
        return self._count + len(self._tail)

    def _made(self, i: int, position: int) -> Turn:
        return Turn(i, None, self._record_ids[i], position, self._results[i], role=self._roles[i],
                    source=self._source)

    def _at(self, i: int) -> Turn:
        if i >= self._count:
            return self._tail[i - self._count]
        return self._made(i, bisect.bisect_right(self._starts, i) - 1)

    def __iter__(self) -> Iterator[Turn]:
        starts = self._starts
        position = 0
        for i in range(self._count):
            while starts[position + 1] <= i:
                position += 1
            yield self._made(i, position)
        yield from self._tail

    def roles_and_record_ids(self) -> tuple[Sequence[str], Sequence[str | None]]:
        """Every turn's role and record id, read from the columns (no turn is made); read-only."""
        count, tail = self._count, self._tail
        if not tail and count == len(self._roles) == len(self._record_ids):
            return self._roles, self._record_ids  # (the columns themselves: no copy)
        return ([*self._roles[:count], *(t.role for t in tail)],
                [*self._record_ids[:count], *(t.record_id for t in tail)])

    def head(self, count: int) -> TurnList:
        """A new list of the first ``count`` turns (this one stays as it is); ``append`` grows it."""
        tail = self._tail[:max(count - self._count, 0)]
        grown = TurnList.__new__(TurnList)
        grown._record_ids, grown._results, grown._roles = self._record_ids, self._results, self._roles
        grown._starts, grown._source = self._starts, self._source
        grown._count, grown._tail = min(count, self._count), tail
        return grown

    def append(self, turn: Turn) -> None:
        """A turn after the last (a live extension's, its content held)."""
        self._tail.append(turn)

    def __repr__(self) -> str:
        return f"TurnList({len(self)} turns)"


def content_reader(session: Session) -> Callable[[Turn], dict[str, Any]]:
    """A turn's content for one pass over a big session, neither kept on the turn nor its record kept
    parsed (``MessageList.peek``): a content already kept is used as it is."""
    messages = session.messages
    peek = messages.peek if isinstance(messages, MessageList) else None

    def read(turn: Turn) -> dict[str, Any]:
        if peek is None or turn.has_content or turn.message_index is None:
            return turn.content
        return content_from(peek(turn.message_index), turn)

    return read
