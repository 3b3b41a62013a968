"""``session-inspector [PATH]``: the app (a session file, a folder of them, or every session).

``--serve`` serves the same app to a browser through textual-serve (the
``serve`` extra), on 127.0.0.1 only: each browser tab runs this same command,
with the same PATH and options, in its own process.  The server, its guards
(a token, the page's origin, the host), its page and its logging are in
``inspector.serve.server``.
"""

from __future__ import annotations

import argparse
import errno
import os
import secrets
import shlex
import sys
from pathlib import Path

from inspector.catalog.listing import unreachable
from inspector.commands.common import _fraction
from inspector.commands.output import say_error
from inspector.format import describe_os_error
from inspector.serve.server import SERVE_HOST, guarded_server

DEFAULT_PORT = 8000


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "path", nargs="?", type=Path,
        help="a session file or a folder of them (default: every session under ~/.gemini/tmp/*/chats)",
    )
    parser.add_argument("--model", help="the model whose context window applies (default: the session's)")
    parser.add_argument("--threshold", type=_fraction,
                        help="compression threshold as a fraction of the window (default: settings, else 0.5)")
    parser.add_argument("--no-watch", action="store_true", help="do not follow changes to the open file")
    parser.add_argument("--provider", choices=("offline", "gemini", "gemini-cli", "auto"), default="offline",
                        help="who writes the snapshot when you press c (default: offline, no network; "
                             "gemini needs GEMINI_API_KEY/GOOGLE_API_KEY; gemini-cli runs your own gemini, signed in "
                             "with Google; auto picks gemini when a key is set, else a signed-in gemini-cli)")
    parser.add_argument("--base-url", help="send Gemini requests to this endpoint instead (a proxy, a local server)")
    parser.add_argument("--serve", action="store_true",
                        help=f"serve the app to a web browser on http://{SERVE_HOST}:PORT (needs the serve extra: "
                             "pip install 'session-inspector[serve]')")
    parser.add_argument("--port", type=_port, help=f"the port for --serve (default {DEFAULT_PORT})")
    parser.add_argument("--cost", action=argparse.BooleanOptionalAction, default=None,
                        help="price each turn from the recorded usage (--no-cost: a subscription pays nothing "
                             "per token; default: SESSION_INSPECTOR_COST, else off when signed in with Google)")


def _port(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a port number: {text!r}") from None
    if not 0 < value < 65536:
        raise argparse.ArgumentTypeError(f"not a port number: {value}")
    return value


def served_command(args: argparse.Namespace) -> str:
    """The shell command each browser tab runs: this CLI, same PATH and options, without --serve."""
    argv = [sys.executable, "-m", "inspector"]
    if args.path is not None:
        argv.append(str(Path(args.path).resolve()))
    if args.model:
        argv += ["--model", args.model]
    if args.threshold is not None:
        argv += ["--threshold", repr(args.threshold)]
    if args.no_watch:
        argv.append("--no-watch")
    if args.provider != "offline":
        argv += ["--provider", args.provider]
    if args.base_url:
        argv += ["--base-url", args.base_url]
    if args.cost is not None:
        argv.append("--cost" if args.cost else "--no-cost")
    return shlex.join(argv)


def serve(args: argparse.Namespace) -> int:
    try:
        import textual_serve.server  # noqa: F401
    except ImportError:
        print("session-inspector: --serve needs textual-serve; install it with: "
              "pip install 'session-inspector[serve]'", file=sys.stderr)
        return 2
    port = args.port or DEFAULT_PORT
    title = f"session-inspector - {args.path.name}" if args.path is not None else "session-inspector"
    problem = port_problem(SERVE_HOST, port)
    if problem:  # said before the URL and its token are printed for a server that never ran
        print(f"session-inspector: cannot serve on {SERVE_HOST}:{port}: {problem}", file=sys.stderr)
        return 2
    token = secrets.token_urlsafe(24)
    print(f"session-inspector: serving on http://{SERVE_HOST}:{port}/?token={token} (Ctrl+C stops)\n"
          "  anyone with this URL can read, compact and revert the session files the app opens; keep it secret",
          flush=True)
    try:
        guarded_server(served_command(args), port=port, title=title, token=token).serve()
    except OSError as exc:  # taken in the moment since the check
        print(f"session-inspector: cannot serve on {SERVE_HOST}:{port}: {describe_os_error(exc)}", file=sys.stderr)
        return 2
    return 0


def port_problem(host: str, port: int) -> str | None:
    """Why a server cannot listen on ``host``:``port`` (in use, not allowed), or None."""
    import socket

    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as the server itself binds
        try:
            probe.bind((host, port))
        except OSError as exc:
            return "the port is in use" if exc.errno == errno.EADDRINUSE else describe_os_error(exc)
    return None


def run(args: argparse.Namespace) -> int:
    path: Path | None = args.path
    problem = unreachable(path) if path is not None else None
    if problem is not None:
        say_error(f"{path}: {problem}")
        return 2
    if args.cost is not None:  # the one switch every screen's cost reads (cost.resolve_cost), for this run
        os.environ["SESSION_INSPECTOR_COST"] = "on" if args.cost else "off"
    if args.serve:
        return serve(args)
    if args.port is not None:
        print("session-inspector: --port goes with --serve", file=sys.stderr)
        return 2
    from inspector.tui.app import InspectorApp

    InspectorApp(
        path, model=args.model, threshold=args.threshold, live=not args.no_watch,
        provider=args.provider, base_url=args.base_url,
    ).run()
    return 0
