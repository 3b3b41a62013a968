"""The turns of a loaded session: the curated history Gemini CLI would resume with.

``history.py`` builds turns from messages and contents and knows nothing of how a file was
loaded; this module joins the two (``loader.Session`` in, ``Turn`` list out), so neither imports
the other's module.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from inspector.session.history import Turn, contents_to_turns, message_contents, messages_to_turns
from inspector.session.loader import Session
from inspector.session.records import MessageList


def history(session: Session) -> list[Turn]:
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


def lazy_turns(session: Session) -> list[Turn]:
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

    record_ids, results, roles, starts = index.record_ids, index.is_tool_result, index.roles, index.message_starts
    turns: list[Turn] = []
    for position in range(len(starts) - 1):
        for i in range(starts[position], starts[position + 1]):
            turns.append(Turn(i, None, record_ids[i], position, results[i], role=roles[i], source=source))
    return turns


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
