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
import re
import sys
from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, TextIO, cast

from inspector.format import literal_segments, visible

if TYPE_CHECKING:
    from pathlib import Path

    from rich.console import Console, ConsoleOptions, RenderableType
    from rich.segment import Segment
    from rich.text import Text

    from inspector.compaction.summarisers import ProviderChoice
    from inspector.session.errors import LoadWarning


def say(text: str, *, file: TextIO | None = None) -> None:
    """A line of a report: control characters in it shown, never sent (newlines kept)."""
    print(visible(text), file=file or sys.stdout)


WARNINGS_SHOWN = 20  # a file of 200,000 broken lines is 20 lines on stderr and a count, not 200,000


def say_warnings(path: Path, warnings: Sequence[LoadWarning]) -> None:
    """The warnings a read left, on stderr: the first ``WARNINGS_SHOWN``, then how many more
    (``analyze --json`` lists them all)."""
    for warning in warnings[:WARNINGS_SHOWN]:
        print(visible(f"warning: {path}: {warning}", one_line=True), file=sys.stderr)
    if len(warnings) > WARNINGS_SHOWN:
        more = len(warnings) - WARNINGS_SHOWN
        print(visible(f"warning: {path}: … and {more:,} more (analyze --json lists every one)", one_line=True),
              file=sys.stderr)


def say_error(text: str) -> None:
    """The one line a refused command leaves on stderr: ``session-inspector: <text>``."""
    print(f"session-inspector: {visible(text, one_line=True)}", file=sys.stderr)


def usable_provider(requested: str, gemini_cli: str | None = None) -> ProviderChoice | None:
    """The summariser ``--provider requested`` runs here, or None after saying on stderr why it
    cannot run (Gemini asked for by name, with no credentials; Gemini CLI not found), before anything
    is read or sent.  When ``auto`` picked the user's Gemini CLI, stderr says so, and what is sent where."""
    from inspector.compaction.summarisers import choose_provider

    choice = choose_provider(requested, gemini_cli=gemini_cli)
    if choice.problem:
        say_error(f"{choice.problem} (--provider offline needs no key)")
        return None
    if choice.provider == "gemini-cli" and requested == "auto":
        say_error(f"provider: {choice.label()}: {choice.reason}")
    return choice


def terminal_console() -> Console:
    """A Rich console for a report whose text may come from a session (see the module doc).
    No line it writes ends in spaces (a table pads its last column to the width it takes)."""
    return _literal_console()(markup=False, emoji=False, highlight=False,
                                 file=cast("TextIO", _NoTrailingSpaces(sys.stdout)))  # (what Rich uses of a file)


# The end of a line: spaces and colour codes (Rich closes a padded cell's style after its spaces).
_LINE_END = re.compile(r"(?:[ ]|\x1b\[[0-9;]*m)+(?=\n)")
_COLOUR_CODE = re.compile(r"\x1b\[[0-9;]*m")


def _codes_only(found: re.Match[str]) -> str:
    return "".join(_COLOUR_CODE.findall(found.group()))


class _NoTrailingSpaces:
    """``stream`` with the spaces that end each line left out.  Rich writes whole lines at a
    time (a print's text at once), so a line is never cut between two writes."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        self._stream.write(_LINE_END.sub(_codes_only, text))
        return len(text)

    def flush(self) -> None:
        self._stream.flush()

    def isatty(self) -> bool:
        return self._stream.isatty()

    def fileno(self) -> int:
        return self._stream.fileno()

    @property
    def encoding(self) -> str:
        return self._stream.encoding


@functools.cache
def _literal_console() -> type[Console]:
    # Built on first use: the commands that print JSON never import Rich.
    from rich.console import Console

    class LiteralConsole(Console):
        def render(self, renderable: RenderableType, options: ConsoleOptions | None = None) -> Iterable[Segment]:
            return literal_segments(super().render(renderable, options))

    return LiteralConsole


class Fields:
    """Short items of a report's heading on one line, ``gap`` spaces apart (set in by ``margin``).
    Where they do not fit the terminal, the line breaks between two items, never inside one
    ("model:" is never left at the end of a line without its value), and the next line is set
    in ``indent`` more.  An item wider than the terminal wraps as text does, set in the same;
    so one item is a sentence whose wrapped lines go on set in (``margin=2, indent=0``: all of
    it set in).  No line ends in spaces."""

    def __init__(self, *items: Text | str, gap: int = 2, indent: int = 2, margin: int = 0) -> None:
        self.items, self.gap, self.indent, self.margin = items, gap, margin + indent, margin

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> Iterator[Text]:
        from rich.text import Text

        width = options.max_width
        line, used, empty = Text(" " * self.margin), self.margin, True
        for item in self.items:
            text = item if isinstance(item, Text) else Text(item)
            if not empty and used + self.gap + text.cell_len > width:
                line.rstrip()  # an item may be padded (to line up with the lines above and below)
                yield line
                line, used, empty = Text(" " * self.indent), self.indent, True
            elif not empty:
                line.append(" " * self.gap)
                used += self.gap
            if used + text.cell_len > width:  # too wide even on a line of its own: wrapped, set in
                *whole, last = text.wrap(console, max(width - self.indent, 1))  # (used <= indent here)
                for piece in whole:
                    piece.rstrip()
                    yield line + piece
                    line = Text(" " * self.indent)
                text, used = last, self.indent
            line.append_text(text)
            used += text.cell_len
            empty = False
        line.rstrip()
        yield line


SNAPSHOT_LINES_SHOWN = 1_000  # a snapshot is tens of lines; a model's runaway answer may be 300,000


def print_snapshot(console: Console, snapshot: str, margin: int = 0, limit: int = SNAPSHOT_LINES_SHOWN) -> None:
    """A ``<state_snapshot>`` line by line, set in by ``margin``; a line too long for the terminal
    goes on set in two more, under its bullet.  Past ``limit`` lines, how many more there are (a
    10 MB answer was 300,000 lines and a minute of printing)."""
    from rich.text import Text

    lines = visible(snapshot).split("\n")
    for line in lines[:limit]:
        console.print(Fields(line, margin=margin))
    if len(lines) > limit:
        console.print(Fields(Text(f"… and {len(lines) - limit:,} more lines (--json prints the whole snapshot)",
                                  "dim"), margin=margin))
