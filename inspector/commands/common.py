"""Pieces every command shares: loading a session, printing JSON."""

from __future__ import annotations

import argparse
import math
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson

from inspector.format import drivers_in_utf8

_HELD: list[object] = []


def hold_until_exit(*values: object) -> None:
    """Keep what a command that only reads built (a loaded session, its analysis, the report)
    alive until the process ends, so that the console script leaves without freeing it
    (``cli.entry``): freeing a 170,000-turn session and its analysis takes ~0.2 s, for
    nothing.  Where ``cli.main`` runs in a process that goes on, it lets go (``release_held``)."""
    _HELD.extend(values)


def holding() -> bool:
    """Whether ``hold_until_exit`` keeps anything now."""
    return bool(_HELD)


def release_held() -> None:
    """Let go of what ``hold_until_exit`` kept."""
    _HELD.clear()


def add_session_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", type=Path, help="a session file (.jsonl, legacy .json or a /chat save checkpoint)")
    parser.add_argument("--model", help="the model whose context window applies (default: the session's)")
    parser.add_argument(
        "--threshold",
        type=_fraction,
        help="compression threshold as a fraction of the window (default: settings, else 0.5)",
    )


def add_compaction_point(parser: argparse.ArgumentParser) -> None:
    from inspector.antigravity.compaction_point import COMPACTION_POINT_VARIABLE, DEFAULT_COMPACTION_POINT

    parser.add_argument("--compaction-point", type=_whole, default=None, metavar="TOKENS",
                        help="an Antigravity transcript: the context size at which Antigravity compacts, that its "
                             f"gauge is drawn against (default: {COMPACTION_POINT_VARIABLE}, else "
                             f"{DEFAULT_COMPACTION_POINT:,})")


def number(kind: type[int] | type[float], accept: Callable[[float], bool], rule: str) -> Callable[[str], float]:
    """An argparse type: a number of ``kind`` that ``accept`` holds for, else ``rule`` as the error."""

    def parse(text: str) -> float:
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"not a {'whole ' if kind is int else ''}number: {text!r}"
            ) from None
        if not math.isfinite(value):  # "inf", "nan", "1e400": never a count, a share or a time
            raise argparse.ArgumentTypeError(f"not a finite number: {text!r}")
        if not accept(value):
            raise argparse.ArgumentTypeError(rule)
        return value

    return parse


_fraction = number(float, lambda v: 0 < v <= 1, "must be above 0 and at most 1")
_whole = number(int, lambda v: v > 0, "must be a whole number above 0")


def print_json(value: Any) -> None:
    """Write ``value`` as indented JSON on stdout.

    Every ``analysis.Rows`` inside ``value`` (a value of an object, at any
    depth) is written in batches as they are produced, so 170,000 rows never
    exist as one list nor as one string; the bytes are the same as for a
    list.  On a terminal, characters that could drive it are written as
    ``\\u`` escapes.
    """
    out: Any = sys.stdout.buffer
    if sys.stdout.isatty():
        out = _TerminalSafe(out)
    found: dict[str, tuple[Any, int]] = {}
    marked = _mark_rows(value, 0, found)
    if found:
        _write_streamed(marked, found, out)
    else:
        out.write(_dumps(value) + b"\n")
    out.flush()


# What JSON holds as it is: never a Rows, so never asked (``hasattr`` of a missing name raises inside).
_PLAIN_JSON = frozenset({str, int, float, bool, list, tuple, type(None)})


def _is_rows(value: Any) -> bool:
    return hasattr(value, "batches")  # analysis.Rows (not imported: the writer knows JSON, not analyses)


def _mark_rows(value: Any, depth: int, found: dict[str, tuple[Any, int]]) -> Any:
    """``value`` with each Rows in an object replaced by a mark (noted in ``found`` with its depth, in
    the order they are written); an object holding none is returned as it is, not copied."""
    if isinstance(value, dict):
        marked: dict[Any, Any] | None = None
        for key, item in value.items():
            if type(item) in _PLAIN_JSON:
                continue
            new = _mark_rows(item, depth + 1, found)
            if new is not item:
                if marked is None:
                    marked = dict(value)
                marked[key] = new
        return value if marked is None else marked
    if type(value) not in _PLAIN_JSON and _is_rows(value):
        mark = f"\x00rows:{len(found)}\x00"
        found[mark] = (value, depth)
        return mark
    return value


def _dumps(value: Any) -> bytes:
    try:
        data = orjson.dumps(value, option=orjson.OPT_INDENT_2)
    except TypeError:  # an integer beyond 64 bits, or a lone surrogate, somewhere in the session
        import json

        text = json.dumps(value, indent=2, ensure_ascii=False)
        data = _LONE_SURROGATE.sub(_escaped_char, text).encode("utf-8")  # valid UTF-8, as JSON.stringify
    return data


class _TerminalSafe:
    """Writes JSON bytes to a terminal with ``_literal_json`` (each write is whole characters)."""

    def __init__(self, raw: Any) -> None:
        self.raw = raw

    def write(self, data: bytes | memoryview) -> None:
        self.raw.write(_literal_json(bytes(data)))

    def flush(self) -> None:
        self.raw.flush()


# Characters JSON may carry raw that must not reach a terminal: ``format.TERMINAL_DRIVERS``, the
# one table of them (DEL, the C1 controls, every bidi control; JSON escapes C0 itself).
# Every one of them sits inside a string (JSON's own syntax is ASCII), where \uXXXX
# means the same.  Only on a terminal: a program reading the JSON gets the characters
# as they are (a scan of 80 MB of output costs ~0.4 s), and could not be protected
# anyway (it decodes the escapes).
_RAW_UNSAFE = drivers_in_utf8()
_LONE_SURROGATE = re.compile(r"[\ud800-\udfff]")  # (re reads the escapes: mypyc takes no surrogate literal)


def _escaped_char(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"


def _escaped_bytes(match: re.Match[bytes]) -> bytes:
    return f"\\u{ord(match.group().decode('utf-8')):04x}".encode()


def _literal_json(data: bytes) -> bytes:
    """JSON bytes with every character that could drive a terminal written as a \\u escape
    (JSON escapes C0 controls itself; lone surrogates never get this far as raw bytes)."""
    return _RAW_UNSAFE.sub(_escaped_bytes, data)


def _write_streamed(marked: Any, found: dict[str, tuple[Any, int]], out: Any) -> None:
    head = _dumps(marked)
    for mark, (rows, depth) in found.items():
        before, _, head = head.partition(_dumps(mark))
        out.write(before)
        _write_rows(rows, depth, out)
    out.write(head + b"\n")


def _write_rows(rows: Any, depth: int, out: Any) -> None:
    """A list of objects (``analysis.Rows``) as orjson indents it at ``depth``.

    Each batch is dumped inside as many ``{"": ...}`` as ``depth``, which puts
    its objects at the right depth; the wrappers are cut off.
    """
    head, tail = _wrapping(depth)
    first = True
    for batch in rows.batches():
        if not batch:
            continue
        text = _dumps(_wrapped(batch, depth))
        out.write(b"[\n" if first else b",\n")
        out.write(memoryview(text)[head:-tail])
        first = False
    out.write(b"[]" if first else b"\n" + b"  " * depth + b"]")


def _wrapped(value: Any, depth: int) -> Any:
    for _ in range(depth):
        value = {"": value}
    return value


def _wrapping(depth: int) -> tuple[int, int]:
    """How many bytes come before a wrapped list's first item's indent, and after its last item."""
    probe = _dumps(_wrapped([0], depth))
    at = probe.rindex(b"0")
    return at - 2 * (depth + 1), len(probe) - at - 1
