"""``session-inspector [PATH]``: the app (a session file, a folder of them, or every session)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from inspector.commands.common import _fraction


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "path", nargs="?", type=Path,
        help="a session file or a folder of them (default: every session under ~/.gemini/tmp/*/chats)",
    )
    parser.add_argument("--model", help="the model whose context window applies (default: the session's)")
    parser.add_argument("--threshold", type=_fraction,
                        help="compression threshold as a fraction of the window (default: settings, else 0.5)")
    parser.add_argument("--no-watch", action="store_true", help="do not follow changes to the open file")
    parser.add_argument("--provider", choices=("offline", "gemini", "auto"), default="offline",
                        help="who writes the snapshot when you press c (default: offline, no network; "
                             "gemini needs GEMINI_API_KEY/GOOGLE_API_KEY; auto picks gemini when a key is set)")
    parser.add_argument("--base-url", help="send Gemini requests to this endpoint instead (a proxy, a local server)")


def run(args: argparse.Namespace) -> int:
    path: Path | None = args.path
    if path is not None and not path.exists():
        print(f"session-inspector: {path}: no such file or folder", file=sys.stderr)
        return 2
    from inspector.tui.app import InspectorApp

    InspectorApp(
        path, model=args.model, threshold=args.threshold, live=not args.no_watch,
        provider=args.provider, base_url=args.base_url,
    ).run()
    return 0
