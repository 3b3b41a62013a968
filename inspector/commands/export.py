"""``session-inspector export FILE --format md|html [--out PATH]``: a session as Markdown or one HTML page.

With ``--compaction`` the export also holds the snapshot the offline
summariser (or ``--provider``) writes for it, as ``compact --force`` would;
nothing is applied.  Without ``--out`` the export goes to stdout; with it,
the file is written atomically, and never over the session itself.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from inspector.commands.common import add_session_arguments
from inspector.commands.output import say, say_error, usable_provider

EXIT_BAD_INPUT = 2
EXIT_FAILED = 1  # as compact's: the compaction asked for failed (the export is still written, saying so)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_session_arguments(parser)
    parser.add_argument("--format", choices=("md", "html"), default="md", help="Markdown (default) or one HTML page")
    parser.add_argument("--out", help="write here instead of to stdout (replaced atomically)")
    parser.add_argument("--compaction", action="store_true",
                        help="add the snapshot a forced compaction would write (nothing is applied)")
    parser.add_argument("--provider", choices=("auto", "gemini", "gemini-cli", "offline"), default="offline",
                        help="who writes that snapshot (default: offline, nothing is sent)")


def run(args: argparse.Namespace) -> int:
    import asyncio

    from inspector.compaction.request import CompactionRequest, compaction_context
    from inspector.compaction.strategies import run_request
    from inspector.compaction.summarisers import pick_summariser
    from inspector.configured import analyse_configured
    from inspector.export import ExportRefused, build, check_target, render, write_export
    from inspector.format import describe_os_error
    from inspector.progress import load_showing_progress

    if args.compaction and usable_provider(args.provider) is None:
        return EXIT_BAD_INPUT
    out = Path(args.out).absolute() if args.out else None
    session = load_showing_progress(args.file)
    if out is not None:
        try:
            check_target(out, session.path)
        except ExportRefused as exc:
            say_error(str(exc))
            return EXIT_BAD_INPUT
    analysis = analyse_configured(session, args.model, args.threshold).analysis
    result = None
    if args.compaction:
        request = CompactionRequest(force=True, provider=args.provider, model=args.model)
        summariser = pick_summariser(request.provider, model=analysis.model)
        result = asyncio.run(run_request(request, compaction_context(session, analysis), analysis.turns, summariser))
    text = render(build(session, analysis, result), args.format)
    failed = result is not None and result.status.failed  # exit 1, as compact's (a NOOP is no failure)
    if result is not None and not result.snapshot:
        say_error(f"{args.file}: no snapshot ({result.status.value}: {result.message or 'no reason given'}); "
                  "the export says so in place of one")
    if out is None:
        sys.stdout.write(text)
        return EXIT_FAILED if failed else 0
    try:
        write_export(text, out, session.path)
    except ExportRefused as exc:
        say_error(str(exc))
        return EXIT_BAD_INPUT
    except OSError as exc:
        say_error(f"{out}: {describe_os_error(exc)}")
        return EXIT_BAD_INPUT
    say(f"wrote {out} ({len(analysis.turns):,} turns, {args.format})", file=sys.stderr)
    return EXIT_FAILED if failed else 0
