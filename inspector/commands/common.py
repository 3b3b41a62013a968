"""Pieces every command shares: loading a session, printing JSON."""

from __future__ import annotations

import argparse
import sys
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


def _fraction(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not 0 < value <= 1:
        raise argparse.ArgumentTypeError("must be above 0 and at most 1")
    return value


def print_json(value: Any) -> None:
    try:
        data = orjson.dumps(value, option=orjson.OPT_INDENT_2)
    except TypeError:  # an integer beyond 64 bits somewhere in the session
        import json

        data = json.dumps(value, indent=2, ensure_ascii=False).encode()
    sys.stdout.buffer.write(data + b"\n")
    sys.stdout.flush()
