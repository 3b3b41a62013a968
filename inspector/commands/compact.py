"""``session-inspector compact FILE``: run the compaction and show it, writing nothing.

Exit 0 when the result is COMPRESSED, NOOP or CONTENT_TRUNCATED, 1 when the
compression failed, 2 for bad input.  ``--apply`` hands a COMPRESSED result
to ``inspector.commands.apply``.
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from inspector.commands.common import add_session_arguments, number, print_json
from inspector.commands.output import (
    SNAPSHOT_LINES_SHOWN,
    Fields,
    print_snapshot,
    say,
    say_error,
    say_warnings,
    terminal_console,
    usable_provider,
)
from inspector.compaction.stage_words import stage_table, stages_sum
from inspector.format import (
    before_after,
    count_text,
    diff_counts,
    plural,
    split_words,
    turn_span,
    visible,
)

if TYPE_CHECKING:
    from inspector.compaction.compress import CompressionResult
    from inspector.compaction.snapshot import SnapshotDiff
    from inspector.compaction.summarisers.usage import TokenUsage
    from inspector.progress import Progress, Reporter
    from inspector.session.loader import Session

EXIT_FAILED = 1
EXIT_BAD_INPUT = 2


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_session_arguments(parser)
    parser.add_argument("--provider", choices=("auto", "gemini", "gemini-cli", "offline"), default="auto",
                        help="who writes the snapshot: Gemini (needs a key), your own Gemini CLI (signed in with "
                             "Google, no key), or the offline summariser (default: auto = gemini when "
                             "GEMINI_API_KEY/GOOGLE_API_KEY or Vertex settings exist, else gemini-cli when gemini is "
                             "on PATH and signed in with Google, else offline)")
    parser.add_argument("--gemini-cli", metavar="PATH",
                        help="the Gemini CLI to run for --provider gemini-cli (default: gemini on PATH)")
    parser.add_argument("--base-url", help="send Gemini requests to this endpoint instead (a proxy, a local server)")
    parser.add_argument("--split", type=int, help="start the kept part at this turn (must be a valid split point)")
    parser.add_argument("--agentic", action="store_true",
                        help="split before a model turn (the 70%% point among those): compacts long one-prompt agent "
                             "runs, where the reference's only split point is 0")
    parser.add_argument("--strategy", choices=("reference", "staged"), default="reference",
                        help="reference: Gemini CLI's compaction; staged: drop repeats, prune old tool output, "
                             "dedupe file reads, summarise, then window - cheapest first, until the target fits")
    parser.add_argument("--target", type=_target,
                        help="staged: the size to reach, a fraction of the window (0.2) or tokens (30000); "
                             "default 30%% of the current size, at most a quarter of the window")
    parser.add_argument("--compare", action="store_true",
                        help="run both strategies on the same history and split and show them side by side")
    parser.add_argument("--force", action="store_true", help="compress even below the threshold (like /compress)")
    parser.add_argument("--instruction", help="a focus for the summary, sent as your request after the standard one")
    parser.add_argument("--prompt-file", help="use this file as the system prompt instead of the built-in one")
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds to wait for each Gemini call")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of a report")
    parser.add_argument("--apply", action="store_true", help="write a COMPRESSED result to the session (undo: revert)")
    parser.add_argument("--min-recall", type=_fraction, default=None, metavar="FRACTION",
                        help="--apply refuses a snapshot that keeps less than this share of the facts the "
                             "independent check finds (0.8 or 80%%; default 80%%, which --force answers; "
                             "0 applies any)")


_target = number(float, lambda v: v > 0, "must be above 0")  # (the core's rule: request.target_problem)


def run(args: argparse.Namespace) -> int:
    import asyncio

    from inspector.antigravity import refuse_path
    from inspector.compaction.compress import InvalidSplit
    from inspector.compaction.prompts import PromptFileError, load_prompt_file
    from inspector.compaction.request import CompactionRequest, RequestError, compaction_context
    from inspector.compaction.strategies import compare, run_request
    from inspector.compaction.summarisers import pick_summariser
    from inspector.configured import analyse_configured
    from inspector.progress import load_showing_progress

    system_prompt = None
    if args.prompt_file:
        try:
            system_prompt = load_prompt_file(args.prompt_file)
        except PromptFileError as exc:
            say_error(str(exc))
            return EXIT_BAD_INPUT
    if args.apply and (read_only := refuse_path(args.file)) is not None:  # an Antigravity transcript
        say_error(read_only)
        return EXIT_BAD_INPUT
    if args.compare and args.apply:
        print("session-inspector: --compare shows both strategies; apply one with --strategy NAME --apply",
              file=sys.stderr)
        return EXIT_BAD_INPUT
    try:
        request = CompactionRequest(
            strategy=args.strategy, split=args.split, agentic=args.agentic, target=args.target,
            provider=args.provider, model=args.model, base_url=args.base_url, timeout=args.timeout,
            instruction=args.instruction, system_prompt=system_prompt, force=args.force, compare=args.compare,
            gemini_cli=args.gemini_cli,
        )
    except RequestError as exc:
        say_error(str(exc))
        return EXIT_BAD_INPUT
    choice = usable_provider(request.provider, request.gemini_cli)  # said before anything is sent
    if choice is None:
        return EXIT_BAD_INPUT
    if args.apply:  # before any work (or any request to Gemini): never the store's own files
        from inspector.store.apply import refuse_store_file

        refuse_store_file(args.file)
    session = load_showing_progress(args.file)
    if args.apply:
        from inspector.store.apply import refuse_unread_lines

        refuse_unread_lines(session)
    analysis = analyse_configured(session, request.model, args.threshold).analysis
    unused = request.unused_below_threshold(analysis.context.below_threshold())
    if unused:
        say_error(f"{args.file}: {unused}")
        return EXIT_BAD_INPUT
    context = compaction_context(session, analysis)
    turns = analysis.turns
    summariser = pick_summariser(request.provider, model=context.model, base_url=request.base_url,
                                 timeout=request.timeout, gemini_cli=request.gemini_cli)
    reporter = retries_said()
    try:
        if request.compare:
            comparison = asyncio.run(compare(request, context, turns, summariser, reporter))
        else:
            result = asyncio.run(run_request(request, context, turns, summariser, reporter))
    except InvalidSplit as exc:
        say_error(f"{args.file}: {exc}")
        return EXIT_BAD_INPUT
    if args.compare:
        from inspector.commands.compare import print_comparison

        if args.json:
            print_json({"path": str(session.path), "format": session.format, "compare": comparison.to_json()})
        else:
            print_comparison(session, comparison, analysis.context)
        return EXIT_FAILED if all(r.status.failed for r in comparison.results.values()) else 0

    code = EXIT_FAILED if result.status.failed or result.snapshot_problem else 0
    refusal = result.apply_refusal() if args.apply else None
    forced_note: str | None = None
    if args.apply and refusal is None and result.facts is not None:
        from inspector.quality.forgetting import MIN_RECALL, forgetting

        forgets = forgetting(result.facts, MIN_RECALL if args.min_recall is None else args.min_recall)
        # The apply question: what it forgets, always said; under the threshold refused, unless --force
        # answers it (a --min-recall the user gave holds even then).
        if forgets.below and (args.min_recall is not None or not args.force):
            refusal = (f"{forgets.refusal()} (--force, or a lower --min-recall, applies it anyway). "
                       f"{forgets.sentence()}")
            code = EXIT_FAILED
        elif forgets.below:  # said once it is written
            forced_note = f"{args.file}: applied with --force although {forgets.refusal()}. {forgets.sentence()}"
    if refusal is not None:
        say_error(f"{args.file}: nothing was written: {refusal}")
    if args.json:
        report = {"path": str(session.path), "format": session.format, **result.to_json(),
                  "provider_choice": choice.to_json(), "summariser_tokens": _json_tokens(summariser),
                  "draft_final_diff": _draft_diff(result).to_json() if result.snapshot else None}
        if args.apply:  # what was written (or why not) in the same object, after the write
            from inspector.commands.apply import Applied, apply_to_disk

            applied = apply_to_disk(session, turns, result) if refusal is None else \
                Applied(None, f"nothing was written: {refusal}", code)
            if applied.entry is None and refusal is None:  # a store refusal names the file itself
                say_error(applied.refusal or "")
            report["applied"] = applied.to_json(session.path)
            code = applied.code
            if applied.entry is not None and forced_note is not None:
                say(forced_note, file=sys.stderr)
        print_json(report)
        return code
    print_report(session, result, len(turns), applying=args.apply,
                 provider=f"provider: {choice.label()}: {choice.reason}", before_note=analysis.context.before_note(
                     result.original_token_count), reported_tokens=_tokens_words(summariser))
    say_warnings(session.path, session.warnings)
    if args.apply and refusal is None:
        from inspector.commands.apply import apply_from_cli

        code = apply_from_cli(session, turns, result)
        if code == 0 and forced_note is not None:
            say(forced_note, file=sys.stderr)
    return code


def _tokens(summariser: object) -> TokenUsage | None:
    """The tokens the summariser's model reported (``usage.Metered``); None when it reports none."""
    from inspector.compaction.summarisers.usage import Metered

    return summariser.usage if isinstance(summariser, Metered) else None


def _json_tokens(summariser: object) -> dict[str, int] | None:
    usage = _tokens(summariser)
    return usage.to_json() if usage is not None else None


def _tokens_words(summariser: object) -> str | None:
    from inspector.compaction.summarisers.usage import Metered

    usage = _tokens(summariser)
    return usage.words(summariser.metered_by) if usage is not None and isinstance(summariser, Metered) else None


def _fraction(text: str) -> float:
    try:
        value = float(text.rstrip("%")) / (100 if text.endswith("%") else 1)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not 0 <= value <= 1:
        raise argparse.ArgumentTypeError(f"{text} is not a share between 0 and 1 (or 0% and 100%)")
    return value


def retries_said() -> Reporter:
    """A reporter that says each retry of a summariser call on stderr as it starts waiting (a 429's
    backoff is seconds of silence otherwise); every other stage stays quiet, as before."""
    from inspector.compaction.summarisers.base import RETRY_STAGE
    from inspector.progress import Reporter

    def on_progress(progress: Progress) -> None:
        if progress.stage.startswith(RETRY_STAGE):
            say_error(progress.stage.removeprefix(RETRY_STAGE))

    return Reporter(on_progress=on_progress)


def _draft_diff(result: CompressionResult) -> SnapshotDiff:
    from inspector.compaction.snapshot import diff

    return diff(result.draft_snapshot or "", result.snapshot or "")


def print_report(session: Session, result: CompressionResult, turn_count: int, *, applying: bool = False,
                 provider: str | None = None, before_note: str = "", reported_tokens: str | None = None) -> None:
    """The readable report of a compaction of a history of ``turn_count`` turns; ``provider``: why
    this summariser, said first; ``before_note``: why "before" is not the history's total
    (``ContextFigures.before_note``)."""
    from rich.rule import Rule
    from rich.text import Text

    from inspector.commands.diff import render_diff

    console = terminal_console()
    if provider is not None:
        console.print(Fields(visible(provider)))
    ok = not result.status.failed
    console.print(Fields(Text(visible(session.path.name, one_line=True), "bold"), session.format,
                         f"strategy: {result.strategy}", f"provider: {result.provider}",
                         f"model: {visible(result.model or '-', one_line=True)}"))
    console.print(Text.assemble("status: ", (result.status.value, "bold green" if ok else "bold red")))
    if result.message:
        console.print(Fields(Text(visible(result.message), "yellow" if ok else "red"), margin=2, indent=0))
    if result.snapshot_problem:
        console.print(Fields(Text(f"not appliable: {result.snapshot_problem}", "red"), margin=2, indent=0))
    if result.agentic_alternative:
        console.print(Fields(Text(f"--agentic splits before model turn {result.agentic_alternative:,} instead and "
                                  f"summarises {turn_span(0, result.agentic_alternative)}", "yellow"),
                             margin=2, indent=0))
    recorded = () if result.recorded_prompt_tokens is None else \
        (f"recorded last prompt: {count_text(result.recorded_prompt_tokens)}",)
    tokens = before_after(result.original_token_count, result.new_token_count, change=True)
    console.print(Fields(f"tokens (estimate): {tokens}", *recorded, gap=3))
    if before_note:
        console.print(Fields(Text(before_note, "dim"), margin=2, indent=0))
    if reported_tokens:
        console.print(Fields(reported_tokens, margin=2, indent=0))
    if result.split_point is not None:
        got = (f"(summariser got the {result.summarised_with} turns)",) if result.summarised_with else ()
        console.print(Fields(*split_words(result.split_point, result.split_kind, turn_count), *got, gap=1))
    if result.stages:
        console.print(Text("stages", "italic"))
        console.print(stage_table(result.stages))
        console.print(Text(stages_sum(result.stages), "dim"))
    if result.truncations:
        folder = visible(result.truncations[0].output_file.rsplit("/", 2)[0], one_line=True)
        console.print(Fields(f"tool-output budget: {plural(len(result.truncations), 'output')} cut to an excerpt",
                             f"(full text would be saved under {folder})", gap=1))
    if result.facts is not None:
        report = result.facts
        console.print(f"fact recall: {report.recall:.1%} ({report.kept:,} of {report.total:,})")
        for fact in report.lost[:20]:
            console.print(Text("  lost ", "red") + Text(visible(f"{fact.kind}: {fact.value}", one_line=True)))
        if len(report.lost) > 20:
            console.print(Text(f"  ... and {len(report.lost) - 20:,} more (see --json)", "dim"))
        for claim in report.false_claims[:20]:
            console.print(Text("  false claim ", "red") + Text(visible(f"{claim.reason}: {claim.line}",
                                                                        one_line=True)))
    if result.provenance is not None and result.provenance.focus_note:
        console.print(Text(visible(result.provenance.focus_note), "yellow"))
    if result.provenance is not None and result.provenance.omitted_text():
        console.print(Text(visible(result.provenance.omitted_text() or ""), "yellow"))
    if result.snapshot:
        console.print(Rule("final snapshot"))
        print_snapshot(console, result.snapshot)
        console.print(Rule("draft -> final"))
        if result.verification_note:
            console.print(Text(result.verification_note, "yellow"))
        elif max(len(result.snapshot.split("\n")), len((result.draft_snapshot or "").split("\n"))) \
                > SNAPSHOT_LINES_SHOWN:  # a runaway answer: its counts, not hundreds of thousands of lines
            counts = _draft_diff(result).counts()
            added, removed, unchanged = diff_counts(counts["added"], counts["removed"], counts["unchanged"])
            console.print(Text.assemble(("draft -> final: ", "bold"), (added, "green"), " ", (removed, "red"), " ",
                                        (unchanged, "dim"), (" (the lines: --json, draft_final_diff)", "dim")))
        else:
            render_diff(console, _draft_diff(result), old_label="draft", new_label="final")
    if not applying:
        console.print(f"took {result.duration_seconds:.2f} s; nothing was written"
                      + ("" if result.apply_refusal() else " (use --apply to write it)"))
