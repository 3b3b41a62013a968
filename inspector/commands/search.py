"""``session-inspector search TEXT [--json] [--folder DIR]``: the turns of every session that hold some words.

Searches every session under ``~/.gemini/tmp/*/chats`` (or in ``--folder``)
through the on-disk index of ``inspector.search.index`` (built on the first run,
then only new or changed files are read).  One line a hit: the file, the
turn, who spoke and the words around the match, shown literally.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from inspector.commands.common import hold_until_exit, number, print_json

EXIT_BAD_INPUT = 2


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("text", help="the words to find (every word, anywhere in a turn, any case; "
                                     "at least one of 3 or more characters)")
    parser.add_argument("--folder", type=Path,
                        help="search the sessions in this folder (default: every project under ~/.gemini/tmp)")
    parser.add_argument("--json", action="store_true", help="the hits as JSON")
    parser.add_argument("--limit", type=number(int, lambda v: v > 0, "must be 1 or more"), default=200,
                        help="at most this many hits (default 200)")


def run(args: argparse.Namespace) -> int:
    from inspector.catalog.listing import find_files, is_folder, unreachable
    from inspector.format import plural, visible
    from inspector.search.index import SearchError, search_sessions, unreadable_words
    from inspector.user_cache import HomeUnknown

    folder: Path | None = args.folder
    problem = unreachable(folder) if folder is not None else None
    if folder is not None and (problem is not None or not is_folder(folder)):
        what = problem or "not a folder"
        print(f"session-inspector: {visible(str(folder), one_line=True)}: {what}", file=sys.stderr)
        return EXIT_BAD_INPUT
    try:
        hits, report = search_sessions(args.text, find_files(folder), limit=int(args.limit))
    except (SearchError, HomeUnknown) as exc:  # (no home: no folder of Gemini CLI's to search)
        print(f"session-inspector: {visible(str(exc), one_line=True)}", file=sys.stderr)
        return EXIT_BAD_INPUT
    hold_until_exit(hits, report)  # only read: the process may end without freeing them
    if args.json:
        print_json({
            "query": args.text,
            "files": report.files,
            "unreadable": [{"path": str(u.path), "reason": u.reason} for u in report.unreadable],
            "hits": [{"path": str(h.path), "session_id": h.session_id, "title": h.title, "turn": h.turn,
                      "role": h.role, "snippet": h.snippet} for h in hits],
        })
        return 0
    for hit in hits:
        print(f"{visible(str(hit.path), one_line=True)}  turn {hit.turn:,} ({hit.role})  "
              f"{visible(hit.snippet, one_line=True)}")
    more = " (the first ones; --limit shows more)" if len(hits) >= args.limit else ""
    print(f"{plural(len(hits), 'hit')} in {plural(report.files, 'session file')}{more}", file=sys.stderr)
    if (unsearched := unreadable_words(report)) is not None:
        print(f"session-inspector: {visible(unsearched, one_line=True)} (--json lists them)", file=sys.stderr)
    return 0
