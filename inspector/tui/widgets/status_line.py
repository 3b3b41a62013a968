"""One line under the table: what the app is doing (loading, live, a preview and its state)."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static


class StatusLine(Static):
    """Named slots of short text, shown left to right."""

    DEFAULT_CSS = """
    StatusLine { height: 1; padding: 0 1; background: $boost; color: $text-muted; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__("", id=id, markup=False)
        self.slots: dict[str, tuple[str, str]] = {}

    def set(self, slot: str, text: str, style: str = "") -> None:
        if self.slots.get(slot) == ((text, style) if text else None):
            return  # unchanged: no new layout
        if text:
            self.slots[slot] = (text, style)
        else:
            self.slots.pop(slot, None)
        line = Text()
        for i, (value, value_style) in enumerate(self.slots.values()):
            if i:
                line.append("  │  ", style="dim")
            line.append(value, style=value_style)
        self.update(line)

    def get(self, slot: str) -> str:
        return self.slots.get(slot, ("", ""))[0]
