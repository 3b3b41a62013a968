"""What ``analyze`` says of an Antigravity transcript: its steps, its checkpoints and what each forgot.

One ``TranscriptReport`` is computed once; ``to_json`` is ``analyze --json``
and ``text_lines`` the printed report, so both faces (and the app, which reads
the same object) show the same figures.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

from inspector.antigravity.checkpoints import (
    Checkpoint,
    Gauge,
    checkpoints,
    context_after,
    replaced_positions,
)
from inspector.antigravity.compaction_point import DEFAULT_COMPACTION_POINT
from inspector.antigravity.session import conversation_id
from inspector.antigravity.transcript import Transcript
from inspector.format import share_bar

TOKEN_ESTIMATE = ("Gemini CLI's chars-based estimate (a quarter token per ASCII character, 1.5 per other, "
                  "JSON length / 4 for a call's arguments): Antigravity records no token usage in a transcript")
STEPS_SHOWN = 12  # steps listed without --all: the first and last few, and every checkpoint
LOST_SHOWN = 8  # lost facts listed per checkpoint without --all
PREVIEW_LINES = 3  # lines of each summary section shown


@dataclass(frozen=True)
class TranscriptReport:
    transcript: Transcript
    checkpoints: tuple[Checkpoint, ...]
    context: tuple[int, ...]  # per step: the context estimate once it is in
    gauge: Gauge
    replaced_by: dict[int, int]  # step position -> the position of the checkpoint that replaced it

    def checkpoint_at(self, position: int) -> Checkpoint | None:
        return next((c for c in self.checkpoints if c.position == position), None)

    def number_of(self, position: int) -> int | None:
        found = self.checkpoint_at(position)
        return found.number if found is not None else None

    def to_json(self) -> dict[str, Any]:
        t = self.transcript
        steps = []
        for position, step in enumerate(t.steps):
            row = step.to_json()
            row["context_tokens"] = self.context[position]
            replacing = self.replaced_by.get(position)
            row["replaced_by_checkpoint"] = self.number_of(replacing) if replacing is not None else None
            steps.append(row)
        return {
            "format": "antigravity",
            "path": str(t.path),
            "conversation_id": conversation_id(t.path),
            "read_only": True,
            "token_estimate": TOKEN_ESTIMATE,
            "step_count": len(t.steps),
            "steps": steps,
            "step_types": dict(Counter(s.kind for s in t.steps).most_common()),
            "total_estimated_tokens": t.total_tokens,
            "context": self.gauge.to_json(),
            "checkpoints": [c.to_json() for c in self.checkpoints],
            "warnings": [w.to_json() for w in t.warnings],
        }


def report_of(transcript: Transcript, compaction_point: int = DEFAULT_COMPACTION_POINT) -> TranscriptReport:
    found = tuple(checkpoints(transcript))
    context = tuple(context_after(transcript.steps))
    return TranscriptReport(transcript, found, context, Gauge(context[-1] if context else 0, compaction_point),
                            replaced_positions(found))


def checkpoint_lines(checkpoint: Checkpoint, *, show_all: bool = False, more: str = "--all, or --json") -> list[str]:
    """One checkpoint: its figures, what it forgot, its summary's sections (a preview), what changed
    since the previous one (``more``: how to see the lost facts left out)."""
    r = checkpoint.report
    step = checkpoint.step
    first, last = checkpoint.replaced_lines or (None, None)
    span = f"lines {first}-{last}" if first is not None else "no earlier step in the file"
    out = [f"CHECKPOINT {checkpoint.number if checkpoint.number is not None else '?'}  step {step.step_index}  "
           f"line {step.line}  summary {checkpoint.tokens:,} tokens  replaced "
           f"{checkpoint.replaced[1] - checkpoint.replaced[0]:,} steps ({span}) / "
           f"{checkpoint.replaced_tokens:,} tokens",
           f"  fact recall {r.recall:.0%} ({r.kept} of {r.total} kept)  "
           + "  ".join(f"{kind} {v['kept']}/{v['total']}" for kind, v in r.by_kind().items())]
    lost = r.lost
    if lost:
        out.append(f"  lost facts ({len(lost)}):")
        shown = lost if show_all else lost[:LOST_SHOWN]
        out.extend(f"    {fact.kind:<10} {fact.value[:200]}" for fact in shown)
        if len(shown) < len(lost):
            out.append(f"    … and {len(lost) - len(shown)} more ({more})")
    for claim in r.false_claims[: None if show_all else 3]:
        out.append(f"  false claim: {claim.line[:200]}  ({claim.reason})")
    out.append("  summary sections:")
    for section in checkpoint.summary.sections:
        lines = section.lines
        out.append(f"  [{section.name}] {len(lines)} lines")
        out.extend(f"    {line[:160]}" for line in lines[:PREVIEW_LINES])
    if checkpoint.changes is not None:
        counts = checkpoint.changes.counts()
        out.append(f"  since the previous checkpoint: +{counts['added']} -{counts['removed']} lines, "
                   f"{counts['unchanged']} unchanged")
        for change in checkpoint.changes.sections:
            if change.status != "unchanged":
                out.append(f"    [{change.name}] {change.status}: +{len(change.added)} -{len(change.removed)}")
    return out


def text_lines(report: TranscriptReport, *, show_all: bool = False) -> list[str]:
    t = report.transcript
    g = report.gauge
    out = [f"{t.path.name}  antigravity (read only)",
           f"  conversation: {conversation_id(t.path)}",
           f"steps: {len(t.steps):,}   estimated tokens: {t.total_tokens:,} (estimate: chars-based, as Gemini CLI's; "
           "Antigravity records no usage)",
           f"context: {g.tokens:,} / {g.compaction_point:,} ({g.share:.1%} of Antigravity's compaction point)  "
           f"{share_bar(min(g.share, 1.0), 20)}",
           f"checkpoints: {len(report.checkpoints)}"]
    for checkpoint in report.checkpoints:
        out.append("")
        out.extend(checkpoint_lines(checkpoint, show_all=show_all))
    out.append("")
    out.append(f"{'line':>6} {'step':>6} {'source':<13} {'type':<20} {'tokens':>8} {'context':>8}  ")
    positions = range(len(t.steps))
    if not show_all and len(t.steps) > STEPS_SHOWN:
        edge = STEPS_SHOWN // 2
        keep = set(range(edge)) | set(range(len(t.steps) - edge, len(t.steps)))
        keep |= {c.position for c in report.checkpoints}
        positions = sorted(keep)  # type: ignore[assignment]
    last = -1
    for position in positions:
        if position != last + 1:
            out.append(f"{'…':>6}")
        last = position
        step = t.steps[position]
        mark = ""
        if step.kind == "CHECKPOINT":
            mark = f"◆ checkpoint {report.number_of(position)}"
        elif position in report.replaced_by:
            mark = f"replaced by checkpoint {report.number_of(report.replaced_by[position])}"
        code = f" exit {step.exit_code}" if step.exit_code is not None else ""
        out.append(f"{step.line:>6} {step.step_index if step.step_index is not None else '?':>6} {step.source:<13} "
                   f"{step.kind[:20]:<20} {step.tokens:>8,} {report.context[position]:>8,}  {mark}{code}")
    return out


def print_report(report: TranscriptReport, *, as_json: bool, show_all: bool) -> None:
    """``analyze`` on a transcript: the JSON object, or the report with session text made visible."""
    from inspector.commands.common import print_json
    from inspector.commands.output import say_warnings
    from inspector.format import visible

    if as_json:
        print_json(report.to_json())
        return
    for line in text_lines(report, show_all=show_all):
        print(visible(line, one_line=True))
    say_warnings(report.transcript.path, list(report.transcript.warnings))
