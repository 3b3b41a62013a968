"""One line under the table: what the app is doing (loading, live, a preview and its state)."""

from __future__ import annotations

from rich.text import Text
from textual.events import Resize

from inspector.tui.widgets.fitted_lines import FittedLines

SEPARATOR = "  │  "


class StatusLine(FittedLines):
    """Named slots of short text, shown left to right.  When they do not fit one line, the slots that
    have a shorter form (``short``) take it; what still does not fit goes on to the next line, which
    starts with a slot (never with a separator or in the middle of a short slot)."""

    DEFAULT_CSS = """
    StatusLine { height: 1; padding: 0 1; background: $boost; color: $text-muted; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__("", id=id, markup=False)
        self.slots: dict[str, tuple[str, str, str]] = {}  # slot -> (text, style, shorter text or "")

    def set(self, slot: str, text: str, style: str = "", short: str = "") -> None:
        if self.slots.get(slot) == ((text, style, short) if text else None):
            return  # unchanged: no new layout
        if text:
            self.slots[slot] = (text, style, short)
        else:
            self.slots.pop(slot, None)
        self._show()

    def on_resize(self, event: Resize) -> None:
        self._show()

    def _show(self) -> None:
        width = self.content_size.width or max(self.app.size.width - 2, 1)
        values = list(self.slots.values())
        whole = sum(len(text) for text, _, _ in values) + len(SEPARATOR) * max(len(values) - 1, 0)
        shown = [((short or text) if whole > width else text, style) for text, style, short in values]
        line = Text()
        used = 0
        for value, value_style in shown:
            if used and used + len(SEPARATOR) + len(value) > width:
                line.append("\n")
                used = 0
            elif used:
                line.append(SEPARATOR, style="dim")
                used += len(SEPARATOR)
            line.append(value, style=value_style)
            used += len(value)
        self.show_lines(line)

    def get(self, slot: str) -> str:
        return self.slots.get(slot, ("", ""))[0]
