"""The probe benchmark: can an agent carry the work on from a snapshot and the turns kept after it?

    .venv/bin/python bench/probe.py                    # offline, every session
    .venv/bin/python bench/probe.py --serve-loopback   # the Gemini path against a local stand-in
    .venv/bin/python bench/probe.py --provider gemini  # your key or Vertex AI (sends the sessions!)
    .venv/bin/python bench/probe.py -v FILE...         # these files, each question with its score

Factory.ai's probe method (December 2025), graded by rules.  For each
session (``sample_sessions/``, and the shared real and Gemini-CLI-written
recordings when present: they are read from there, never copied here) it
runs Gemini CLI's compaction (forced; the agentic split where the reference
split leaves nothing), then writes questions from the summarised turns only
(``probe_questions``: rules that share no code with the summariser or the
quality checker), two per kind where the turns hold the material: recall,
artifact trail, continuation, decision.  A question's score is 5 x the share
of its requirements found in the snapshot or in the turns kept after it.

False statements: clauses the independent checker (``inspector.quality``)
finds the history contradicts, plus the benchmark's own checks: a quotation
of the user (in the goal, the constraints, the task state) that no prompt
holds; a command said to have ended ok whose every recorded run ended with a
non-zero exit code; a path said deleted that a later call made again.  The
size column is the snapshot's tokens as a share of the tokens it replaces
(Gemini CLI's rule: never more than 1.0).
"""

from __future__ import annotations

import argparse
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from probe_questions import KINDS, Question, questions, read_turns  # noqa: E402
from snapshot_quality import chosen_summariser, provider_arguments, run_with_provider  # noqa: E402

from inspector.compaction.summarisers.base import Summariser  # noqa: E402
from inspector.compaction.summarisers.offline import OfflineSummariser  # noqa: E402

SHARED = ROOT.parent / "shared" if (ROOT.parent / "shared").is_dir() else ROOT.parent.parent / "shared"


@dataclass(frozen=True)
class Scored:
    question: Question
    score: float
    missing: tuple[str, ...]


@dataclass(frozen=True)
class Result:
    session: str
    provider: str
    status: str
    scored: tuple[Scored, ...] = ()
    false: tuple[str, ...] = ()
    size: float | None = None
    message: str = ""
    snapshot: str = ""

    def kind(self, kind: str) -> float | None:
        scores = [s.score for s in self.scored if s.question.kind == kind]
        return sum(scores) / len(scores) if scores else None

    @property
    def overall(self) -> float | None:
        return sum(s.score for s in self.scored) / len(self.scored) if self.scored else None


def session_files() -> list[Path]:
    found = sorted(p for p in (ROOT / "sample_sessions").iterdir() if p.suffix in (".json", ".jsonl"))
    for folder in (SHARED / "gemini-cli-sessions", SHARED / "real-sessions"):
        if folder.is_dir():
            found.extend(sorted(p for p in folder.iterdir() if p.suffix in (".json", ".jsonl")))
    return found


def _strings(value: Any, out: list[str]) -> None:
    if isinstance(value, str):
        out.append(value)
    elif isinstance(value, dict):
        for item in value.values():
            _strings(item, out)
    elif isinstance(value, list):
        for item in value:
            _strings(item, out)


def flat(value: Any) -> str:
    out: list[str] = []
    _strings(value, out)
    return " ".join(" ".join(out).split()).lower()


def grade(question: Question, haystack: str) -> Scored:
    missing = tuple(group[0] for group in question.needs if not any(g in haystack for g in group))
    score = 5 * (len(question.needs) - len(missing)) / len(question.needs)
    return Scored(question, round(score, 2), missing)


_QUOTE = re.compile(r'"([^"\n]*)"')  # each pair in turn (one of fewer than 12 characters is not checked)
_OK = re.compile(r"(`+) ?(.+?) ?\1[^`;]*?(?:-> ok\b|\(its command ended ok\)|ended ok)")


def own_false(snapshot: str, older: list[dict[str, Any]]) -> list[str]:
    """The benchmark's own checks of a snapshot against the summarised turns (see the module doc)."""
    out = []
    turns = read_turns(older)
    said = " ".join(" ".join(p.split()) for _, p in turns.prompts).lower().replace('"', "'")
    everything = flat(older).replace('"', "'")
    for line in snapshot.splitlines():
        low = line.lower()
        if any(head in low for head in ("request", "the user", "goal")) or line.startswith("- \""):
            for quoted in _QUOTE.findall(line):
                for piece in quoted.lower().replace("…", "\0").split("\0"):
                    piece = piece.strip(" .")
                    if len(piece) >= 12 and piece not in said and piece not in everything:
                        out.append(f"quote not in the history: {piece[:80]!r}")
        for found in _OK.finditer(line):
            command = found.group(2).strip()
            command = command.split(" (+")[0].rstrip("…")  # a long command's first line, cut
            runs = [c for c in turns.calls if c.exit_code is not None and (
                str(c.args.get("command") or "").strip().splitlines() or [""])[0].strip().startswith(command)
                and len(command) >= len((str(c.args.get("command") or "").strip().splitlines() or [""])[0]
                                        .strip()[:199])]
            if runs and all(c.exit_code for c in runs) and "(all" not in line and "times" not in line:
                out.append(f"said ok, every run exited non-zero: {command[:80]}")
        if re.search(r"\b(deleted|removed)\b", low):
            for name in re.findall(r"`([^`\s]+)`", line):
                base = name.rstrip("/").rsplit("/", 1)[-1]
                made = [c for c in turns.calls if c.failed is False
                        and str(c.args.get("file_path") or "").endswith("/" + base)]
                gone = [c for c in turns.calls if c.failed is False and re.search(
                    rf"\brm\b[^;&|]*{re.escape(base)}", str(c.args.get("command") or ""))]
                if made and gone and made[-1].turn > gone[-1].turn and "later" not in low:
                    out.append(f"said deleted, made again later: {base}")
    return out


async def probe(path: Path, summariser: Summariser) -> Result:
    from inspector import quality
    from inspector.analysis import analyze
    from inspector.compaction.compress import CompressionStatus
    from inspector.compaction.request import CompactionRequest, compaction_context
    from inspector.compaction.strategies import run_request
    from inspector.session import load
    from inspector.tokens import estimate_contents, text_quarters

    session = load(path)
    analysis = analyze(session)
    turns = analysis.turns
    context = compaction_context(session, analysis)
    provider = str(summariser.name)
    result = await run_request(CompactionRequest(force=True), context, turns, summariser)
    if result.status is CompressionStatus.NOOP and result.split_point == 0:
        result = await run_request(CompactionRequest(force=True, agentic=True), context, turns, summariser)
    if not result.snapshot or not result.split_point:
        return Result(path.name, provider, result.status.value, message=result.message)
    older = [t.content for t in turns[: result.split_point]]
    kept = result.new_history[1:] if result.new_history else []
    haystack = result.snapshot.lower() + " " + flat(kept)
    haystack = " ".join(haystack.split())
    scored = tuple(grade(q, haystack) for q in questions(older))
    report = quality.check_snapshot(older, result.snapshot, context.statuses)
    false = [f"{c.section}: {c.reason}" for c in report.false_claims] + own_false(result.snapshot, older)
    size = text_quarters(result.snapshot) / 4 / max(1, estimate_contents(older))
    return Result(path.name, provider, result.status.value, scored, tuple(false), size, result.message,
                  result.snapshot)


def _cell(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def _name(session: str) -> str:
    return session if len(session) <= 44 else session[:20] + "…" + session[-23:]


def table(results: list[Result]) -> str:
    head = (f"{'session':44} {'provider':16} {'n':>3} " + " ".join(f"{k[:8]:>8}" for k in KINDS)
            + f" {'overall':>7} {'false':>5} {'size':>6}")
    lines = [head, "-" * len(head)]
    for r in results:
        if not r.scored:
            lines.append(f"{_name(r.session):44} {r.provider:16} {r.status}: "
                         f"{r.message[:120] or 'no question: the summarised turns hold nothing to ask'}")
            continue
        size = "-" if r.size is None else f"{r.size:.1%}"
        lines.append(f"{_name(r.session):44} {r.provider:16} {len(r.scored):>3} "
                     + " ".join(f"{_cell(r.kind(k)):>8}" for k in KINDS)
                     + f" {_cell(r.overall):>7} {len(r.false):>5} {size:>6}")
    by_provider: dict[str, list[Result]] = {}
    for r in results:
        by_provider.setdefault(r.provider, []).append(r)
    lines.append("-" * len(head))
    for provider, rows in by_provider.items():
        scored = [s for r in rows for s in r.scored]
        kinds = []
        for kind in KINDS:
            of = [s.score for s in scored if s.question.kind == kind]
            kinds.append(sum(of) / len(of) if of else None)
        overall = sum(s.score for s in scored) / len(scored) if scored else None
        sizes = [r.size for r in rows if r.size is not None]
        lines.append(f"{'ALL (mean over questions)':44} {provider:16} {len(scored):>3} "
                     + " ".join(f"{_cell(k):>8}" for k in kinds)
                     + f" {_cell(overall):>7} {sum(len(r.false) for r in rows):>5} "
                     f"{max(sizes, default=0):>6.1%}")
    return "\n".join(lines)


async def run(args: argparse.Namespace, base_url: str | None) -> list[Result]:
    files = [Path(f) for f in args.files] or session_files()
    out = []
    for path in files:
        summariser = chosen_summariser(args, base_url)
        if args.grow and isinstance(summariser, OfflineSummariser):
            summariser = OfflineSummariser(grow=True)
        try:
            result = await probe(path, summariser)
        except Exception as exc:  # a file that cannot be read is a row, not the end of the run
            result = Result(path.name, str(summariser.name), "ERROR", message=f"{type(exc).__name__}: {exc}")
        if args.serve_loopback:
            result = Result(result.session, f"{result.provider}-loopback", result.status, result.scored,
                            result.false, result.size, result.message, result.snapshot)
        out.append(result)
    return out


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    provider_arguments(parser)
    parser.add_argument("-v", "--verbose", action="store_true", help="each question, its score and what it missed")
    parser.add_argument("--show", action="store_true", help="print each snapshot")
    parser.add_argument("--grow", action="store_true",
                        help="offline: let the budget grow to hold the goal, rules, earlier snapshot and open failures")
    args = parser.parse_args(argv)
    results = run_with_provider(parser, args, run)
    print(table(results))
    for r in results:
        if args.verbose:
            for s in r.scored:
                print(f"{r.session} [{s.question.kind}] {s.question.text} -> {s.score:.1f}"
                      + (f" missing {', '.join(s.missing)}" if s.missing else ""))
        if args.show and r.snapshot:
            print(f"==== {r.session} [{r.provider}]\n{r.snapshot}")
        for claim in r.false:
            print(f"FALSE {r.session} [{r.provider}]: {claim}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
