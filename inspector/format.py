"""Small text formatting shared by the CLI report and the app."""

from __future__ import annotations

import errno
import re
from collections.abc import Iterable, Iterator
from decimal import Decimal
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # Rich is imported only where a renderable is drawn
    from rich.console import Console, ConsoleOptions, RenderableType
    from rich.measure import Measurement
    from rich.segment import Segment


# What must never reach a terminal from session text: C0 controls but tab and
# newline (ESC starts every escape sequence, BEL ends OSC titles/clipboard
# writes, CR and BS overwrite what is shown), the ``TERMINAL_DRIVERS`` below,
# and lone surrogates (not characters at all: writing one raises
# UnicodeEncodeError).
#
# DEL, the C1 controls (U+009B is a one-character CSI on many terminals), and
# every bidirectional control, which reorders what a reader sees ("Trojan
# Source"): Unicode's Bidi_Control set, the Arabic letter mark U+061C, the
# LRM / RLM marks, the embeddings and overrides U+202A-E and the isolates
# U+2066-9.  Inclusive ranges of code points; the one table both ways to the
# terminal read (``visible`` for text, ``drivers_in_utf8`` for JSON bytes).
TERMINAL_DRIVERS = ((0x7F, 0x9F), (0x061C, 0x061C), (0x200E, 0x200F), (0x202A, 0x202E), (0x2066, 0x2069))
_DRIVERS = "".join(f"{chr(low)}-{chr(high)}" for low, high in TERMINAL_DRIVERS)
_UNSAFE = re.compile(f"[\x00-\x08\x0b-\x1f{_DRIVERS}\ud800-\udfff]")
_UNSAFE_LINE = re.compile(f"[\x00-\x1f{_DRIVERS}\ud800-\udfff]")


def drivers_in_utf8() -> re.Pattern[bytes]:
    """``TERMINAL_DRIVERS`` as a pattern over UTF-8 bytes; in valid UTF-8 each match is one
    whole character.  Each range is cut where its characters' encodings stop sharing all but
    their last byte."""
    parts: list[bytes] = []
    for low, high in TERMINAL_DRIVERS:
        start = low
        while start <= high:
            first = chr(start).encode()
            end = start
            while end < high and chr(end + 1).encode()[:-1] == first[:-1] and len(chr(end + 1).encode()) == len(first):
                end += 1
            last = chr(end).encode()
            parts.append(re.escape(first[:-1]) + b"[" + re.escape(first[-1:]) + b"-" + re.escape(last[-1:]) + b"]")
            start = end + 1
    return re.compile(b"|".join(parts))
_NAMED = {"\r": "\\r", "\n": "\\n", "\t": "\\t", "\x1b": "\\e"}


def _shown(match: re.Match[str]) -> str:
    char = match.group()
    named = _NAMED.get(char)
    if named is not None:
        return named
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def visible(text: str, *, one_line: bool = False) -> str:
    """``text`` safe to put on a terminal: every control character written as a
    visible escape (``\\e``, ``\\x07``, ``\\u202e``, ...), never sent.

    Newlines and tabs stay as they are unless ``one_line`` (then they are
    shown as ``\\n`` / ``\\t`` too).  The one function the CLI and the app
    pass session text through before it reaches the screen.
    """
    pattern = _UNSAFE_LINE if one_line else _UNSAFE
    if pattern.search(text) is None:
        return text
    return pattern.sub(_shown, text)


def literal_segments(segments: Iterable[Segment]) -> Iterator[Segment]:
    """Rich segments with the text of each passed through ``visible`` (control segments, the
    renderer's own colour and cursor codes, are kept as they are)."""
    from rich.segment import Segment

    for segment in segments:
        if segment.control or not segment.text:
            yield segment
        else:
            shown = visible(segment.text)
            yield segment if shown is segment.text else Segment(shown, segment.style)


class Literal:
    """A Rich renderable drawn as ``inner`` is, with every control character in its text shown,
    never sent: for a renderable built from session text (a snapshot, a diff, a table of it)."""

    def __init__(self, inner: RenderableType) -> None:
        self.inner = inner

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> Iterator[Segment]:
        yield from literal_segments(console.render(self.inner, options))

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        from rich.measure import Measurement

        return Measurement.get(console, options, self.inner)


def plain_name(text: str) -> str:
    """``text`` fit for a file name someone will see: every character ``visible`` would escape becomes ``_``."""
    return _UNSAFE_LINE.sub("_", text)


_BLOCKS = " ▏▎▍▌▋▊▉█"


def describe_os_error(exc: OSError) -> str:
    """What the file system said, in the words every refusal uses ("permission denied", ...)."""
    if exc.errno == errno.ENOSPC:
        return "no space left on device"
    if exc.errno in (errno.EACCES, errno.EPERM):
        return "permission denied"
    if exc.errno == errno.EROFS:
        return "read-only file system"
    return exc.strerror or str(exc)


EXACT_COUNTS = 2**53  # past this no count is a whole number as JavaScript (and so Gemini CLI) holds it


def count_text(value: int | float) -> str:
    """A count as a report writes it: with thousands separators ("9,163").  Past ``EXACT_COUNTS``
    (a hostile file's ``1.7e308``, which Gemini CLI reads as a number like any other) in scientific
    notation, "1.7e+308", not 309 digits."""
    if abs(value) <= EXACT_COUNTS:
        return f"{value:,}"
    return f"{value:.1e}" if isinstance(value, float) else format(Decimal(value), ".1e")  # (ints past the floats)


def compact_number(value: float | int | None) -> str:
    """1234 -> 1.2k, 1234567 -> 1.2M; exact below a thousand."""
    if value is None:
        return ""
    try:
        value = float(value)
    except OverflowError:  # an integer past a float's range
        return count_text(value)
    if abs(value) < 999.5:
        return f"{value:.0f}"
    for limit, suffix in _SCALES:
        scaled = value / limit
        text = f"{scaled:.1f}" if abs(scaled) < 9.95 else f"{scaled:.0f}"
        if abs(float(text)) < 1000:  # 9,999 is 10k, not 10.0k; 999,999 is 1.0M, not 1000k
            return text + suffix
    return f"{value:.1e}"  # past any count a session holds (a hostile file): short all the same


_SCALES = ((1e3, "k"), (1e6, "M"), (1e9, "G"), (1e12, "T"), (1e15, "P"), (1e18, "E"))


def usage_text(usage: dict[str, Any] | None) -> str:
    """Recorded usage as input/output/cached, and /thoughts when the turn thought (the column's
    header, ``USAGE_HEADER``, names all four)."""
    if not usage:
        return ""
    keys = ("input", "output", "cached", "thoughts") if usage.get("thoughts") else ("input", "output", "cached")
    return "/".join(compact_number(usage.get(k) or 0) for k in keys)


USAGE_HEADER = "in/out/cached/thoughts"


def usage_words(usage: dict[str, Any] | None) -> str:
    """Recorded usage in full, every figure exact ("input 9,123, output 23, cached 4,096, ..."): where
    there is room for it (the detail pane, the export), since ``usage_text``'s 9.1k reads alike for
    9,123 and 9,149.  A key or value no count is shown as it is, made visible."""
    if not usage:
        return ""
    words = []
    for key, value in usage.items():
        figure = count_text(value) if type(value) in (int, float) else str(value)
        words.append(f"{key} {figure}")
    return visible(", ".join(words), one_line=True)


def share_bar(share: float, width: int = 1) -> str:
    """A left-aligned bar of eighth blocks for a share between 0 and 1."""
    eighths = max(0, min(width * 8, round(share * width * 8)))
    if share > 0 and eighths == 0:
        eighths = 1
    full, rest = divmod(eighths, 8)
    return ("█" * full + (_BLOCKS[rest] if rest else "")).ljust(width)


def percent(share: float) -> str:
    """A share as a percentage, one decimal; a share too big for a line (a hostile file's count) in
    scientific notation."""
    value = share * 100
    return f"{value:.1f}%" if abs(value) < 1e6 else f"{value:.1e}%"


def turn_span(start: int, stop: int) -> str:
    """Turns ``start`` to ``stop - 1`` in words: "turns 0-41", "turn 0", "no turns"."""
    if stop <= start:
        return "no turns"
    return f"turn {start:,}" if stop == start + 1 else f"turns {start:,}-{stop - 1:,}"


def split_words(split: int, kind: str | None, turn_count: int | None) -> tuple[str, str]:
    """A split of a history of ``turn_count`` turns in words, as both faces say it, in two pieces
    a line may break between: ("split 152 (reference): summarised turns 0-151,", "kept turns 152-209")."""
    named = f" ({kind})" if kind else ""
    if kind == "staged":  # its other stages may drop or cut later turns too: its stage table says which
        kept = "later turns as the stages left them"
    elif turn_count is not None:
        kept = f"kept {turn_span(split, turn_count)}"
    else:
        kept = f"kept from turn {split:,}"
    return f"split {split:,}{named}: summarised {turn_span(0, split)},", kept


def split_sides(figures: dict[str, int | float]) -> tuple[str, str]:
    """The two sides of a split (``Analysis.split_figures``) as ``analyze`` and the export write them:
    ("31 turns / 48,083 tokens", "5 turns / 135 tokens (0.3%)")."""
    def side(turns: str, tokens: str) -> str:
        return f"{plural(int(figures[turns]), 'turn')} / {plural(int(figures[tokens]), 'token')}"

    kept_share = percent(float(figures["kept_share"]))
    return side("summarised_turns", "summarised_tokens"), f"{side('kept_turns', 'kept_tokens')} ({kept_share})"


def uncut_split_words(split: int) -> str:
    """Beside the split a compaction uses, where the history would split without the tool-output
    budget's cuts (a compaction makes them first), when that differs."""
    return f"split {split:,} without the tool-output budget's cuts"


def before_after(before: int | None, after: int | None, *, unit: str = "", change: bool = False) -> str:
    """A compaction's tokens before -> after, as every face writes them ("48,493 -> 806 tokens (-98.3%)"
    with ``unit=" tokens"`` and ``change``): the preview, the apply confirmation and report, the
    journal's timeline and ``history``, the export.  "" when either is not known (an old journal)."""
    if before is None or after is None:
        return ""
    shown = f"{count_text(before)} -> {count_text(after)}{unit}"
    return f"{shown} ({(after - before) / before:+.1%})" if change and before else shown


def written_by(provider: str | None, model: str | None) -> str:
    """Who wrote a snapshot, as every face says it: a model is named only when one was called
    (the offline digest calls none, though the journal records the session's model beside it)."""
    if provider == "offline":
        return "offline digest (no model was called)"
    if model:
        return f"{provider or '-'} ({model})"
    return provider or "-"


def diff_counts(added: int, removed: int, unchanged: int) -> tuple[str, str, str]:
    """A snapshot diff's line counts as every face writes them: ("+1,234", "-5", "=10 lines")."""
    return f"+{added:,}", f"-{removed:,}", f"={plural(unchanged, 'line')}"


def masking_words(outputs: int, tokens: int) -> str:
    """What masking frees next turn, in all, as every face says it: "58 outputs and 1,041,570 tokens"."""
    return f"{plural(outputs, 'output')} and {plural(tokens, 'token')}"


def rounding_words(total: int, rows: int) -> str | None:
    """Why a history's estimate is more than its rows added up (None when it is not)."""
    if total == rows:
        return None
    return (f"the rows add up to {rows:,}: each turn's estimate is rounded down on its own, "
            f"the total once ({total - rows:,} more)")


def plural(count: int, noun: str, many: str | None = None) -> str:
    """``count`` with thousands separators and the noun in the right number: "1 turn", "2,048 turns"."""
    return f"{count_text(count)} {noun_for(count, noun, many)}"


def noun_for(count: int, noun: str, many: str | None = None) -> str:
    """The noun in the number ``count`` asks for ("turn" for 1, else "turns" or ``many``)."""
    return noun if count == 1 else many or noun + "s"
