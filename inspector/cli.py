"""The command line: the app by default, and scriptable commands.

    session-inspector [PATH]              open the app (a session file or a folder)
    session-inspector analyze FILE        where every token goes, and the split
    session-inspector compact FILE        preview (or --apply) a compaction
    session-inspector revert FILE         undo the last apply, byte for byte
    session-inspector history FILE        the compactions applied to a session
    session-inspector diff A B            compare two state snapshots
    session-inspector search TEXT         the turns of every session that hold some words

Each command lives in ``inspector/commands/<name>.py`` with ``add_arguments``
and ``run``; they are imported only when used, so ``analyze --json`` starts
without loading the app.  Bad input ends with one line on stderr and exit 2.
"""

from __future__ import annotations

import argparse
import codecs
import importlib
import importlib.util
import io
import os
import sys
from collections.abc import Sequence

from inspector import __version__, build_info
from inspector.commands.common import holding, release_held

COMMANDS = {
    "analyze": "where every token goes: per-turn estimates, usage and the split",
    "compact": "run Gemini CLI's compaction on a session and show (or apply) the result",
    "revert": "undo the last compaction applied to a session, byte for byte",
    "history": "list the compactions applied to a session",
    "diff": "compare two <state_snapshot>s section by section",
    "export": "a session (and a compaction of it) as Markdown or one standalone HTML page",
    "search": "find the turns of every session that hold some words (prompts, replies, tool calls)",
}

EXIT_BAD_INPUT = 2


def _available(name: str) -> bool:
    return importlib.util.find_spec(f"inspector.commands.{name}") is not None


class _Version(argparse.Action):
    """``--version``: the version and the build that runs, with the folder it runs from (a checkout's own
    folder can stand in for the installed package when Python is started there; the console script's cannot)."""

    def __init__(self, option_strings: Sequence[str], dest: str = argparse.SUPPRESS, help: str | None = None) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, help=help)

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: str | Sequence[object] | None, option_string: str | None = None) -> None:
        print(f"{parser.prog} {__version__} ({build_info()})")
        parser.exit()


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="session-inspector",
        description="See where Gemini CLI's context goes, preview and steer its compaction, apply it, undo it.",
        epilog="Without a command it opens the app: session-inspector [PATH] (a session file or a folder; "
               "default: every session under ~/.gemini/tmp), or serves it to a browser tab with "
               "--serve [--port N]. See session-inspector PATH --help.",
    )
    parser.add_argument("--version", action=_Version, help="show the version, which build of the core runs and "
                        "where it was installed, and exit")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, help_text in COMMANDS.items():
        if not _available(name):
            continue
        module = importlib.import_module(f"inspector.commands.{name}")
        command = sub.add_parser(name, help=help_text, description=help_text)
        module.add_arguments(command)
        command.set_defaults(_module=module)
    return parser


def _replace_what_the_output_cannot_encode() -> None:
    """Where stdout or stderr is not UTF-8 (``LANG=C``, ``PYTHONIOENCODING=ascii``, a Windows code
    page), a character it cannot take is written as an escape (``\\u258e``) instead of ending
    the command with a traceback; JSON output escapes it itself."""
    for stream in (sys.stdout, sys.stderr):
        if isinstance(stream, io.TextIOWrapper) and codecs.lookup(stream.encoding).name != "utf-8":
            stream.reconfigure(errors="backslashreplace")


def main(argv: Sequence[str] | None = None, *, process_ends: bool = False) -> int:
    """Run a command (or the app); its exit code.  ``process_ends``: the process ends right
    after (``entry``), so what a command held to the end (``commands.common.hold_until_exit``)
    is not let go here."""
    args_list = list(sys.argv[1:] if argv is None else argv)
    _replace_what_the_output_cannot_encode()
    if not args_list or (args_list[0] not in COMMANDS and args_list[0] not in ("-h", "--help", "--version")):
        return _run_app(args_list)
    parser = build_parser()
    args = parser.parse_args(args_list)
    if not getattr(args, "command", None):
        parser.print_help()
        return 0
    from inspector.session.errors import SessionError

    try:
        return int(args._module.run(args))
    except SessionError as exc:
        from inspector.format import visible

        print(f"session-inspector: {visible(str(exc), one_line=True)}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        print("session-inspector: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
    finally:
        if not process_ends:
            release_held()


def entry() -> None:
    """The console script: ``main``, then, after a command that held what it built to the end
    (a command that only reads), leave without freeing it."""
    code = main(process_ends=True)
    if holding():
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except (BrokenPipeError, ValueError):  # the reader went away: nothing more to say
            pass
        os._exit(code)
    raise SystemExit(code)


def _run_app(args_list: list[str]) -> int:
    if _available("app"):
        module = importlib.import_module("inspector.commands.app")
        parser = argparse.ArgumentParser(prog="session-inspector", description="Open the app.")
        module.add_arguments(parser)
        return int(module.run(parser.parse_args(args_list)))
    build_parser().print_help()
    return 0 if not args_list else EXIT_BAD_INPUT
