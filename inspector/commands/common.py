"""Pieces every command shares: loading a session, printing JSON."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson


def add_session_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", type=Path, help="a session file (.jsonl, legacy .json or a /chat save checkpoint)")
    parser.add_argument("--model", help="the model whose context window applies (default: the session's)")
    parser.add_argument(
        "--threshold",
        type=_fraction,
        help="compression threshold as a fraction of the window (default: settings, else 0.5)",
    )


def number(kind: type[int] | type[float], accept: Callable[[float], bool], rule: str) -> Callable[[str], float]:
    """An argparse type: a number of ``kind`` that ``accept`` holds for, else ``rule`` as the error."""

    def parse(text: str) -> float:
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"not a {'whole ' if kind is int else ''}number: {text!r}"
            ) from None
        if not accept(value):
            raise argparse.ArgumentTypeError(rule)
        return value

    return parse


_fraction = number(float, lambda v: 0 < v <= 1, "must be above 0 and at most 1")


def print_json(value: Any) -> None:
    """Write ``value`` as indented JSON on stdout.

    A top-level value that is ``analysis.Rows`` is written in batches as
    they are produced, so 170,000 rows never exist as one
    list nor as one string; the bytes are the same as for a list.
    """
    out = sys.stdout.buffer
    if isinstance(value, dict) and any(_is_rows(v) for v in value.values()):
        _write_streamed(value, out)
    else:
        out.write(_dumps(value) + b"\n")
    out.flush()


def _is_rows(value: Any) -> bool:
    return hasattr(value, "batches")  # analysis.Rows (not imported: the writer knows JSON, not analyses)


def _dumps(value: Any) -> bytes:
    try:
        return orjson.dumps(value, option=orjson.OPT_INDENT_2)
    except TypeError:  # an integer beyond 64 bits somewhere in the session
        import json

        return json.dumps(value, indent=2, ensure_ascii=False).encode("utf-8", "surrogatepass")


def _write_streamed(value: dict[str, Any], out: Any) -> None:
    marks = {key: f"\x00rows:{key}\x00" for key, item in value.items() if _is_rows(item)}
    head = _dumps({key: marks.get(key, item) for key, item in value.items()})
    for key, mark in marks.items():
        before, _, head = head.partition(_dumps(mark))
        out.write(before)
        _write_rows(value[key], out)
    out.write(head + b"\n")


def _write_rows(rows: Any, out: Any) -> None:
    """A list of objects (``analysis.Rows``) as orjson indents it at depth 1 of an object.

    Each batch is dumped as ``{"": [...]}``, which puts its objects at the
    right depth; the wrapper's first 10 and last 6 bytes are cut off.
    """
    first = True
    for batch in rows.batches():
        if not batch:
            continue
        text = _dumps({"": batch})  # '{\n  "": [\n    {...},\n    {...}\n  ]\n}'
        out.write(b"[\n" if first else b",\n")
        out.write(memoryview(text)[len(_WRAP_HEAD):-len(_WRAP_TAIL)])
        first = False
    out.write(b"[]" if first else b"\n  ]")


_WRAP_HEAD = b'{\n  "": [\n'
_WRAP_TAIL = b"\n  ]\n}"
