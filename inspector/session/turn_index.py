"""Every turn's figures, one column per figure: what the reader hands the rest of the core.

The reader measures each turn once while it parses the file
(``figures.content_figures``) and hands the figures over as a ``TurnIndex``:
one column per figure, turn ``i`` at position ``i`` of each (a list, or for the
five small-tuple figures a ``packed.PackedColumn`` that keeps them as bytes
and makes a turn's value when it is read).  Analysis, masking,
cost and the live view read the figures by name (``index.quarters[i]``),
never through positions in a row.  The rows the reader builds are its own
(tuples, because marshal carries them between its two processes); their
layout is this class's field order (``ROW_FIELDS``), which ``figures.content_figures``
follows and ``of_messages`` reads by name.
"""

from __future__ import annotations

from array import array
from collections.abc import Sequence
from dataclasses import dataclass, fields
from typing import Any, TypeVar

from inspector.session.columns import Column
from inspector.session.figures import ROW_LENGTH, CallKey, OutputFigures, ResponseFigures, UsageColumn
from inspector.session.packed import PackedColumn
from inspector.session.rows import PACKED_AT, MessageRows, block_of, transpose
from inspector.session.spread import Spread
from inspector.session.usage_store import PackedUsages

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class TurnIndex:
    """Every turn's figures, by field; ``message_starts`` maps a recording's messages to turns."""

    record_ids: Sequence[str | None]  # the message record each turn came from
    roles: Sequence[str]
    is_tool_result: Sequence[bool]  # the functionResponse turn built from a message's toolCalls
    quarters: Sequence[int]  # the token estimate in quarter tokens (tokens.parts_quarters)
    json_lengths: Sequence[int]  # JSON.stringify(content).length
    is_candidate: Sequence[bool]  # a user turn without a function response: the split may start here
    is_safe_end: Sequence[bool]  # a model turn without a function call: may end a fully summarised history
    kinds: Sequence[str]  # figures.turn_kind: "text", "thought+tool call", ...
    responses: Sequence[tuple[ResponseFigures, ...]]  # each function response as the tool-output budget sees it
    usage: UsageColumn  # the usage recorded on a model turn, else None
    calls: Sequence[tuple[CallKey, ...]]  # (id, name) of each function call
    answers: Sequence[tuple[CallKey, ...]]  # (id, name) of each function response
    models: Sequence[str | None]  # the model a model turn's record names (None: none, or not a model turn)
    outputs: Sequence[tuple[OutputFigures, ...]]  # each tool output as masking sees it, and each null part
    thought_json: Sequence[int]  # how much shorter its JSON is once stripThoughts has removed its thoughts (mostly 0)
    shape: Sequence[int]  # figures.PLAIN_TURN, OTHER_TURN or INVALID_MODEL_TURN
    spread: Sequence[Spread]  # where its estimate goes: its parts by kind, tool and file (spread.turn_spread)
    # For a recording: message m became turns message_starts[m] .. message_starts[m + 1] - 1
    # (len = messages + 1), in machine integers.  Empty when the turns were measured from contents.
    message_starts: array[int]

    def __len__(self) -> int:
        return len(self.quarters)

    @classmethod
    def from_rows(cls, rows: Sequence[tuple[Any, ...]]) -> TurnIndex:
        """The index of turns measured one by one (``figures.content_figures``), not from a recording."""
        index = cls.of_messages(*block_of([(row,) for row in rows]))
        del index.message_starts[:]
        return index

    @classmethod
    def of_messages(cls, per_message: list[MessageRows], blocks: dict[int, bytes]) -> TurnIndex:
        """The index of a recording's messages, given where the reader's rows of each message's turns
        are (``rows.RowsAt``) and the blocks of rows by key (each taken out of ``blocks`` as it is read)."""
        columns, starts = transpose(per_message, blocks)
        return cls._of_columns(columns, starts)

    @classmethod
    def _of_columns(cls, columns: Sequence[Any], starts: Sequence[int]) -> TurnIndex:
        """An index of per-turn columns given in ``ROW_FIELDS`` order (``usage`` as the packed list)."""
        named: dict[str, Any] = dict(zip(ROW_FIELDS, columns, strict=True))
        named["usage"] = UsageColumn(named["usage"])
        return cls(**named, message_starts=starts if isinstance(starts, array) else array("q", starts))

    def extended(self, keep: int, per_message: list[MessageRows], blocks: dict[int, bytes],
                 own: TurnIndex | None = None) -> TurnIndex:
        """This index's first ``keep`` messages, then the messages measured in ``per_message`` (a
        recording that grew; ``blocks`` as ``of_messages``'s), as a new index; this one stays as it is.
        ``own``: a copy of this index made ahead (``copy``), cut and grown in place instead of copying
        the columns now."""
        first = self.message_starts[keep]
        tail = TurnIndex.of_messages(per_message, blocks)
        grown = own if own is not None else self.head(first, keep)
        for column, more in zip(grown._columns(), tail._columns(), strict=True):
            del column[first:]
            column.extend(more)
        del grown.message_starts[keep + 1:]
        grown.message_starts.extend(first + start for start in tail.message_starts[1:])
        return grown

    def head(self, turns: int, messages: int) -> TurnIndex:
        """A new index of the first ``turns`` turns, the first ``messages`` messages'."""
        return TurnIndex._of_columns([column.head(turns) if isinstance(column, (PackedUsages, Column, PackedColumn))
                                      else Column.of(column, turns) for column in self._columns()],
                                     self.message_starts[:messages + 1])

    @property
    def shares_columns(self) -> bool:
        """Its columns are ``columns.Column``s (a live version's): ``head`` and ``copy`` copy a chunk a column."""
        return isinstance(self.quarters, Column)

    def copy(self) -> TurnIndex:
        """A new index with columns of its own (``extended`` may then change them in place): each a
        ``columns.Column`` that shares the full chunks of this index's (copy on write)."""
        return self.head(len(self), len(self.message_starts) - 1)

    def _columns(self) -> tuple[Any, ...]:
        """Every per-turn column as a list (``usage`` as the PackedUsages it packs), in ``ROW_FIELDS`` order."""
        return tuple(self.usage.packed() if name == "usage" else getattr(self, name) for name in ROW_FIELDS)

    def turns_of(self, message: int) -> range:
        """The turns message ``message`` of a recording became."""
        return range(self.message_starts[message], self.message_starts[message + 1])


def listed(column: Sequence[T]) -> list[T]:
    """A column as a list: itself when it is one (a whole read's), else a copy (a live version's
    ``columns.Column``), for code that needs a list."""
    if isinstance(column, list):
        return column
    return column.tolist() if isinstance(column, Column) else list(column)


def tail_list(column: Sequence[T], start: int) -> list[T]:
    """A column's items from turn ``start`` on as a list (turn ``start + k`` at ``k``): the column itself
    when it is a list and ``start`` is 0 (a whole read's), else a copy of that part (a live version's
    ``columns.Column``, read from near its end), for compiled code that reads it turn by turn."""
    if start == 0:
        return listed(column)
    found = column[start:]
    return found if isinstance(found, list) else list(found)


# The per-turn fields, in the order of a reader's row: ``TurnIndex``'s own field list (the one place it is
# written; ``figures.content_figures`` builds each row in this order, ``tests/test_reader.py`` checks it).
ROW_FIELDS: tuple[str, ...] = tuple(f.name for f in fields(TurnIndex) if f.name != "message_starts")
assert len(ROW_FIELDS) == ROW_LENGTH, "figures.ROW_LENGTH must count TurnIndex's per-turn fields"
PACKED_FIELDS: tuple[str, ...] = ("responses", "calls", "answers", "outputs", "spread")  # packed.PackedColumn's
assert tuple(ROW_FIELDS[k] for k in PACKED_AT) == PACKED_FIELDS, "figures.PACKED_AT must name the packed fields"
