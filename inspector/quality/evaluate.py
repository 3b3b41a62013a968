"""One row of the quality benchmark: compact a session with a summariser, grade the snapshot independently.

``evaluate`` runs Gemini CLI's compaction (``compress``, forced; when the
reference split leaves nothing to summarise, the agentic split; for a
planted session, the whole history) and grades the snapshot against the
facts ``ground.extract`` reads from the summarised turns.  For a planted
session it also checks those facts against the answers the generator
planted, so the extractor itself is tested.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from inspector.compaction.summarisers.base import Summariser
from inspector.quality.grade import FalseClaim, grade
from inspector.quality.ground import KINDS, extract
from inspector.quality.planted import Planted

TARGET_KINDS = ("path", "command")


@dataclass(frozen=True)
class Row:
    session: str
    provider: str
    status: str
    summarised_turns: int = 0
    recall: tuple[tuple[str, float | None], ...] = ()  # per kind, in KINDS order
    target_recall: float | None = None  # paths and commands with their outcomes
    false_claims: tuple[FalseClaim, ...] = ()
    snapshot_tokens: int = 0
    replaced_tokens: int = 0
    seconds: float = 0.0
    extractor_misses: int | None = None  # planted facts the extractor did not find, plus facts it made up
    message: str = ""
    omitted: tuple[tuple[str, int], ...] = ()  # lines of each kind the summariser left out to fit its budget
    budget_tokens: int | None = None  # the most its snapshot could take (a summariser that says)

    @property
    def size_share(self) -> float | None:
        return self.snapshot_tokens / self.replaced_tokens if self.replaced_tokens else None

    def recall_of(self, kind: str) -> float | None:
        return dict(self.recall).get(kind)


async def evaluate(path: Path, summariser: Summariser, *, planted: Sequence[Planted] | None = None) -> Row:
    from inspector.analysis import analyze
    from inspector.compaction.compress import CompressionStatus
    from inspector.compaction.request import CompactionRequest, compaction_context
    from inspector.compaction.strategies import run_request
    from inspector.session import load

    session = load(path)
    analysis = analyze(session)
    turns = analysis.turns
    context = compaction_context(session, analysis)
    provider = str(summariser.name)
    started = time.perf_counter()
    split = len(turns) if planted is not None else None
    result = await run_request(CompactionRequest(force=True, split=split), context, turns, summariser)
    if result.status is CompressionStatus.NOOP and result.split_point == 0:
        result = await run_request(CompactionRequest(force=True, agentic=True), context, turns, summariser)
    took = time.perf_counter() - started
    if not result.snapshot or not result.split_point:
        return Row(path.name, provider, result.status.value, seconds=took, message=result.message)
    older = [t.content for t in turns[: result.split_point]]
    ground = extract(older, context.statuses)
    from inspector.quality import history_text
    from inspector.tokens import estimate_contents

    report = grade(ground, result.snapshot, replaced_tokens=estimate_contents(older),
                   history_text=history_text(older))
    misses = None
    if planted is not None:
        found = {(f.kind, f.key, f.state) for f in ground.facts}
        wanted = {(p.kind, p.key, p.state) for p in planted}
        misses = len(found ^ wanted)
    return Row(
        session=path.name, provider=provider, status=result.status.value, summarised_turns=result.split_point,
        recall=tuple((kind, report.recall_of([kind])) for kind in KINDS),
        target_recall=report.recall_of(TARGET_KINDS), false_claims=tuple(report.false_claims),
        snapshot_tokens=report.snapshot_tokens, replaced_tokens=report.replaced_tokens, seconds=took,
        extractor_misses=misses, message=result.message,
        omitted=result.provenance.omitted if result.provenance else (),
        budget_tokens=result.provenance.budget_tokens if result.provenance else None,
    )
