"""A footer whose keys never run off the right edge, where only a mouse's wheel could reach them.

At 80 columns the session view's keys did not fit once a preview ("a Apply"), an undo
("u Undo") and subagents ("b Subagents") were offered: "? Help" and "q Quit" were cut
off.  This footer leaves out the keys its screen names as giving way, in that order,
until the rest fits (they stay in help, ``?``, and the command palette, Ctrl+P).
"""

from __future__ import annotations

from collections.abc import Sequence

from textual.widget import Widget
from textual.widgets._footer import FooterKey, FooterLabel, KeyGroup

from inspector.tui.widgets.steady_footer import SteadyFooter


def action_name(action: str) -> str:
    """``agentic(-1)`` -> ``agentic``: a key's action without its arguments."""
    return action.split("(", 1)[0]


class FittingFooter(SteadyFooter, inherit_bindings=False):  # no scroll keys: it is never focused
    """A ``Footer`` that drops the ``give_way`` keys (action names, first dropped first) when the keys do not fit."""

    def __init__(self, *, give_way: Sequence[str] = (), compact: bool = False, id: str | None = None) -> None:
        super().__init__(compact=compact, id=id)
        self.give_way = tuple(give_way)

    async def recompose(self) -> None:
        await super().recompose()
        self.call_after_refresh(self.fit)

    def on_resize(self) -> None:
        for child in self.children:
            child.display = True
        self.call_after_refresh(self.fit)

    def units(self) -> dict[str, list[Widget]]:
        """The widgets of each action shown: a key, or a group of keys with the label after it."""
        units: dict[str, list[Widget]] = {}
        children = list(self.children)
        for position, child in enumerate(children):
            if isinstance(child, FooterKey):
                units.setdefault(action_name(child.action), []).append(child)
            elif isinstance(child, KeyGroup):
                keys = list(child.query(FooterKey))
                label = children[position + 1] if position + 1 < len(children) else None
                widgets: list[Widget] = [child] + ([label] if isinstance(label, FooterLabel) else [])
                for key in keys:
                    units.setdefault(action_name(key.action), []).extend(widgets)
        return units

    def overflows(self) -> bool:
        shown = [child for child in self.children if child.display]
        return sum(child.outer_size.width + child.styles.margin.width for child in shown) > self.size.width

    def fit(self) -> None:
        """Leave out one giving-way key after another (each after the layout of the last) until the keys fit."""
        if not self.is_attached or not self.size.width or not self.overflows():
            return
        units = self.units()
        for name in self.give_way:
            widgets = [w for w in units.get(name, []) if w.display]
            if widgets:
                for widget in widgets:
                    widget.display = False
                self.call_after_refresh(self.fit)
                return
