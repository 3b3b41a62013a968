"""What applying a snapshot would forget, and whether to ask again: the one rule the CLI's ``compact
--apply`` and the app's apply dialog both follow.

The recall is the independent check's (``grade.Report``): the share of the
facts ``ground.extract`` reads from the summarised turns (paths with what was
done to them, commands with their outcome, errors no later run fixed, the
user's rules, the latest request and plan step, an earlier snapshot's lines)
that the snapshot keeps.  Under ``min_recall`` an apply needs a second yes
(the app) or ``--force`` (the CLI).
"""

from __future__ import annotations

from dataclasses import dataclass

from inspector.quality.grade import Report

MIN_RECALL = 0.8  # under this share of the facts kept, an apply is asked twice / needs --force
SHOWN = 5  # lost facts named in the question


@dataclass(frozen=True)
class Forgetting:
    recall: float
    kept: int
    total: int
    lost: tuple[str, ...]  # each lost fact as a person reads it, the first ``SHOWN``
    lost_count: int
    min_recall: float

    @property
    def below(self) -> bool:
        """Whether the recall is under the threshold (a history with no fact never is)."""
        return self.total > 0 and self.recall < self.min_recall

    def sentence(self) -> str:
        """One sentence: the recall and what would be forgotten."""
        if not self.total:
            return "The independent check found no fact to keep in the summarised turns."
        said = f"Keeps {self.recall:.0%} of the facts the independent check finds ({self.kept:,} of {self.total:,})"
        if not self.lost_count:
            return said + "; forgets none."
        more = f", and {self.lost_count - len(self.lost):,} more" if self.lost_count > len(self.lost) else ""
        return f"{said}; forgets: " + "; ".join(self.lost) + more + "."

    def refusal(self) -> str:
        """Why an apply under the threshold needs a second answer (its words in the CLI and the app)."""
        return (f"the snapshot keeps {self.recall:.0%} of the facts, under the {self.min_recall:.0%} "
                f"threshold")


def forgetting(report: Report, min_recall: float = MIN_RECALL) -> Forgetting:
    lost = report.lost
    return Forgetting(report.recall, report.kept, report.total,
                      tuple(f"{f.kind}: {' '.join(f.value.split())[:120]}" for f in lost[:SHOWN]), len(lost),
                      min_recall)
