"""The tool-output budget: ``truncateHistoryToBudget`` (REFERENCE.md section 5).

Walking newest to oldest, function responses are counted against a budget of
50,000 tokens; one that would overflow it is replaced by a head/tail excerpt
that names a file holding the whole output.  This module only *plans* that in
memory: the file names are chosen here, the files are written by the store
when a compaction is applied.
"""

from __future__ import annotations

import functools
import math
import re
from array import array
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from inspector.jsjson import utf16_len
from inspector.session.columns import NATURAL
from inspector.session.figures import ResponseFigures, response_figures, response_text
from inspector.session.lazy import LazyList
from inspector.tokens import DEFAULT_TOKEN_LIMIT, text_quarters

FUNCTION_RESPONSE_TOKEN_BUDGET = 50_000
DEFAULT_TRUNCATE_CHARS = 40_000
TOOL_OUTPUTS_DIR = "tool-outputs"

_UNSAFE_FILENAME = re.compile(r"[^a-zA-Z0-9_-]")


def _sanitize(text: str) -> str:
    """``replace(/[^a-zA-Z0-9_-]/g, "_")`` on UTF-16 units (an emoji becomes two)."""
    return _UNSAFE_FILENAME.sub(lambda m: "__" if ord(m.group()) > 0xFFFF else "_", text)


class Truncation:
    """One tool output the budget replaces with an excerpt.

    ``full_text`` (what is saved to ``output_file``) and ``excerpt`` (what the
    history keeps) are computed when first read, so planning the budget of a
    big session does not hold every tool output in memory.
    """

    __slots__ = ("_excerpt", "_file", "_text", "changes_json", "new_tokens", "original_tokens", "part", "seq", "tool",
                 "turn")

    def __init__(
        self, turn: int, part: int, tool: str, output_file: str | Callable[[str, int], str],
        full_text: str | Callable[[int, int], str], original_tokens: int, new_tokens: int, *,
        excerpt: str | None = None, seq: int = 0, changes_json: bool = True,
    ) -> None:
        self.turn = turn
        self.part = part
        self.tool = tool
        self.seq = seq  # the reference's truncation number
        self._file = output_file  # the path, or output_path(tool, seq) to make it
        self._text = full_text  # the text, or text_of(turn, part) to read it
        self.original_tokens = original_tokens
        self.new_tokens = new_tokens
        self._excerpt = excerpt  # None: the same as full_text (it fitted in max_chars)
        # Whether the turn's JSON text changes: not for a whole output put back in the
        # same {"functionResponse": {..., "response": {"output": text}}} shape.
        self.changes_json = changes_json

    @property
    def output_file(self) -> str:
        if not isinstance(self._file, str):
            self._file = self._file(self.tool, self.seq)
        return self._file

    @property
    def full_text(self) -> str:
        if not isinstance(self._text, str):
            self._text = self._text(self.turn, self.part)
        return self._text

    @property
    def cut(self) -> bool:
        """The output is longer than the limit: the history keeps its head and tail, naming the file."""
        return self._excerpt is not None

    @property
    def excerpt(self) -> str:
        """The text the history keeps in place of the output."""
        return self.full_text if self._excerpt is None else self._excerpt

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Truncation):
            return NotImplemented
        return (self.turn, self.part, self.tool, self.output_file, self.full_text, self.original_tokens,
                self.new_tokens) == (other.turn, other.part, other.tool, other.output_file, other.full_text,
                                     other.original_tokens, other.new_tokens)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return (f"Truncation(turn={self.turn}, part={self.part}, tool={self.tool!r}, "
                f"output_file={self.output_file!r}, original_tokens={self.original_tokens}, "
                f"new_tokens={self.new_tokens})")


class TruncationPlan(LazyList[Truncation]):
    """The truncations of one budget walk, newest first, in columns of machine integers.

    On a long session nearly every older output is cut (tens of thousands); a ``Truncation``
    object each held ~200 bytes.  An output kept whole (its "excerpt" is its text) is five
    integers and its tool's name here, made into its ``Truncation`` when read (the file named
    and the text read through the walk's ``output_path`` and ``text_of``); an output cut to an
    excerpt (a few: longer than ``max_chars``) and any other given truncation is kept as it is.
    """

    __slots__ = ("_changes", "_kept", "_output_path", "_parts", "_seqs", "_text_of", "_tokens", "_tools", "_turns")

    def __init__(self, output_path: Callable[[str, int], str] | None = None,
                 text_of: Callable[[int, int], str] | None = None, items: Iterable[Truncation] = ()) -> None:
        self._output_path = output_path
        self._text_of = text_of
        self._turns = array(NATURAL)
        self._parts = array(NATURAL)
        self._seqs = array(NATURAL)
        self._tokens = array(NATURAL)
        self._changes = bytearray()  # 1: the truncation changes its turn's JSON
        self._tools: list[str] = []  # (the tool names are shared strings: a pointer each)
        self._kept: dict[int, Truncation] = {}  # index -> a truncation kept as an object
        for item in items:
            self.append(item)

    def add_whole(self, turn: int, part: int, tool: str, tokens: int, seq: int, changes_json: bool) -> None:
        """An output kept whole: ``Truncation(turn, part, tool, output_path, text_of, tokens, tokens,
        seq=seq, changes_json=changes_json)`` when read."""
        self._turns.append(turn)
        self._parts.append(part)
        self._seqs.append(seq)
        self._tokens.append(tokens)
        self._changes.append(1 if changes_json else 0)
        self._tools.append(tool)

    def append(self, truncation: Truncation) -> None:
        """Any truncation, kept as the object it is."""
        self._kept[len(self._turns)] = truncation
        self.add_whole(truncation.turn, truncation.part, truncation.tool, truncation.original_tokens,
                       truncation.seq, truncation.changes_json)

    def __len__(self) -> int:
        return len(self._turns)

    def _at(self, index: int) -> Truncation:
        kept = self._kept.get(index)
        if kept is not None:
            return kept
        assert self._output_path is not None and self._text_of is not None
        tokens = self._tokens[index]
        return Truncation(self._turns[index], self._parts[index], self._tools[index], self._output_path,
                          self._text_of, tokens, tokens, seq=self._seqs[index],
                          changes_json=self._changes[index] == 1)

    def kept_at(self, index: int) -> Truncation | None:
        """Truncation ``index`` when it is kept as an object (cut to an excerpt, or given), else None:
        an output kept whole, whose figures ``whole_at`` gives without making it."""
        return self._kept.get(index)

    def whole_at(self, index: int) -> tuple[int, str, int, str]:
        """Of an output kept whole (``kept_at`` is None): its turn, tool, tokens (before and after:
        the same) and the file it is saved to, as its ``Truncation`` would give them."""
        assert self._output_path is not None
        tool = self._tools[index]
        return self._turns[index], tool, self._tokens[index], self._output_path(tool, self._seqs[index])

    def position(self, index: int) -> tuple[int, int]:
        """The (turn, part) of truncation ``index``, without making it."""
        return self._turns[index], self._parts[index]

    def seq(self, index: int) -> int:
        """The counter number of truncation ``index``, without making it."""
        return self._seqs[index]

    def changing_json(self) -> list[int]:
        """The indices of the truncations that change their turn's JSON, in order."""
        changes = self._changes  # (by index: mypyc cannot iterate a bytearray in a comprehension)
        return [j for j in range(len(changes)) if changes[j]]

    def __add__(self, other: Sequence[Truncation]) -> list[Truncation]:
        return [*self, *other]

    def __repr__(self) -> str:
        return f"TruncationPlan({len(self)} truncations)"


def truncate_chars(token_limit: int = DEFAULT_TOKEN_LIMIT, last_prompt_tokens: int = 0) -> int:
    """``getTruncateToolOutputThreshold``: 40,000 chars, less when the window is nearly full."""
    return min(4 * (token_limit - last_prompt_tokens), DEFAULT_TRUNCATE_CHARS)


@functools.lru_cache(maxsize=256)
def _safe_tool(tool: str) -> str:
    return _sanitize(tool).lower()


def output_file_name(tool: str, seq: int) -> str:
    """The reference's file name for a saved output (``saveTruncatedToolOutput``)."""
    safe_tool = _safe_tool(tool)
    safe_id = str(seq) if type(seq) is int else _sanitize(str(seq)).lower()
    return f"{safe_id}.txt" if safe_id.startswith(safe_tool) else f"{safe_tool}_{safe_id}.txt"


def _slice16(text: str, start: int, end: int | None = None) -> str:
    """``text.slice(start, end)`` in UTF-16 code units."""
    if text.isascii():
        return text[start:end]
    units = text.encode("utf-16-le", "surrogatepass")
    length = len(units) // 2
    begin = start if start >= 0 else max(length + start, 0)
    stop = length if end is None else (end if end >= 0 else max(length + end, 0))
    return units[2 * begin : 2 * stop].decode("utf-16-le", "surrogatepass")


def format_truncated(content: str, output_file: str, max_chars: int) -> str:
    """``formatTruncatedToolOutput``: the first 20% and last 80% of ``max_chars``."""
    length = utf16_len(content)
    if length <= max_chars:
        return content
    head_chars = math.floor(max_chars * 0.2)
    tail_chars = max_chars - head_chars
    head = _slice16(content, 0, head_chars)
    tail = _slice16(content, -tail_chars) if tail_chars else _slice16(content, 0)
    omitted = length - head_chars - tail_chars
    return (
        f"Output too large. Showing first {head_chars:,} and last {tail_chars:,} characters. "
        f"For full output see: {output_file}\n{head}\n\n... [{omitted:,} characters omitted] ...\n\n{tail}"
    )


def plan_budget(
    responses: Sequence[Sequence[ResponseFigures]],
    text_of: Callable[[int, int], str],
    output_path: Callable[[str, int], str],
    max_chars: int = DEFAULT_TRUNCATE_CHARS,
    budget: int = FUNCTION_RESPONSE_TOKEN_BUDGET,
) -> TruncationPlan:
    """``truncateHistoryToBudget`` over per-turn figures: what it truncates (newest first).

    ``responses[i]`` are turn ``i``'s function responses (``session.figures``);
    ``text_of(i, part)`` returns a response's measured text, and is only
    called for an output longer than ``max_chars`` (or later, by whoever
    reads ``Truncation.full_text``).
    """
    return walk_budget(responses, text_of, output_path, max_chars, budget).truncations


@dataclass
class BudgetWalk:
    """How far ``walk_budget`` went and what it found on the way."""

    truncations: TruncationPlan  # newest first
    stopped_at: tuple[int, int] | None  # (turn, part) where ``stop`` ended the walk (not planned)
    seq: int  # the reference's truncation counter where the walk ended
    saturated_at: tuple[int, int] | None  # (turn, part) after which the counted tokens exceed the budget


def walk_budget(
    responses: Sequence[Sequence[ResponseFigures]],
    text_of: Callable[[int, int], str],
    output_path: Callable[[str, int], str],
    max_chars: int = DEFAULT_TRUNCATE_CHARS,
    budget: int = FUNCTION_RESPONSE_TOKEN_BUDGET,
    stop: Callable[[int, int, bool], bool] | None = None,
) -> BudgetWalk:
    """The walk of ``plan_budget``, newest to oldest; ``stop(turn, part, saturated)``, asked before
    each output is counted with whether the counted tokens already exceed the budget, may end it
    early (``inspector.live.extend`` reuses the rest of an earlier plan).

    Once the counted tokens exceed the budget every older output is cut and
    every older part moves the counter by one, whatever the outputs hold.
    """
    used = 0
    seq = 0  # the reference's truncation counter (it also counts failed saves)
    truncations = TruncationPlan(output_path, text_of)
    saturated: tuple[int, int] | None = None
    i = len(responses)
    for found in reversed(responses):  # (a packed column read backwards a chunk at a time, not turn by turn)
        i -= 1
        for part, has_response, name, tokens, length, plain in reversed(found):
            if not has_response:
                # The reference measures ``{text: undefined}`` (0 tokens); over
                # budget it tries to save ``undefined``, which fails after
                # taking a number, and keeps the part as it is.
                if used > budget:
                    seq += 1
                continue
            if stop is not None and stop(i, part, used > budget):
                return BudgetWalk(truncations, (i, part), seq, saturated)
            if used + tokens <= budget:
                used += tokens
                continue
            seq += 1
            if length <= max_chars:  # the "excerpt" is the whole text: read and name it when asked
                truncations.add_whole(i, part, name, tokens, seq, not plain)
                used += tokens
            else:
                truncation = cut_output(i, part, name, text_of(i, part), output_path(name, seq), max_chars, tokens,
                                        seq)
                used += truncation.new_tokens
                truncations.append(truncation)
            if saturated is None and used > budget:
                saturated = (i, part)
    return BudgetWalk(truncations, None, seq, saturated)


def cut_output(turn: int, part: int, tool: str, text: str, path: str, max_chars: int, tokens: int,
               seq: int) -> Truncation:
    """The truncation of an output longer than ``max_chars``: its head and tail, naming ``path``."""
    excerpt = format_truncated(text, path, max_chars)
    return Truncation(turn, part, tool, path, text, tokens, text_quarters(excerpt) // 4, excerpt=excerpt, seq=seq)


def truncated_content(content: dict[str, Any], truncations: Sequence[Truncation]) -> dict[str, Any]:
    """``content`` with the given truncations (all of this turn) applied.

    An output short enough to be kept whole is read from ``content`` itself
    (the truncation would read the turn again to learn it)."""
    parts = list(content.get("parts") or [])
    for truncation in truncations:
        fr = parts[truncation.part]["functionResponse"]
        text = truncation.excerpt if truncation.cut else response_text(fr["response"])
        # Only the function response survives: other keys of the part are dropped.
        parts[truncation.part] = {"functionResponse": {**fr, "response": {"output": text}}}
    return {**content, "parts": parts}


def apply_budget(
    contents: Sequence[dict[str, Any]],
    output_path: Callable[[str, int], str],
    max_chars: int = DEFAULT_TRUNCATE_CHARS,
    budget: int = FUNCTION_RESPONSE_TOKEN_BUDGET,
) -> tuple[list[dict[str, Any]], list[Truncation]]:
    """The history after the budget, and what it truncated (newest first).

    ``output_path(tool, seq)`` names the file for the ``seq``-th truncation
    (1-based, numbered as the reference numbers them).  Untouched turns are
    the same objects as in ``contents``.
    """
    responses = [response_figures(_parts(c)) for c in contents]

    def text_of(i: int, j: int) -> str:
        return response_text(contents[i]["parts"][j]["functionResponse"]["response"])

    truncations = list(plan_budget(responses, text_of, output_path, max_chars, budget))  # (each read once)
    result: list[dict[str, Any]] = list(contents)
    by_turn: dict[int, list[Truncation]] = {}
    for truncation in truncations:
        by_turn.setdefault(truncation.turn, []).append(truncation)
    for i, content in enumerate(contents):
        if i in by_turn:
            result[i] = truncated_content(content, by_turn[i])
        elif content.get("parts") is None:  # the reference rebuilds every turn as {...content, parts: [...]}
            result[i] = {**content, "parts": []}
    return result, truncations


def _parts(content: dict[str, Any]) -> list[Any]:
    parts = content.get("parts")
    return parts if isinstance(parts, list) else []
