"""A compaction preview as the app holds it: the core's result plus whether it still fits the file."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from inspector.tui.loading import Loaded


@dataclass
class Preview:
    """``result`` is ``compress()``'s result for ``path`` as it was when computed."""

    result: Any
    path: Path
    split: int  # the split the user chose (the result's own split_point may differ: see the note)
    focus: str = ""
    source: Loaded | None = None  # the session and history it was computed from (what apply needs)
    stale: str = ""  # why it no longer matches the file ("" while it does)

    @property
    def status(self) -> str:
        status = getattr(self.result, "status", "")
        return str(getattr(status, "value", status))

    @property
    def compressed(self) -> bool:
        return self.status == "COMPRESSED"

    @property
    def tokens(self) -> tuple[int, int]:
        return int(self.result.original_token_count), int(self.result.new_token_count)

    def tokens_text(self) -> str:
        before, after = self.tokens
        change = f" ({(after - before) / before:+.1%})" if before else ""
        return f"{before:,} -> {after:,} tokens{change}"

    def refusal(self) -> str | None:
        """Why this preview cannot be applied, or None."""
        if self.stale:
            return f"the preview is stale ({self.stale}); press c to compute it again"
        if not self.compressed:
            return f"nothing to apply: the compaction ended {self.status}"
        return None
