"""The turn table's columns: which fit a width, how wide each is, and their titles."""

from __future__ import annotations

from dataclasses import dataclass

from inspector.format import USAGE_HEADER


@dataclass(frozen=True)
class Column:
    """A column of the table: ``drop`` orders what goes first when the table is narrow
    (0: never dropped); ``flex``: the column takes the width left over, down to ``width``."""

    key: str
    title: str
    width: int
    right: bool = False
    drop: int = 0
    flex: int = 0  # the widest it grows to (0: fixed)


COLUMNS = (
    Column("mark", "", 1),
    Column("index", "#", 3, right=True),
    Column("role", "role", 5, drop=4),
    Column("kind", "kind", 10, flex=24),
    Column("mask", "", 1),  # ■ masked already, □ masked next turn (tui/masking_marks.py)
    Column("tokens", "est. tok", 9, right=True),
    Column("usage", USAGE_HEADER, 22, right=True, drop=3),  # "1.2M/9.9k/1.1M/9.9k" whole, and its header
    Column("cost", "cost", 7, right=True, drop=2),  # what the turn cost (tui/cost_lines.py); only when priced
    Column("share", "share", 6, right=True, drop=4),
    Column("bar", "vs largest", 10, drop=1),  # the share again, drawn: the first to go
)


KIND_FLOOR = 10  # the kind column is never narrower (longer kinds end in an ellipsis then)


def layout(width: int, turn_count: int, without: frozenset[str] = frozenset(),
           kind_width: int = KIND_FLOOR) -> tuple[tuple[Column, int], ...]:
    """The columns that fit ``width`` cells and each one's width (``without``: columns with
    nothing to show; ``kind_width``: the longest kind to show, which goes whole before the
    least needed columns stay): the least needed columns drop first, then the kind column
    grows into what is left (or, on a very narrow table, shrinks down to ``KIND_FLOOR``)."""
    index_width = max(3, len(f"{max(0, turn_count - 1):,}"))
    kind = max(KIND_FLOOR, min(kind_width, next(c.flex for c in COLUMNS if c.key == "kind")))
    sized = [(c, index_width if c.key == "index" else kind if c.key == "kind" else c.width)
             for c in COLUMNS if c.key not in without]

    def need(cols: list[tuple[Column, int]]) -> int:
        return sum(w for _, w in cols) + len(cols) - 1

    for drop in sorted({c.drop for c in COLUMNS if c.drop}):
        if need(sized) <= width:
            break
        sized = [(c, w) for c, w in sized if c.drop != drop]
    over = need(sized) - width
    if over > 0:
        sized = [(c, max(KIND_FLOOR, w - over) if c.key == "kind" else w) for c, w in sized]
    spare = max(0, width - need(sized))
    return tuple((c, min(c.flex, w + spare) if c.flex else w) for c, w in sized)


def header_text(columns: tuple[tuple[Column, int], ...] | None = None) -> str:
    """The titles of ``columns`` (default: every column at its narrowest), aligned like the rows."""
    columns = columns or tuple((c, c.width) for c in COLUMNS)
    return " ".join(f"{c.title:>{w}}" if c.right else f"{c.title:<{w}}" for c, w in columns).rstrip()


def fit(text: str, width: int, right: bool = False) -> str:
    """``text`` in ``width`` cells: padded, or cut with an ellipsis (never silently)."""
    if len(text) > width:
        text = text[: max(0, width - 1)] + "…"
    return f"{text:>{width}}" if right else f"{text:<{width}}"
