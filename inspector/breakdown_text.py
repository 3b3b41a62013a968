"""A breakdown (``inspector.breakdown``) as lines of text bars, for ``analyze --by`` and the app.

Each group is one line that fits the width given (80 columns or more): its
name (a long path keeps its end), its tokens, its share of the history, the
turns it appears in, what the split keeps of it, and a bar of its share.
"""

from __future__ import annotations

import shutil
import textwrap

from inspector.breakdown import Breakdown, Dimension, Group
from inspector.format import percent, plural, share_bar, visible

MIN_WIDTH = 60
_FIGURES = 9 + 1 + 6 + 1 + 5 + 1 + 9  # tokens, share, turns, kept (with a space between)
_TITLES = {Dimension.KIND: "kind", Dimension.TOOL: "tool", Dimension.FILE: "file", Dimension.MODEL: "model"}


def report_width() -> int:
    """The terminal's width, 80 when piped; never narrower than ``MIN_WIDTH``, never wider than 120."""
    return max(MIN_WIDTH, min(120, shutil.get_terminal_size((80, 24)).columns))


def cut_name(name: str, width: int, keep_end: bool) -> str:
    """``name`` on one line in ``width`` columns: its end kept (a path's file name) or its start."""
    name = visible(name, one_line=True)
    if len(name) <= width:
        return name
    return "…" + name[-(width - 1):] if keep_end else name[:width - 1] + "…"


def name_width(groups: tuple[Group, ...], width: int) -> int:
    """The name column: as wide as the longest name, at most a third of the line (at least 10)."""
    longest = max((len(visible(g.name, one_line=True)) for g in groups), default=4)
    return max(10, min(longest, width // 3))


def group_line(group: Group, names: int, width: int, keep_end: bool) -> str:
    """One group: name, tokens, share, turns, kept tokens, then a bar of its share in what is left."""
    bar = max(4, width - 2 - names - 1 - _FIGURES - 2)
    return (f"  {cut_name(group.name, names, keep_end):<{names}} {group.tokens:>9,} {percent(group.share):>6} "
            f"{len(group.turns):>5,} {group.kept_tokens:>9,}  {share_bar(group.share, bar)}").rstrip()


def heading(names: int, title: str) -> str:
    return f"  {title:<{names}} {'tokens':>9} {'share':>6} {'turns':>5} {'kept':>9}  bar"


def coverage(found: Breakdown, dimension: Dimension) -> str:
    """The line under the bars: how the groups add up to the history's estimate."""
    groups = found.groups(dimension)
    covered = sum(g.tokens for g in groups)
    total = found.total_tokens
    if dimension is Dimension.KIND:
        return f"the kinds add up to {covered:,} tokens, the history's whole estimate"
    what = {Dimension.TOOL: "tool calls and results",
            Dimension.FILE: "files read, written, edited or @-included",
            Dimension.MODEL: "model turns"}[dimension]
    share = percent(covered / total) if total else "0.0%"
    return f"{what}: {covered:,} of {total:,} tokens ({share})"


def split_words(found: Breakdown) -> str:
    """What the split does, for the title: which turns it summarises and keeps."""
    if found.split <= 0:
        return "the split summarises nothing"
    kept = found.turn_count - found.split
    if kept <= 0:
        return f"the split summarises all {plural(found.turn_count, 'turn')} and keeps none"
    return f"the split summarises turns 0-{found.split - 1:,} and keeps {plural(kept, 'turn')}"


def breakdown_lines(found: Breakdown, dimension: Dimension, width: int = 80) -> list[str]:
    """The report of ``analyze --by``: a title, a heading, a line a group, and how they add up."""
    groups = found.groups(dimension)
    names = name_width(groups, width)
    title = _TITLES[dimension]
    lines = [f"by {title}: {found.total_tokens:,} tokens estimated over {plural(found.turn_count, 'turn')}",
             *textwrap.wrap(f"{split_words(found)} (kept: what it keeps of each)", width,
                            initial_indent="  ", subsequent_indent="  ")]
    if not groups:
        lines.append(f"  (no {title} in this history)")
        return lines
    lines.append(heading(names, title))
    lines.extend(group_line(g, names, width, dimension is Dimension.FILE) for g in groups)
    lines.extend(textwrap.wrap(coverage(found, dimension), width, subsequent_indent="  "))
    return lines
