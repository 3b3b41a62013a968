"""What a person types to find turns in the session view: a filter, a turn number, search words.

Plain functions and a frozen dataclass; ``navigation.Navigator`` runs them.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from inspector.analysis import Analysis

_SIZE = re.compile(r"([<>])=?([\d,_]+)")


@dataclass(frozen=True)
class TurnFilter:
    """Which turns the table shows: every word must hold.  ``user`` / ``model`` name a role,
    ``>N`` / ``<N`` bound the estimated tokens, any other word is part of the turn's kind
    ("tool result", "thought") or of a tool's name ("read_file")."""

    text: str
    words: tuple[str, ...] = ()
    roles: frozenset[str] = frozenset()
    at_least: int | None = None
    at_most: int | None = None

    def keeps(self, analysis: Analysis, index: int) -> bool:
        turn = analysis.turns[index]
        if self.roles and turn.role not in self.roles:
            return False
        tokens = analysis.turn_tokens(index)
        if self.at_least is not None and tokens < self.at_least:
            return False
        if self.at_most is not None and tokens > self.at_most:
            return False
        if not self.words:
            return True
        about = " ".join([analysis.kinds[index], *tool_names(turn.content)]).casefold()
        return all(word in about for word in self.words)


def parse_filter(text: str) -> TurnFilter:
    """What was typed in the filter dialog; ValueError with a sentence when it makes no sense."""
    words: list[str] = []
    roles: set[str] = set()
    at_least = at_most = None
    for word in text.split():
        size = _SIZE.fullmatch(word)
        if size is not None:
            number = int(size.group(2).replace(",", "").replace("_", ""))
            if size.group(1) == ">":
                at_least = number
            else:
                at_most = number
        elif word.casefold() in ("user", "model"):
            roles.add(word.casefold())
        elif word[0] in "<>":
            raise ValueError(f"{word!r} is not a size: write >1000 or <500 (estimated tokens).")
        else:
            words.append(word.casefold())
    if not (words or roles or at_least is not None or at_most is not None):
        raise ValueError("Type what to keep: a kind (tool result), a tool (read_file), user or model, >1000.")
    return TurnFilter(text.strip(), tuple(words), frozenset(roles), at_least, at_most)


def tool_names(content: dict[str, Any]) -> list[str]:
    """The tools a turn calls or answers."""
    names: list[str] = []
    parts = content.get("parts")
    for part in parts if isinstance(parts, list) else ():
        if isinstance(part, dict):
            for key in ("functionCall", "functionResponse"):
                inner = part.get(key)
                if isinstance(inner, dict) and isinstance(inner.get("name"), str):
                    names.append(inner["name"])
    return names


def strings_of(value: Any) -> Iterator[str]:
    """Every string in a turn's content, keys excepted: what a person could have read in it."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from strings_of(item)
    elif isinstance(value, list):
        for item in value:
            yield from strings_of(item)


def parse_turn(text: str, count: int) -> int:
    """A turn number as typed ("145", "1,605"); ValueError with a sentence when it is not one."""
    cleaned = text.strip().replace(",", "").replace("_", "").lstrip("#")
    if not cleaned.isdigit():
        raise ValueError(f"Type a turn number from 0 to {count - 1:,}.")
    number = int(cleaned)
    if number >= count:
        raise ValueError(f"This session has turns 0 to {count - 1:,}; there is no turn {number:,}.")
    return number


def search_query(text: str) -> str:
    if not text.strip():
        raise ValueError("Type the words to look for.")
    return text.strip()
