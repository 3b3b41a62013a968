"""The final snapshot line by line: select a line to see the turns it comes from, Enter to go to one.

``/`` searches the snapshot's text (the list keeps the matching lines and
their section headings).  Session text is only ever shown through
``visible()`` in ``rich.text.Text``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.widgets import Input, OptionList, Static
from textual.widgets.option_list import Option

from inspector.compaction.snapshot import Provenance, parse, text_lines
from inspector.format import plural, visible
from inspector.tui.messages import ShowTurn
from inspector.tui.widgets.text_field import TextField

PREVIEW_TURNS = 3
PREVIEW_CHARS = 160


@dataclass(frozen=True)
class Entry:
    section: str
    text: str
    turns: tuple[int, ...]


def entries(snapshot: str | None, provenance: Provenance | None) -> list[Entry]:
    """Every line of the snapshot with its turns (none where the summariser does not say)."""
    if provenance is not None and provenance.lines:
        return [Entry(s.section, s.text, s.turns) for s in provenance.lines]
    parsed = parse(snapshot or "")
    return [Entry(s.name, line.lstrip("-*• ").strip(), ()) for s in parsed.sections for line in s.lines]


def describe_turn(index: int, content: dict[str, Any]) -> Text:
    """One turn in a few lines: role, then each part's gist."""
    text = Text.assemble((f"turn {index:,}", "bold"), f" · {visible(str(content.get('role', '?')))}")
    for part in content.get("parts") or []:
        if not isinstance(part, dict):
            continue
        if isinstance(part.get("text"), str) and not part.get("thought"):
            said = gist(part["text"])
            text.append("\n  " + (said if len(said) <= PREVIEW_CHARS else said[: PREVIEW_CHARS - 1] + "…"))
        elif isinstance(part.get("functionCall"), dict):
            call = part["functionCall"]
            given = call.get("args")
            args = gist(", ".join(f"{k}: {v}" for k, v in given.items()) if isinstance(given, dict)
                        else str(given or ""))[:PREVIEW_CHARS]
            text.append(f"\n  calls {visible(str(call.get('name')), one_line=True)} ", style="cyan")
            text.append(args, style="dim")
        elif isinstance(part.get("functionResponse"), dict):
            response = part["functionResponse"]
            body = response.get("response")
            raw = body.get("output", body.get("error", "")) if isinstance(body, dict) else body
            first = next((ln for ln in text_lines(str(raw or "")) if ln.strip()), "")
            text.append(f"\n  result of {visible(str(response.get('name')), one_line=True)}: ", style="cyan")
            text.append(gist(first)[:PREVIEW_CHARS], style="dim")
    return text


def gist(text: str) -> str:
    """Text as one line of an excerpt: its line breaks and runs of spaces as one space (never a
    literal ``\\n``), any other control character shown as an escape."""
    return visible(" ".join(text.split()), one_line=True)


class SnapshotLines(Vertical):
    """The snapshot as a list of lines, the selected line's turns below it."""

    DEFAULT_CSS = """
    SnapshotLines #snapshot-search { display: none; }
    SnapshotLines.-searching #snapshot-search { display: block; }
    SnapshotLines #snapshot-lines { height: 1fr; min-height: 4; border: none; }
    SnapshotLines #line-source-pane { height: auto; max-height: 45%; padding: 0 1; background: $panel; }
    SnapshotLines #line-source-pane:focus { background-tint: $foreground 5%; }
    SnapshotLines #line-source { height: auto; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("slash", "search", "Search", id="preview.search", tooltip="search the snapshot's text"),
        Binding("escape", "clear_search", "Clear search", show=False, id="preview.clear-search",
                tooltip="leave the search and show every line"),
        Binding("enter", "open_source", "Go to turn", id="preview.source-turn",
                tooltip="the selected line's first turn, in the session view (from the turns below the lines)"),
    ]

    def __init__(self, snapshot: str | None, provenance: Provenance | None,
                 history: Sequence[dict[str, Any]], *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.entries = entries(snapshot, provenance)
        self.history = history
        self.query_text = ""
        self.shown: list[int] = []  # entry index of each option, -1 for a heading

    def compose(self) -> ComposeResult:
        yield TextField(placeholder="search the snapshot (Enter: back to the lines, Esc: clear)", id="snapshot-search")
        yield OptionList(id="snapshot-lines")
        # The turns of the selected line: Tab reaches them, the arrows and page keys scroll them
        with VerticalScroll(id="line-source-pane"):
            yield Static(Text("Select a line to see the turns it comes from.", style="dim"), id="line-source",
                         markup=False)

    @property
    def lines(self) -> OptionList:
        return self.query_one("#snapshot-lines", OptionList)

    def on_mount(self) -> None:
        self.fill("")

    def fill(self, query: str) -> None:
        """Show the lines holding ``query`` (every line when it is empty), under their section headings."""
        self.query_text = query.strip().lower()
        options: list[Option] = []
        self.shown = []
        section = None
        for number, entry in enumerate(self.entries):
            if self.query_text and self.query_text not in entry.text.lower():
                continue
            if entry.section != section:
                section = entry.section
                options.append(Option(Text(visible(section), style="bold cyan"), disabled=True))
                self.shown.append(-1)
            options.append(Option(self._prompt(entry), id=str(number)))
            self.shown.append(number)
        self.lines.clear_options()
        self.lines.add_options(options)
        first = next((i for i, n in enumerate(self.shown) if n >= 0), None)
        if first is not None:
            self.lines.highlighted = first
        self.show_source(None if first is None else self.entries[self.shown[first]])

    def _prompt(self, entry: Entry) -> Text:
        text = Text("  " + visible(entry.text, one_line=True))
        if self.query_text:
            text.highlight_words([self.query_text], style="reverse", case_sensitive=False)
        if entry.turns:
            text.append(f"  ← {_turns_label(entry.turns)}", style="dim")
        return text

    def matches(self) -> int:
        return sum(1 for n in self.shown if n >= 0)

    def show_source(self, entry: Entry | None) -> None:
        source = self.query_one("#line-source", Static)
        self.query_one("#line-source-pane", VerticalScroll).scroll_home(animate=False)
        if entry is None:
            source.update(Text(f"No line holds “{visible(self.query_text)}”." if self.query_text
                               else "The snapshot is empty.", style="yellow"))
            return
        head = Text()
        if self.query_text:
            head.append(f"{plural(self.matches(), 'line')} of {len(self.entries):,} match. ", style="dim")
        if not entry.turns:
            head.append("This line does not name its turns (only the offline summariser records them).",
                        style="dim")
            source.update(head)
            return
        head.append(f"From {_turns_label(entry.turns)}", style="bold")
        head.append("  (Enter: go to the first in the session; Tab: scroll these turns)", style="dim")
        for turn in entry.turns[:PREVIEW_TURNS]:
            if 0 <= turn < len(self.history):
                head.append("\n")
                head.append_text(describe_turn(turn, self.history[turn]))
        if len(entry.turns) > PREVIEW_TURNS:
            head.append(f"\n… and {plural(len(entry.turns) - PREVIEW_TURNS, 'more turn')}", style="dim")
        source.update(head)

    def selected(self) -> Entry | None:
        index = self.lines.highlighted
        if index is None or not 0 <= index < len(self.shown) or self.shown[index] < 0:
            return None
        return self.entries[self.shown[index]]

    def on_option_list_option_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        event.stop()
        self.show_source(self.selected())

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.action_open_source()

    def action_open_source(self) -> None:
        """Enter on a line, or on its turns below: the first of them in the session view."""
        entry = self.selected()
        if entry is not None and entry.turns:
            self.post_message(ShowTurn(entry.turns[0]))
        elif entry is not None:
            self.notify("This line does not name its turns.", severity="warning", timeout=3)

    def action_search(self) -> None:
        self.add_class("-searching")
        self.query_one("#snapshot-search", Input).focus()

    def on_input_changed(self, event: Input.Changed) -> None:
        event.stop()
        self.fill(event.value)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.lines.focus()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "clear_search":
            return self.has_class("-searching")  # otherwise Esc goes on to the screen (back)
        if action == "open_source":  # the list's own Enter selects; this one is for the turns pane
            return self.screen.focused is self.query_one("#line-source-pane", VerticalScroll)
        return True

    def action_clear_search(self) -> None:
        search = self.query_one("#snapshot-search", Input)
        search.value = ""
        self.fill("")
        self.remove_class("-searching")
        self.lines.focus()


def _turns_label(turns: Sequence[int]) -> str:
    if len(turns) == 1:
        return f"turn {turns[0]:,}"
    if len(turns) <= 4:
        return "turns " + ", ".join(f"{t:,}" for t in turns)
    return f"turns {turns[0]:,}, {turns[1]:,} … {turns[-1]:,} ({len(turns):,})"
