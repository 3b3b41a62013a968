"""The session view's split keys: ``[`` / ``]``, ``{`` / ``}``, ``=``, ``h``, ``A`` and ``s``.

``SplitKeys`` is the part of ``SessionScreen`` that moves the split; the screen
holds what it reads (the session shown, the split, the table) and redraws the
figures (``refresh_figures``).
"""

from __future__ import annotations

from inspector.tui.loading import Loaded
from inspector.tui.screens.base import TurnsScreen
from inspector.tui.session.splits import AgenticFinder, parting_words, split_points
from inspector.tui.widgets.turn_table import TurnTable


class SplitKeys(TurnsScreen):
    """Moving the split, for the session screen that inherits it."""

    loaded: Loaded | None
    split: int
    split_chosen: bool
    table: TurnTable
    agentic: AgenticFinder

    def refresh_figures(self) -> None:
        """The header's figures again (the screen's own)."""

    def set_split(self, split: int) -> None:
        """The user moves the split (it no longer follows Gemini CLI's own unless it is that one)."""
        if self.loaded is None:
            return
        self.split_chosen = split != self.loaded.analysis.compress_split_point
        if split == self.split:
            return
        self.split = split
        self.table.set_split(split)
        self.refresh_figures()

    def action_split(self, direction: int) -> None:
        if self.loaded is not None:
            self.set_split(self.loaded.analysis.step(self.split, direction))

    def action_agentic(self, direction: int) -> None:
        if self.loaded is None:
            return
        if self.loaded.agentic is None:
            self.notify("Still looking for agentic split candidates; try again in a moment.", timeout=3)
            return
        target = self.loaded.step_agentic(self.split, direction)
        if target == self.split:
            self.notify("No agentic split candidate that way." if self.loaded.agentic
                        else "This history has no agentic split candidate.", severity="warning", timeout=3)
            return
        self.set_split(target)

    def action_split_reference(self) -> None:
        if self.loaded is not None:
            self.set_split(self.loaded.analysis.compress_split_point)

    def action_split_here(self) -> None:
        """Start the kept part at the cursor's turn, when a split may fall there."""
        if self.loaded is None:
            return
        turn = self.table.cursor
        if turn in split_points(self.loaded):
            self.set_split(turn)
        elif self.loaded.agentic is None and self.loaded.analysis.turns[turn].role == "model":
            self.notify("Still looking for the model turns a split may start at; try again in a moment.", timeout=3)
        else:
            self.notify(parting_words(split_points(self.loaded), turn), severity="warning", timeout=6)

    def action_agentic_point(self) -> None:
        """Move the split where ``compact --agentic`` puts it (70% of the weight, before a model turn)."""
        if self.loaded is None:
            return
        point = self.agentic.point
        if point is None:
            if self.loaded.changed_from is not None and not self.agentic.busy:
                self.agentic.find(self.loaded)  # not looked for since the last live append
            self.notify("Still looking for the agentic split; try again in a moment.", timeout=3)
            return
        if point == 0:
            self.notify("This history has no agentic split: no model turn can start the kept part.",
                        severity="warning", timeout=4)
            return
        self.set_split(point)
        self.table.move_to(point)

    def action_goto_split(self) -> None:
        self.table.action_goto_split()
