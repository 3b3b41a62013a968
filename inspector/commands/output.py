"""What the commands print, made safe to reach a terminal.

Session text (messages, tool output, the ``model`` field, file and folder
names, journal lines) may hold escape sequences.  Every command prints
through these, so none of it is ever sent to the terminal raw:

* ``terminal_console()``: a Rich console that reads no markup (a folder
  named ``[/x]`` is a name, not a closing tag), no ``:emoji:`` codes, and
  passes the text of every segment it draws through ``visible`` (its own
  colour codes are control segments, drawn as they are);
* ``say_error(text)``: the one line a command ends with on stderr;
* ``say(text)``: a line of a report on stdout (or ``file``).
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Iterable
from typing import TYPE_CHECKING, TextIO

from inspector.format import literal_segments, visible

if TYPE_CHECKING:
    from rich.console import Console, ConsoleOptions, RenderableType
    from rich.segment import Segment


def say(text: str, *, file: TextIO | None = None) -> None:
    """A line of a report: control characters in it shown, never sent (newlines kept)."""
    print(visible(text), file=file or sys.stdout)


def say_error(text: str) -> None:
    """The one line a refused command leaves on stderr: ``session-inspector: <text>``."""
    print(f"session-inspector: {visible(text, one_line=True)}", file=sys.stderr)


def terminal_console() -> Console:
    """A Rich console for a report whose text may come from a session (see the module doc)."""
    return _literal_console()(markup=False, emoji=False, highlight=False)


@functools.cache
def _literal_console() -> type[Console]:
    # Built on first use: the commands that print JSON never import Rich.
    from rich.console import Console

    class LiteralConsole(Console):
        def render(self, renderable: RenderableType, options: ConsoleOptions | None = None) -> Iterable[Segment]:
            return literal_segments(super().render(renderable, options))

    return LiteralConsole
