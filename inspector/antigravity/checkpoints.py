"""Antigravity's compactions (CHECKPOINT steps): what each replaced, what it kept and what it forgot.

A CHECKPOINT step's content begins ``{{ CHECKPOINT N }}``, then a fixed
sentence that the earlier parts were truncated, then a Markdown summary.  The
steps it replaced are taken to be those after the previous checkpoint (or the
start of the file) and before it: the summary stands for them.  The previous
summary is not graded again (its own checkpoint was graded against the steps
it replaced); how the two summaries differ is the diff below.

The summary is graded with the project's own independent fact check
(``inspector.quality.check_snapshot``) against those steps, presented as the
history the checker reads (``history.checker_history``); successive summaries
are compared section by section with the snapshot diff
(``compaction.snapshot.diff``), the Markdown headings standing for sections.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from inspector.antigravity.compaction_point import DEFAULT_COMPACTION_POINT
from inspector.antigravity.history import CheckerHistory, checker_history
from inspector.antigravity.transcript import CHECKPOINT, Step, Transcript
from inspector.compaction.snapshot import Section, Snapshot, SnapshotDiff, diff
from inspector.quality import Report, check_snapshot

_HEADING = re.compile(r"^ {0,3}#{1,6}[ \t]+(.+?)[ \t]*#*[ \t]*$")
_FENCE = re.compile(r"^ {0,3}(```|~~~)")
_HEAD = re.compile(r"\A\s*\{\{\s*CHECKPOINT\s+\d+\s*\}\}[^\n]*\n?")


def summary_sections(text: str) -> Snapshot:
    """A checkpoint's summary split at its Markdown headings (outside code fences), as a snapshot's
    sections: the heading's words name the section; text before the first heading is the preamble."""
    body = _HEAD.sub("", text, count=1)
    preamble: list[str] = []
    sections: list[tuple[str, list[str]]] = []
    fenced = False
    for line in body.split("\n"):
        if _FENCE.match(line):
            fenced = not fenced
        heading = None if fenced else _HEADING.match(line)
        if heading is not None:
            sections.append((heading.group(1).rstrip(":").strip(), []))
        elif sections:
            sections[-1][1].append(line)
        else:
            preamble.append(line)
    merged: dict[str, list[str]] = {}
    for name, lines in sections:
        merged.setdefault(name, []).extend(lines)  # a repeated heading: one section, as the snapshot parser joins
    return Snapshot(tuple(Section(name, "\n".join(lines)) for name, lines in merged.items()),
                    preamble="\n".join(preamble).strip(), found=bool(sections), raw=text)


@dataclass(frozen=True)
class Checkpoint:
    number: int | None  # N of ``{{ CHECKPOINT N }}``
    position: int  # its place among the transcript's steps
    step: Step
    replaced: tuple[int, int]  # positions [start, stop) of the steps it replaced
    replaced_lines: tuple[int, int] | None  # the file lines of the first and last of them (None: none)
    replaced_tokens: int  # their estimate: the context just before it fired, as far as the transcript shows
    summary: Snapshot
    report: Report
    changes: SnapshotDiff | None  # from the previous checkpoint's summary (None for the first)
    history: CheckerHistory = field(repr=False)  # the replaced steps as the checker read them

    @property
    def tokens(self) -> int:
        return self.step.tokens

    def to_json(self) -> dict[str, Any]:
        return {
            "number": self.number,
            "step_index": self.step.step_index,
            "line": self.step.line,
            "tokens": self.tokens,
            "replaced_steps": {"count": self.replaced[1] - self.replaced[0],
                               "lines": list(self.replaced_lines) if self.replaced_lines else None},
            "replaced_tokens": self.replaced_tokens,
            "sections": {s.name: s.lines for s in self.summary.sections},
            "recall": round(self.report.recall, 4),
            "kept": self.report.kept,
            "total": self.report.total,
            "by_kind": self.report.by_kind(),
            "lost_facts": [{**f.to_json(), "step_lines": self.history.step_lines(f.turns)} for f in self.report.lost],
            "false_claims": [c.to_json() for c in self.report.false_claims],
            "changes": self.changes.to_json() if self.changes is not None else None,
        }


def checkpoint_positions(steps: Sequence[Step]) -> list[int]:
    return [i for i, step in enumerate(steps) if step.kind == CHECKPOINT]


def checkpoints(transcript: Transcript) -> list[Checkpoint]:
    """Every CHECKPOINT of the transcript, in file order, graded against the steps it replaced."""
    steps = transcript.steps
    out: list[Checkpoint] = []
    start = 0
    previous: Snapshot | None = None
    for position in checkpoint_positions(steps):
        step = steps[position]
        replaced = steps[start:position]
        history = checker_history(replaced)
        summary = summary_sections(step.content)
        tokens = sum(s.tokens for s in replaced)
        report = check_snapshot(history.contents, step.content, history.statuses, replaced_tokens=tokens)
        lines = (replaced[0].line, replaced[-1].line) if replaced else None
        out.append(Checkpoint(step.checkpoint_number, position, step, (start, position), lines, tokens, summary, report,
                              diff(previous, summary) if previous is not None else None, history))
        previous = summary
        start = position + 1
    return out


def replaced_positions(found: Sequence[Checkpoint]) -> dict[int, int]:
    """Step position -> the position of the checkpoint that replaced it."""
    out: dict[int, int] = {}
    for checkpoint in found:
        for position in range(*checkpoint.replaced):
            out[position] = checkpoint.position
    return out


@dataclass(frozen=True)
class Gauge:
    """How full Antigravity's context is, against its compaction point: the estimate of the steps
    since the last checkpoint (that checkpoint's summary included)."""

    tokens: int
    compaction_point: int

    @property
    def share(self) -> float:
        return self.tokens / self.compaction_point if self.compaction_point else 0.0

    def to_json(self) -> dict[str, Any]:
        return {"estimated_tokens": self.tokens, "compaction_point": self.compaction_point,
                "share": round(self.share, 4)}


def context_after(steps: Sequence[Step]) -> list[int]:
    """For each step, the context estimate once it is in: a checkpoint starts the count again."""
    out: list[int] = []
    total = 0
    for step in steps:
        total = step.tokens if step.kind == CHECKPOINT else total + step.tokens
        out.append(total)
    return out


def gauge(transcript: Transcript, compaction_point: int = DEFAULT_COMPACTION_POINT) -> Gauge:
    after = context_after(transcript.steps)
    return Gauge(after[-1] if after else 0, compaction_point)
