"""A ``Static`` of lines that each fit its width: new text lays the screen out again only when its
height changes.

``Static.update`` asks for a layout of the whole screen each time (its size may change), about
7-15 ms on the session screen.  The header and the status line are updated at every split step,
live append and read progress, and each writes its own line breaks, fitted to the width.  While
every line fits the width laid out, the height is the count of lines: when the height laid out is
already that count, a repaint of the widget is all it needs.  Otherwise (a line too long, which
would wrap, or another count) it is laid out as ``Static`` does.
"""

from __future__ import annotations

from rich.cells import cell_len
from rich.text import Text
from textual.widgets import Static


class FittedLines(Static):
    """``show_lines(text)``: ``text``'s lines, shown; a layout unless the height laid out is theirs."""

    def show_lines(self, text: Text) -> None:
        lines = text.plain.split("\n")
        size = self.content_size  # as the last layout made it (a layout still to come: it may differ)
        fits = size.width > 0 and all(cell_len(line) <= size.width for line in lines)
        self.update(text, layout=not fits or len(lines) != size.height)
