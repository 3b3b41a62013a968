"""Where one turn's estimate goes: its parts by kind, the tool each call or result names, the file
it reads or changes, the file an ``@path`` included.

The reader works this out while it measures a turn (``figures.content_figures``
hands each part's quarters here), so the breakdown (``inspector.breakdown``)
sums a column of the turn index (``TurnIndex.spread``) and never reads a turn
again.  This module is the one statement of what kind a part is.

A turn's spread is kept small (one for each of a recording's turns):

* ``()``: the turn has no parts;
* a kind (an int, ``USER_TEXT`` ... ``OTHER``): every part is of that kind and
  names no tool or file; the turn's whole estimate is that kind's;
* ``RESULTS``: every part is a tool result that masking's figures describe one
  by one (``TurnIndex.outputs``: quarters and name) and the reader paired
  (``TurnIndex.answers``: the key): nothing more is kept;
* a tuple of entries in the order of the parts: ``quarters << 3 | kind`` for
  each call, each result, each @path's text and each other kind (its parts
  summed where its first part is); after a call or an @path's text, the file it
  names (text).  A call's or result's name and key are those at its place among
  the turn's ``calls`` / ``answers`` (the name being the text its key holds);
  where that is not so for some call or result of the turn (a part with a call
  that is counted as text, a name that is no text), every call and result of it
  is followed by its own ``(name, place)``: its place among the turn's ``calls`` /
  ``answers``, ``NO_PLACE`` for one that has no key.
"""

from __future__ import annotations

from typing import Any, Final

from inspector.tokens import IMAGE_QUARTERS, media_quarters

# The kinds of part (their codes, and the names the breakdown shows, in the order they are listed when tied).
USER_TEXT: Final = 0
MODEL_TEXT: Final = 1
THOUGHTS: Final = 2
TOOL_CALLS: Final = 3
TOOL_RESULTS: Final = 4
INJECTED: Final = 5  # text Gemini CLI writes into a user turn: a snapshot, environment or hook context, @path files
IMAGES: Final = 6
OTHER: Final = 7  # PDFs, other files, parts of no known shape
KINDS: Final = ("user text", "model text", "thoughts", "tool calls", "tool results", "injected context", "images",
                "other parts")
RESULTS: Final = 8  # a turn of tool results described by the reader's outputs and answers

Spread = int | tuple[Any, ...]
# The place of a call or result whose value is no object: it has no key (``figures.pair_key``), pairs with nothing.
NO_PLACE: Final = -1

# Text Gemini CLI writes into a user turn itself, by how it begins (after whitespace).
_INJECTED_PREFIXES = ("<state_snapshot>", "<session_context>", "<hook_context>")
# What an @path adds after the request (Gemini CLI's REFERENCE_CONTENT_START / _END) and per file.
REFERENCE_START = "--- Content from referenced files ---"
REFERENCE_END = "--- End of content ---"
REFERENCE_FILE = "Content from @"

# The argument that names the file a tool reads or changes, and what each built-in tool does to it.
FILE_ARGUMENT = "file_path"
FILE_ACTIONS = {"read_file": "read", "write_file": "write", "replace": "edit", "edit": "edit"}
UNNAMED = "(no name)"
_PATHS: dict[str, str] = {}  # one object for each path named (a file is read and changed again and again)


def part_kind(part: Any, role: Any) -> int:
    """The kind of one part, as its estimate is measured (``tokens.part_quarters``: text first)."""
    if type(part) is not dict:
        return OTHER
    return _dict_part_kind(part, part.get("text"), part.get("functionCall"), part.get("functionResponse"), role)


def _dict_part_kind(part: dict[str, Any], text: Any, call: Any, response: Any, role: Any) -> int:
    """``part_kind`` of a part that is an object, given its ``text``, ``functionCall`` and
    ``functionResponse`` (read once by a caller that needs them too)."""
    if isinstance(text, str):
        if part.get("thought"):
            return THOUGHTS
        if role == "model":
            return MODEL_TEXT
        return INJECTED if text.lstrip().startswith(_INJECTED_PREFIXES) else USER_TEXT
    if response:
        return TOOL_RESULTS
    if call:
        return TOOL_CALLS
    return IMAGES if media_quarters(part) == IMAGE_QUARTERS else OTHER


def turn_spread(parts: list[Any], role: Any, sizes: list[int], calls: list[Any], answers: list[Any],
                outputs: int) -> Spread:
    """The spread of a turn of ``parts`` (``role``'s), each of ``sizes[j]`` quarters.

    ``calls`` and ``answers``: the reader's pairing keys of the turn's function calls and responses, one
    for each part whose ``functionCall`` / ``functionResponse`` is an object, in order (``content_figures``);
    ``outputs``: how many tool outputs the reader described for masking (``OutputFigures``).
    """
    count = len(parts)
    if count == 0:
        return ()
    if outputs == count:  # each part a tool output for masking (a truthy object for a response) ...
        for part in parts:
            if type(part) is not dict or isinstance(part.get("text"), str):
                break
        else:  # ... and no text (it comes first)
            return RESULTS
    if count == 1:
        kind = part_kind(parts[0], role)
        if kind == USER_TEXT:  # (alone, the start of included files names none of them)
            return INJECTED if parts[0]["text"].lstrip().startswith(REFERENCE_START) else USER_TEXT
        if kind != TOOL_CALLS and kind != TOOL_RESULTS:
            return kind
    entries = _entries(parts, role, sizes, calls, answers, False)
    if entries is None:  # a call or result whose name and key its place does not give: each says its own
        entries = _entries(parts, role, sizes, calls, answers, True)
        assert entries is not None
    if len(entries) == 1 and entries[0] & 7 not in (TOOL_CALLS, TOOL_RESULTS):
        return int(entries[0] & 7)  # every part of one kind, naming nothing
    return tuple(entries)


def _entries(parts: list[Any], role: Any, sizes: list[int], calls: list[Any], answers: list[Any],
             named: bool) -> list[Any] | None:
    """A turn's spread entries: each ``quarters << 3 | kind``, then the file it names (a call's, an
    @path's), and with ``named`` a call's or result's ``(name, place)``; None without ``named`` when
    a call's or result's key is not at its place among the turn's calls or results, or its name is
    not the text its key holds."""
    entries: list[Any] = []
    summed: dict[int, int] = {}  # kind -> its entry, for the parts that name nothing
    referencing = False  # after the request: the text of the files an @path included
    included: str | None = None  # the file whose text comes next
    call_at = answer_at = 0  # the next key in ``calls`` / ``answers``
    for j in range(len(parts)):
        part = parts[j]
        kind = OTHER
        call = response = call_key = response_key = None
        if type(part) is dict:
            call, response = part.get("functionCall"), part.get("functionResponse")
            kind = _dict_part_kind(part, part.get("text"), call, response, role)
            if type(call) is dict:
                call_key = calls[call_at]
                call_at += 1
            if type(response) is dict:
                response_key = answers[answer_at]
                answer_at += 1
        if kind in (TOOL_CALLS, TOOL_RESULTS):
            found, key = (call, call_key) if kind == TOOL_CALLS else (response, response_key)
            other = response_key if kind == TOOL_CALLS else call_key
            entries.append(sizes[j] << 3 | kind)
            if key is not None:
                assert type(found) is dict
                name = found.get("name")
                if not named and ((name is not None and type(name) is not str) or other is not None):
                    return None  # a name its key does not hold, or a key this part takes besides
                if kind == TOOL_CALLS:
                    args = found.get("args")
                    path = args.get(FILE_ARGUMENT) if type(args) is dict else None
                    if type(path) is str and path:
                        entries.append(_PATHS.setdefault(path, path))
                if named:  # its name, and its place among the turn's calls or results
                    entries.append((key[1] or UNNAMED if type(name) is str else UNNAMED,
                                    (call_at if kind == TOOL_CALLS else answer_at) - 1))
            elif named:
                entries.append((UNNAMED, NO_PLACE))
            else:
                return None
            continue
        if not named and (call_key is not None or response_key is not None):
            return None  # a key that belongs to no call or result counted here
        if kind == USER_TEXT:
            text: str = part["text"]
            if not referencing and text.lstrip().startswith(REFERENCE_START):
                referencing = True
            if referencing:
                kind = INJECTED
                text = text.strip()
                if text.startswith(REFERENCE_FILE) and text.endswith(":"):
                    included = text[len(REFERENCE_FILE):-1]
                elif text in (REFERENCE_END, REFERENCE_START):
                    included = None
                elif included is not None:
                    entries.append(sizes[j] << 3 | INJECTED)
                    entries.append(_PATHS.setdefault(included, included))
                    included = None
                    continue
        at = summed.get(kind)
        if at is None:
            summed[kind] = len(entries)
            entries.append(sizes[j] << 3 | kind)
        else:
            entries[at] += sizes[j] << 3
    return entries
