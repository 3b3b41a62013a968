"""A compaction preview as the app holds it: the core's result plus whether it still fits the file."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from inspector.antigravity import read_only_refusal
from inspector.compaction.compress import CompressionResult
from inspector.compaction.staged import stages_used
from inspector.format import before_after, turn_span

if TYPE_CHECKING:
    from inspector.tui.loading import Loaded


def before_note(loaded: Loaded | None, before: int) -> str:
    """Why a compaction's "before" figure is not the table's total, when it is not
    (``ContextFigures.before_note``, in every face's words); "" with nothing loaded."""
    return loaded.analysis.context.before_note(before) if loaded is not None else ""


@dataclass
class Preview:
    """``result`` is ``compress()``'s result for ``path`` as it was when computed."""

    result: CompressionResult
    path: Path
    split: int  # the split the user chose (the result's own split_point may differ: see the note)
    focus: str = ""
    source: Loaded | None = None  # the session and history it was computed from (what apply needs)
    stale: str = ""  # why it no longer matches the file ("" while it does)
    recall: float | None = None  # from a comparison: the whole history's facts in the whole new history
    tab: str = ""  # the preview's tab last shown: it opens there again (back from a turn a line led to)

    @property
    def turn_count(self) -> int | None:
        """The turns of the history it was computed from (None: not known)."""
        return len(self.source.analysis.turns) if self.source is not None else None

    @property
    def strategy(self) -> str:
        return self.result.strategy

    @property
    def staged(self) -> bool:
        return self.strategy == "staged"

    @property
    def stages_used(self) -> list[str]:
        return stages_used(self.result.stages or [])

    def what_it_does(self) -> str:
        """One line for the confirmation: what the new history is made of."""
        split = self.result.split_point
        if self.staged:
            used = ", ".join(self.stages_used) or "no stage"
            summary = f"; the summary covers {turn_span(0, split)}" if split else ""
            return f"staged: {used}{summary}; turns that no stage changed are kept verbatim"
        kind = self.result.split_kind
        how = f" ({kind} split)" if kind else ""
        return f"summarise {turn_span(0, split or 0)}{how}, keep the rest verbatim"

    @property
    def status(self) -> str:
        return self.result.status.value

    @property
    def compressed(self) -> bool:
        return self.status == "COMPRESSED"

    @property
    def tokens(self) -> tuple[int, int]:
        return self.result.original_token_count, self.result.new_token_count

    def tokens_text(self) -> str:
        before, after = self.tokens
        return before_after(before, after, unit=" tokens", change=True)

    def before_note(self) -> str:
        return before_note(self.source, self.result.original_token_count)

    def refusal(self) -> str | None:
        """Why this preview cannot be applied, or None."""
        if self.stale:
            return f"the preview is stale ({self.stale}); c in the session view computes it again"
        if self.source is not None and (read_only := read_only_refusal(self.source.session)) is not None:
            return f"Nothing was written: {read_only}."
        return self.result.apply_refusal()
