"""``compress()``: Gemini CLI's compaction state machine (REFERENCE.md section 6).

The steps and the statuses are the reference's ``ChatCompressionService.compress``.
One documented improvement: the reference compares the new history's
*estimate* with the *recorded* prompt size of the last turn (which also
counts the system prompt and the tool declarations), so the two figures are
not alike.  Here, unless ``original_tokens`` is given, both sides are the
same estimate: before = environment turn + the whole curated history,
after = environment turn + the new history.  The recorded figure is reported
beside them.  Passing ``original_tokens`` restores the reference's exact
arithmetic (the differential tests do that).

Nothing here writes to disk: budget truncations are planned (file names and
full texts in ``result.truncations``) for the store to write when applying.
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any

from inspector import quality
from inspector.compaction import prompts
from inspector.compaction.agentic import agentic_candidates, snapshot_turns
from inspector.compaction.budget import TOOL_OUTPUTS_DIR, Truncation, apply_budget, output_file_name, truncate_chars
from inspector.compaction.reading import Planned, budget_applied
from inspector.compaction.snapshot import OPEN, Provenance, find_snapshot_text
from inspector.compaction.split import COMPRESS_FRACTION, find_split_point, split_kind
from inspector.compaction.staged import StageReport
from inspector.compaction.statuses import NO_STATUSES, ToolStatuses
from inspector.compaction.summarisers.base import EmptyAnswer, Grounded, Reporting, Summariser, SummariserError
from inspector.compaction.view import HistoryView, view_candidates, view_split
from inspector.context import ContextFigures, environment_quarters
from inspector.jsjson import js_json_len, js_trim
from inspector.progress import SILENT, Reporter
from inspector.session.history import Turn
from inspector.tokens import DEFAULT_THRESHOLD, content_parts, parts_quarters, token_limit


class CompressionStatus(StrEnum):
    COMPRESSED = "COMPRESSED"
    COMPRESSION_FAILED_INFLATED_TOKEN_COUNT = "COMPRESSION_FAILED_INFLATED_TOKEN_COUNT"
    COMPRESSION_FAILED_TOKEN_COUNT_ERROR = "COMPRESSION_FAILED_TOKEN_COUNT_ERROR"
    COMPRESSION_FAILED_EMPTY_SUMMARY = "COMPRESSION_FAILED_EMPTY_SUMMARY"
    NOOP = "NOOP"
    CONTENT_TRUNCATED = "CONTENT_TRUNCATED"
    # Not in the reference (there, a failed model call throws): the summariser failed.
    COMPRESSION_FAILED_SUMMARISER_ERROR = "COMPRESSION_FAILED_SUMMARISER_ERROR"

    @property
    def failed(self) -> bool:
        return self.name.startswith("COMPRESSION_FAILED")


class InvalidSplit(ValueError):
    """A chosen split that cannot start the kept part; the message is one line."""


@dataclass(repr=False)
class CompressionResult:
    status: CompressionStatus
    original_token_count: int
    new_token_count: int
    recorded_prompt_tokens: int | None = None
    split_point: int | None = None
    kept_from: int | None = None
    provider: str | None = None
    model: str | None = None
    draft_snapshot: str | None = None
    snapshot: str | None = None
    verification_answered: bool | None = None  # did the verification call give text (None: none was made)
    verification_problem: str | None = None  # why the verification gave no text, when the model said why
    previous_snapshot: str | None = None
    new_history: list[dict[str, Any]] | None = None
    truncations: list[Truncation] = field(default_factory=list)
    facts: quality.Report | None = None  # the independent check (inspector.quality), not the summariser's own
    provenance: Provenance | None = None  # the turns each snapshot line comes from (offline summariser)
    duration_seconds: float = 0.0
    message: str = ""
    source_sha256: str | None = None
    summarised_with: str | None = None  # "original" | "truncated": what the summariser was sent
    threshold: float = DEFAULT_THRESHOLD
    token_limit: int = 0
    forced: bool = False
    instruction: str | None = None
    strategy: str = "reference"
    split_kind: str | None = None  # "reference" | "agentic" | "chosen" (``split.split_kind``) | "staged"
    stages: list[StageReport] | None = None  # staged strategy: one per stage that was considered
    sources: list[int | None] | None = None  # staged: original turn each new turn copies unchanged
    # NOOP because nothing comes before the reference's split: the agentic split (before a model turn
    # no call/response pair spans), when one would summarise something; None otherwise
    agentic_alternative: int | None = None

    @property
    def ok(self) -> bool:
        return not self.status.failed

    def __repr__(self) -> str:
        # Short on purpose: the default would spell out the whole new history, and asyncio's runner
        # formats the repr of the task holding this result when it restores its Ctrl-C handler
        # (Python 3.11), which took seconds on a big session.
        return (f"CompressionResult(status={self.status.value}, original_token_count={self.original_token_count}, "
                f"new_token_count={self.new_token_count}, split_point={self.split_point}, "
                f"strategy={self.strategy!r}, provider={self.provider!r})")

    def finish(self, status: CompressionStatus, message: str, started: float) -> CompressionResult:
        """Set the outcome and the time taken since ``started`` (``time.monotonic``)."""
        self.status, self.message = status, message
        self.duration_seconds = time.monotonic() - started
        return self

    @property
    def snapshot_problem(self) -> str | None:
        """Why the snapshot cannot stand as the agent's memory (``snapshot.shape_problem``; None: it can,
        or there is none)."""
        from inspector.compaction.snapshot import shape_problem

        final = self.snapshot
        problem = shape_problem(final) if final else None
        if problem and final and self.draft_snapshot and self.draft_snapshot.strip() != final.strip() \
                and shape_problem(self.draft_snapshot) is None:  # a whole draft, then a refusal or a cut check
            problem += "; the draft was a whole snapshot, which the verification call replaced: compact again"
        return problem

    @property
    def verification_note(self) -> str | None:
        """What to show in place of the draft -> final diff when the verification answered nothing (the
        draft then stands, as Gemini CLI keeps it): an empty diff would read as a draft it confirmed."""
        if self.verification_answered is False and self.snapshot:
            why = f" ({self.verification_problem})" if self.verification_problem else ""
            return f"the verification call answered nothing{why}, so the draft stands as the snapshot (as " \
                   "Gemini CLI keeps it); it was not checked"
        return None

    def apply_refusal(self) -> str | None:
        """Why this result must not be written to the session (None: it may): the one rule the CLI,
        the app and the store all ask."""
        if self.status is not CompressionStatus.COMPRESSED:
            return f"the compaction ended {self.status.value}, so there is nothing to apply"
        return self.snapshot_problem

    @property
    def lost_facts(self) -> list[quality.Fact]:
        return self.facts.lost if self.facts else []

    def to_json(self) -> dict[str, Any]:
        return {
            "status": self.status.value,
            "message": self.message,
            "strategy": self.strategy,
            "split_kind": self.split_kind,
            "agentic_alternative": self.agentic_alternative,
            "stages": [stage.to_json() for stage in self.stages] if self.stages is not None else None,
            "original_token_count": self.original_token_count,
            "new_token_count": self.new_token_count,
            "recorded_prompt_tokens": self.recorded_prompt_tokens,
            "split_point": self.split_point,
            "kept_from": self.kept_from,
            "provider": self.provider,
            "model": self.model,
            "threshold": self.threshold,
            "token_limit": self.token_limit,
            "forced": self.forced,
            "instruction": self.instruction,
            "summarised_with": self.summarised_with,
            "draft_snapshot": self.draft_snapshot,
            "verification_answered": self.verification_answered,
            "verification_problem": self.verification_problem,
            "snapshot": self.snapshot,
            "previous_snapshot": self.previous_snapshot,
            "new_history": self.new_history,
            "truncations": [
                {"turn": t.turn, "part": t.part, "tool": t.tool, "output_file": t.output_file,
                 "original_tokens": t.original_tokens, "new_tokens": t.new_tokens}
                for t in self.truncations
            ],
            "fact_recall": round(self.facts.recall, 4) if self.facts else None,
            "facts": self.facts.to_json() if self.facts else None,
            "lost_facts": [f.to_json() for f in self.lost_facts],
            "false_claims": [c.to_json() for c in self.facts.false_claims] if self.facts else None,
            "snapshot_problem": self.snapshot_problem,
            "provenance": self.provenance.to_json() if self.provenance else None,
            "duration_seconds": round(self.duration_seconds, 3),
            "source_sha256": self.source_sha256,
        }


History = Sequence[Turn] | Sequence[dict[str, Any]]


def contents_of(history: History) -> list[dict[str, Any]]:
    """The Content dicts of a history given as ``Turn``s or as Content dicts."""
    return [item.content if isinstance(item, Turn) else item for item in history]


def quarters_of(contents: Sequence[dict[str, Any]]) -> int:
    """The quarter tokens of every part of ``contents`` (``estimate_contents`` before its floor)."""
    return sum(parts_quarters(content_parts(c)) for c in contents)


def _has_snapshot(contents: Sequence[dict[str, Any]]) -> str | None:
    """The newest text part holding a ``<state_snapshot>`` (the reference's ``text?.includes``)."""
    for content in reversed(contents):
        parts = content.get("parts")
        if not parts:
            continue
        for part in reversed(parts):
            if isinstance(part, dict):
                text = part.get("text")
                if isinstance(text, str) and OPEN in text:
                    return text
    return None


def start_result(summariser: Summariser, options: CompressOptions, *, original: int, limit: int,
                 strategy: str = "reference") -> CompressionResult:
    """A NOOP result with the figures every strategy reports, before anything ran."""
    return CompressionResult(
        status=CompressionStatus.NOOP, original_token_count=original, new_token_count=original,
        recorded_prompt_tokens=options.recorded_prompt_tokens, provider=summariser.name,
        model=summariser.model, source_sha256=options.source_sha256, threshold=options.applied_threshold,
        token_limit=limit, forced=options.force, instruction=options.instruction or None, strategy=strategy,
    )


def check_split(contents: Sequence[dict[str, Any]], split: int, valid: Sequence[int] | None = None,
                view: HistoryView = HistoryView.JOINED) -> None:
    """Raise ``InvalidSplit`` unless ``split`` may start the kept part of ``contents``.

    Valid: the reference's candidates in ``view`` (before a user prompt) and the
    agentic ones (before a model turn that separates no call from its response);
    ``valid`` when they are known already (in order).
    """
    if valid is None:
        valid = sorted({*view_candidates(contents, view), *agentic_candidates(list(contents))})
    if split in valid:
        return
    before = [c for c in valid if c < split][-1:]
    after = [c for c in valid if c > split][:1]
    near = ", ".join(str(c) for c in before + after) or "none"
    if not 0 <= split <= len(contents):
        why = f"the history has {len(contents)} turns"
    elif split == len(contents):
        why = "the last turn is not a finished model answer"
    else:
        why = f"turn {split} is a {contents[split].get('role')} turn" + (
            " holding tool results" if contents[split].get("role") == "user"
            else " that would separate a tool call from its result"
        )
    raise InvalidSplit(f"split {split} is not a valid split point: {why}; the nearest valid ones are {near}")


@dataclass(frozen=True)
class CompressOptions:
    """How one compression runs: what the user asked (``request.CompactionRequest``) joined with what
    the session tells (``request.CompactionContext``) by ``CompactionContext.compress_options``; tests
    and tools that compress a bare history give only what they need.

    ``environment`` is the environment-context turn Gemini CLI keeps in front
    of the history (counted in the new size, never summarised).  ``split``
    overrides the reference's split and must be a valid candidate
    (``InvalidSplit`` otherwise); ``agentic`` picks the split the reference's
    rule (70% of the weight) gives over the agentic candidates instead.
    ``statuses``: each tool call's recorded status, for the fact check.
    ``first_truncation_id``: the number the budget's first saved output takes (Gemini CLI's: 1).
    ``planned``: what ``analyze`` measured of this history (``reading.Planned``), reused when it
    fits (same length, limit, recorded prompt and output folder) instead of measured again; with
    another first number its budget is planned again from its figures (``Planned.numbered_from``).
    ``view``: how Gemini CLI's compression reads the history, which decides its split (``compaction.view``).
    ``target``: the staged strategy's goal (``strategies.compress_staged``; the reference has none).
    """

    model: str | None = None
    force: bool = False
    threshold: float | None = None
    has_failed_attempt: bool = False
    split: int | None = None
    agentic: bool = False
    recorded_prompt_tokens: int | None = None
    original_tokens: int | None = None
    environment: dict[str, Any] | None = None
    temp_dir: Path | str | None = None
    instruction: str | None = None
    system_prompt: str | None = None
    acknowledgement: str = prompts.ACKNOWLEDGEMENT
    source_sha256: str | None = None
    first_truncation_id: int = 1
    statuses: ToolStatuses = NO_STATUSES
    planned: Planned | None = None
    view: HistoryView = HistoryView.JOINED
    target: float | None = None

    @property
    def applied_threshold(self) -> float:
        """The threshold compared with: the one given, else Gemini CLI's default."""
        return self.threshold if self.threshold else DEFAULT_THRESHOLD


DEFAULT_OPTIONS = CompressOptions()


async def compress(
    history: History,
    summariser: Summariser,
    options: CompressOptions = DEFAULT_OPTIONS,
    reporter: Reporter = SILENT,
) -> CompressionResult:
    """Compress a curated history (Content dicts or ``Turn``s) as ``options`` say; see the module doc.

    A kept part that starts with a model turn follows the snapshot directly
    (no acknowledgement, so the roles still alternate).  Cancel the task to
    stop it.  ``reporter``: each stage and the turns it has done; ``Cancelled`` when it says stop.
    """
    force, split, agentic, view = options.force, options.split, options.agentic, options.view
    recorded_prompt_tokens, original_tokens = options.recorded_prompt_tokens, options.original_tokens
    first_truncation_id, statuses, planned = options.first_truncation_id, options.statuses, options.planned
    started = time.monotonic()
    curated = contents_of(history)
    limit = token_limit(options.model)
    threshold = options.applied_threshold
    env_quarters = environment_quarters(options.environment)
    like_for_like = original_tokens is None
    max_chars = truncate_chars(limit, recorded_prompt_tokens or 0)
    folder = str((Path(options.temp_dir) if options.temp_dir is not None else Path(".")) / TOOL_OUTPUTS_DIR) + os.sep
    reuse = planned if planned is not None and planned.fits(
        len(curated), token_limit=limit, recorded_prompt_tokens=recorded_prompt_tokens, output_folder=folder) else None
    if not like_for_like:
        original = int(original_tokens or 0)
    elif reuse is not None:
        original = (env_quarters + reuse.quarters(0, len(curated))) // 4
    else:
        original = (env_quarters + quarters_of(curated)) // 4
    result = start_result(summariser, options, original=original if curated else 0, limit=limit)

    def done(status: CompressionStatus, message: str = "") -> CompressionResult:
        return result.finish(status, message, started)

    if not curated:
        return done(CompressionStatus.NOOP, "the history is empty")
    if not force:
        recorded = recorded_prompt_tokens if like_for_like else None  # the reference's: original_tokens decides
        below = ContextFigures(recorded, original, limit, threshold).below_threshold()
        if below:
            return done(CompressionStatus.NOOP, below)

    reporter.check()
    reporter.report("tool-output budget", 0, len(curated))
    if reuse is not None:  # what analyze planned (numbered as asked), applied
        reuse = reuse.numbered_from(first_truncation_id, curated, max_chars)
        truncations = list(reuse.truncations)
        truncated = budget_applied(curated, truncations)
    else:
        truncated, truncations = apply_budget(
            curated, lambda tool, seq: folder + output_file_name(tool, seq + first_truncation_id - 1),
            max_chars=max_chars,
        )
    result.truncations = truncations
    if split is not None:
        check_split(truncated, split, reuse.valid_splits() if reuse is not None else None, view)

    changes = reuse.budget_changes(truncated) if reuse is not None else {}

    def truncated_quarters(start: int) -> int:
        """Quarter tokens of ``truncated[start:]``."""
        if reuse is None:
            return quarters_of(truncated[start:])
        return reuse.quarters(start, len(curated)) + sum(d for turn, d in changes.items() if turn >= start)

    if options.has_failed_attempt and not force:
        count = ((env_quarters if like_for_like else 0) + truncated_quarters(0)) // 4
        if count < original:
            result.new_history, result.kept_from, result.new_token_count = truncated, 0, count
            return done(CompressionStatus.CONTENT_TRUNCATED,
                        "an earlier summary failed, so only the tool-output budget was applied")
        return done(CompressionStatus.NOOP, "an earlier summary failed and the budget truncates nothing")

    if split is not None:
        at = truncated[split] if split < len(truncated) else None
        point, result.split_kind = split, split_kind(split, None, at is not None and at.get("role") == "model")
    elif agentic:
        weights = reuse.agentic_weights(truncated) if reuse is not None else None
        point, result.split_kind = agentic_split(truncated, weights), "agentic"
    elif reuse is not None:
        point, result.split_kind = reuse.split_after_budget(truncated), "reference"
    else:
        point, result.split_kind = view_split(truncated, view), "reference"
    result.split_point = result.kept_from = point
    if point == 0:
        if result.split_kind == "reference":  # one prompt and an agent at work: a model turn may still begin
            weights = reuse.agentic_weights(truncated) if reuse is not None else None
            result.agentic_alternative = agentic_split(truncated, weights) or None
        return done(CompressionStatus.NOOP, "nothing comes before the split point, so there is nothing to summarise")

    original_older = curated[:point]
    older_tokens = (reuse.quarters(0, point) if reuse is not None else quarters_of(original_older)) // 4
    if older_tokens < limit:
        for_summariser, result.summarised_with = original_older, "original"
        summarised_tokens: int | None = older_tokens
    else:
        for_summariser, result.summarised_with = truncated[:point], "truncated"
        summarised_tokens = (truncated_quarters(0) - truncated_quarters(point)) // 4 if reuse is not None else None
    if isinstance(summariser, Grounded):
        summariser.ground(statuses, summarised_tokens)
    with quality.start(for_summariser, statuses) as extraction:  # the independent facts, read meanwhile
        try:
            twice = await summarise_twice(
                summariser, for_summariser, instruction=options.instruction, system_prompt=options.system_prompt,
                reporter=reporter,
            )
        except EmptyAnswer as exc:  # the model wrote no draft and said why
            return done(CompressionStatus.COMPRESSION_FAILED_EMPTY_SUMMARY, f"{result.provider}: {exc}")
        except SummariserError as exc:
            return done(CompressionStatus.COMPRESSION_FAILED_SUMMARISER_ERROR, f"{result.provider}: {exc}")
        final = twice.final
        result.draft_snapshot, result.verification_answered = twice.draft, twice.answered
        result.verification_problem = twice.problem
        result.previous_snapshot = twice.previous
        if not final:
            return done(CompressionStatus.COMPRESSION_FAILED_EMPTY_SUMMARY,
                        f"{result.provider}: the summary is empty: neither the draft nor the verification call "
                        "answered any text; try again")
        result.snapshot = final
        result.facts = quality.check_snapshot(for_summariser, final, statuses, replaced_tokens=older_tokens,
                                              reporter=reporter, extraction=extraction)
    reporter.check()
    result.provenance = summariser.cite(final) if isinstance(summariser, Grounded) else None

    kept = truncated[point:]
    summary = snapshot_turns(final, kept[0] if kept else None, options.acknowledgement)
    new_history = [*summary, *kept]
    result.new_token_count = (env_quarters + quarters_of(summary) + truncated_quarters(point)) // 4
    if result.new_token_count > original:
        return done(CompressionStatus.COMPRESSION_FAILED_INFLATED_TOKEN_COUNT,
                    f"the new history ({result.new_token_count:,} tokens) would be larger than the old "
                    f"({original:,}); nothing would be gained")
    result.new_history = new_history
    return done(CompressionStatus.COMPRESSED)


@dataclass(frozen=True)
class TwoCalls:
    """What the reference's two calls gave: the draft, the snapshot that stands, whether the
    verification answered at all, and the previous snapshot found in what was summarised."""

    draft: str
    final: str  # the verification's trimmed text, else the draft's (empty when both are)
    answered: bool  # the verification gave text (False: the draft stands unchecked)
    previous: str | None
    problem: str | None = None  # why the verification gave no text, when the model said why (``EmptyAnswer``)


async def summarise_twice(
    summariser: Summariser,
    older: list[dict[str, Any]],
    *,
    instruction: str | None = None,
    system_prompt: str | None = None,
    reporter: Reporter = SILENT,
) -> TwoCalls:
    """The reference's two calls: a draft, then a verification of it.  Raises ``SummariserError``
    (``EmptyAnswer`` when the model wrote no draft and said why).  A verification that wrote nothing
    and said why leaves the draft standing, as an empty one does, with its reason in ``problem``."""
    previous = _has_snapshot(older)
    system = system_prompt or prompts.COMPRESSION_SYSTEM_PROMPT
    focus = [{"text": prompts.focus_text(instruction)}] if instruction and instruction.strip() else []
    first_request = {"role": "user", "parts": [{"text": prompts.anchor_text(previous is not None)}, *focus]}
    if isinstance(summariser, Reporting):
        summariser.use_reporter(reporter)
    reporter.check()
    reporter.report("summary draft", 0, len(older))
    draft = await summariser.summarise(system, [*older, first_request])
    reporter.check()
    reporter.report("verification", 0, len(older))
    problem = None
    try:
        checked = js_trim(await summariser.summarise(system, [
            *older,
            {"role": "model", "parts": [{"text": draft}]},
            {"role": "user", "parts": [{"text": prompts.VERIFY_REQUEST}, *focus]},
        ]) or "")
    except EmptyAnswer as exc:
        checked, problem = "", str(exc)
    final = js_trim(checked or draft or "")
    return TwoCalls(draft, final, bool(checked), find_snapshot_text(previous) if previous else None, problem)


def agentic_split(contents: list[dict[str, Any]], weights: Sequence[int] | None = None) -> int:
    """The reference's 70%-of-the-weight rule applied to the agentic candidates
    (``weights``: each turn's JSON length, when known)."""
    candidates = set(agentic_candidates(contents))
    if weights is None:
        weights = [js_json_len(c) for c in contents]
    flags = [i in candidates for i in range(len(contents))]
    return find_split_point(weights, flags, False, COMPRESS_FRACTION)
