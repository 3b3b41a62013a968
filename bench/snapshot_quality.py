"""Snapshot quality, measured independently of the summarisers, per session and provider.

    .venv/bin/python bench/snapshot_quality.py                      # offline, every session
    .venv/bin/python bench/snapshot_quality.py --serve-loopback     # the Gemini path against a local stand-in
    .venv/bin/python bench/snapshot_quality.py --provider gemini    # your key or Vertex AI (sends the sessions!)
    .venv/bin/python bench/snapshot_quality.py --provider gemini --base-url http://127.0.0.1:8080
    .venv/bin/python bench/snapshot_quality.py FILE...              # only these files

Sessions: ``sample_sessions/``, the shared real and Gemini-CLI-written
recordings when present (``../shared/real-sessions``,
``../shared/gemini-cli-sessions``), and planted-fact sessions generated into
``bench/out/planted/`` (their answers are known, so the fact extractor is
checked too: column ``ext``, facts it missed or made up, must be 0).

Columns: recall per kind of fact (path, command, error, constraint, step,
previous; "-" where the session has none), ``p+c`` (paths and commands with
their outcome: target 0.95), ``false`` (clauses the history contradicts:
target 0), ``size`` (snapshot tokens as a share of the tokens replaced:
the offline snapshot takes 15%, more only where that cannot hold the goal,
rules and an earlier snapshot, and never what it replaces).  Below the table, each session whose
snapshot could not hold every line says which kinds of line were left out
(the kind dropped first first) and the recall that leaves.

``--serve-loopback`` starts the test suite's Gemini-compatible server
(``tests/gemini_server.py``) on 127.0.0.1 and runs the Gemini provider
against it: the real google-genai client, the real requests (the
compression prompt, the draft and the verification call), the real parsing
of the answers.  The server's stand-in for a model answers each call with
the offline digest of the turns it was sent, without the recorded tool
statuses (a model does not see them either).  So those rows measure the
Gemini path end to end and how its answers grade, not a model's judgement;
only ``--provider gemini`` with a key does that.  Nothing is written except
the planted sessions.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any, TypeVar

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from inspector.compaction.prompts import VERIFY_REQUEST, anchor_text  # noqa: E402
from inspector.compaction.summarisers import DEFAULT_MODEL, choose_provider, pick_summariser  # noqa: E402
from inspector.compaction.summarisers.base import Summariser  # noqa: E402
from inspector.compaction.summarisers.gemini import GeminiSummariser  # noqa: E402
from inspector.compaction.summarisers.offline import RATIO, OfflineSummariser  # noqa: E402
from inspector.quality.evaluate import TARGET_KINDS, Row, evaluate  # noqa: E402
from inspector.quality.ground import KINDS  # noqa: E402
from inspector.quality.planted import Planted, planted_sessions  # noqa: E402

SHARED = ROOT.parent / "shared" if (ROOT.parent / "shared").is_dir() else ROOT.parent.parent / "shared"
T = TypeVar("T")
LOOPBACK_KEY = "loopback-stand-in-not-a-key"  # only ever sent to 127.0.0.1


def session_files() -> list[Path]:
    found = sorted(p for p in (ROOT / "sample_sessions").iterdir() if p.suffix in (".json", ".jsonl"))
    for folder in (SHARED / "gemini-cli-sessions", SHARED / "real-sessions"):
        if folder.is_dir():
            found.extend(sorted(p for p in folder.iterdir() if p.suffix in (".json", ".jsonl")))
    return found


def planted_files(count: int) -> list[tuple[Path, list[Planted]]]:
    out = ROOT / "bench" / "out" / "planted"
    return [(s.write(out), s.answers) for s in planted_sessions(count)]


def _cell(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def _name(session: str) -> str:
    return session if len(session) <= 44 else session[:20] + "…" + session[-23:]


def table(rows: list[Row]) -> str:
    head = f"{'session':44} {'provider':15} " + " ".join(f"{k[:5]:>5}" for k in KINDS) + \
        f" {'p+c':>5} {'false':>5} {'size':>6} {'ext':>4} {'secs':>6}"
    lines = [head, "-" * len(head)]
    for row in rows:
        if not row.replaced_tokens:
            lines.append(f"{_name(row.session):44} {row.provider:15} {row.status}: {row.message}")
            continue
        size = f"{row.size_share:.1%}" if row.size_share is not None else "-"
        ext = "-" if row.extractor_misses is None else str(row.extractor_misses)
        lines.append(f"{_name(row.session):44} {row.provider:15} "
                     + " ".join(f"{_cell(row.recall_of(k)):>5}" for k in KINDS)
                     + f" {_cell(row.target_recall):>5} {len(row.false_claims):>5} {size:>6} {ext:>4}"
                     f" {row.seconds:>6.2f}")
    return "\n".join(lines)


def dropped(rows: list[Row]) -> str:
    """Per session whose snapshot left lines out: which kinds (dropped first first), and the recall left."""
    lines = []
    for row in rows:
        if not row.omitted:
            continue
        kinds = ", ".join(f"{count:,} {kind}" for kind, count in row.omitted)
        recall = " ".join(f"{k}={_cell(row.recall_of(k))}" for k in KINDS if row.recall_of(k) is not None)
        lines.append(f"{_name(row.session):44} {row.provider:15} {row.replaced_tokens:>7,} tokens -> budget "
                     f"{row.budget_tokens or 0:>5,}: left out {kinds}; recall {recall or '-'}")
    if lines:
        return "\n".join(lines)
    if any(r.replaced_tokens and r.budget_tokens is None for r in rows):
        return "(not reported: these snapshots were not written by the offline summariser)"
    return "(every snapshot held every line)"


def stand_in_answer(body: Any) -> Any:
    """The loopback server's stand-in model: the offline digest of the turns a call sent.

    For the verification call it first writes the draft on the same turns, so that, like the
    offline summariser's own second call, it adds back what the draft's smaller budget left out."""
    from tests.gemini_server import reply

    contents = body.get("contents") if isinstance(body, dict) else None
    if not isinstance(contents, list) or not contents:
        return reply("")
    summariser = OfflineSummariser()
    last = contents[-1].get("parts") or []
    if last and str(last[0].get("text", "")).startswith(VERIFY_REQUEST) and len(contents) >= 3:
        history = contents[:-2]
        previous = any("<state_snapshot>" in str(p.get("text", "")) for c in history for p in c.get("parts") or [])
        draft_request = {"role": "user", "parts": [{"text": anchor_text(previous)}, *last[1:]]}
        summariser.summarise_sync([*history, draft_request])
    return reply(summariser.summarise_sync(contents))


@contextmanager
def loopback() -> Iterator[str]:
    """The test suite's Gemini-compatible server on 127.0.0.1, answering with the stand-in; yields its URL."""
    from tests.gemini_server import GeminiServer

    with GeminiServer(answer=stand_in_answer) as server:
        yield server.url


async def run(args: argparse.Namespace, base_url: str | None) -> list[Row]:
    jobs: list[tuple[Path, list[Planted] | None]] = []
    if args.files:
        jobs = [(Path(f), None) for f in args.files]
    else:
        jobs = [(p, None) for p in session_files()] + [(p, a) for p, a in planted_files(args.planted)]
    rows = []
    for path, answers in jobs:
        summariser = chosen_summariser(args, base_url)
        try:
            row = await evaluate(path, summariser, planted=answers)
        except Exception as exc:  # a file that cannot be read is a row, not the end of the run
            row = Row(path.name, str(summariser.name), "ERROR", message=f"{type(exc).__name__}: {exc}")
        rows.append(replace(row, provider=f"{row.provider}-loopback") if args.serve_loopback else row)
    return rows


def provider_arguments(parser: argparse.ArgumentParser) -> None:
    """The files and who summarises them, as both benchmarks (this one and probe.py) take them."""
    parser.add_argument("files", nargs="*")
    parser.add_argument("--provider", choices=("offline", "gemini", "auto"), default="offline")
    parser.add_argument("--base-url", help="send Gemini requests here (a proxy, a local server)")
    parser.add_argument("--serve-loopback", action="store_true",
                        help="run the Gemini provider against a stand-in on 127.0.0.1 (see snapshot_quality.py)")


def chosen_summariser(args: argparse.Namespace, base_url: str | None) -> Summariser:
    """The summariser the arguments ask for: Gemini at the loopback stand-in, or the provider named."""
    if args.serve_loopback:
        return GeminiSummariser(DEFAULT_MODEL, api_key=LOOPBACK_KEY, base_url=base_url)
    return pick_summariser(args.provider, base_url=base_url)


def run_with_provider(parser: argparse.ArgumentParser, args: argparse.Namespace,
                      run: Callable[[argparse.Namespace, str | None], Awaitable[list[T]]]) -> list[T]:
    """``run`` with the Gemini URL the arguments give: the loopback stand-in's (started here), or --base-url;
    says first who writes the snapshots (both benchmarks)."""
    if args.serve_loopback:
        if args.base_url:
            parser.error("--serve-loopback starts its own server; leave out --base-url")
        args.provider = "gemini"
        with loopback() as url:
            print(f"provider: gemini through the loopback stand-in at {url} (nothing leaves this machine)")
            return asyncio.run(run(args, url))
    choice = choose_provider(args.provider)
    print(f"provider: {choice.provider} ({choice.reason})")
    return asyncio.run(run(args, args.base_url))


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    provider_arguments(parser)
    parser.add_argument("--planted", type=int, default=6, help="how many planted-fact sessions to generate")
    parser.add_argument("--claims", action="store_true", help="list every false claim")
    args = parser.parse_args(argv)
    rows = run_with_provider(parser, args, run)
    print(table(rows))
    for row in rows:
        for claim in row.false_claims if args.claims else ():
            print(f"{row.session} [{row.provider}] {claim.section}: {claim.reason}\n    {claim.line[:200]}")
    print(f"\nLines left out to stay within the budget ({RATIO:.0%} of the tokens replaced, grown where that "
          "cannot hold the goal, rules and earlier snapshot):")
    print(dropped(rows))
    graded = [r for r in rows if r.replaced_tokens]
    below = [r for r in graded if r.target_recall is not None and r.target_recall < 0.95]
    budgeted = [r for r in below if r.budget_tokens is not None]  # a summariser that reports its budget
    roomy = [r for r in budgeted if not r.omitted]  # under 0.95 although nothing had to be left out
    over = [r for r in graded if (r.size_share or 0) > RATIO]
    inflated = [r for r in graded if (r.size_share or 0) >= 1]  # Gemini CLI's rule: never what it replaces
    fitted = f"{len(roomy):,} where every line fitted" if len(budgeted) == len(below) else "no budget reported"
    print(f"\n{len(graded):,} sessions graded; false claims: {sum(len(r.false_claims) for r in graded):,}; "
          f"{'+'.join(TARGET_KINDS)} recall under 0.95: {len(below):,} ({fitted}); "
          f"snapshot over {RATIO:.0%}: {len(over):,} (the budget grown); "
          f"as large as what it replaces: {len(inflated):,}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
