"""The detail pane: the selected turn whole, scrollable; a text too long to lay out quickly (a
20 MB tool output took minutes to wrap) is shown by its two ends, saying how much lies between.

Session text is untrusted, so everything is built as ``rich.text.Text`` (or a
``Syntax`` for JSON) and never parsed as markup: a message holding
``[link=...]`` or ``[/]`` shows literally.
"""

from __future__ import annotations

from typing import Any

from rich.console import Group, RenderableType
from rich.rule import Rule
from rich.syntax import Syntax
from rich.text import Text
from textual.containers import VerticalScroll
from textual.widgets import Static

from inspector.analysis import Analysis, turn_kind
from inspector.format import plural, usage_text, usage_words, visible
from inspector.jsjson import js_stringify, js_to_string
from inspector.session.history import Turn
from inspector.session.tail import TailRead
from inspector.tokens import part_quarters
from inspector.tui.cost_lines import cost_lines
from inspector.tui.masking_marks import masking_lines

# Highlighting is a luxury: above this many characters JSON is shown as plain text.
HIGHLIGHT_LIMIT = 60_000
# Above this many characters a text shows its first and last EDGE characters only (about 2,500
# lines at 80 columns); the turn is whole in the file, in an export (x) and in a copy (y).
SHOWN_LIMIT = 200_000
EDGE = 80_000


def text_block(text: str, style: str = "") -> RenderableType:
    """Session text shown literally; a very long one by its two ends and what lies between."""
    if len(text) <= SHOWN_LIMIT:
        return Text(visible(text), style=style)
    hidden = len(text) - 2 * EDGE
    note = Text(f"[… {hidden:,} characters not shown here: y copies the whole turn, x exports the session …]",
                style="bold yellow")
    return Group(Text(visible(text[:EDGE]), style=style), note, Text(visible(text[-EDGE:]), style=style))


def json_block(value: Any) -> RenderableType:
    text = js_stringify(value, indent=2)
    if len(text) > HIGHLIGHT_LIMIT:
        return text_block(text)
    return Syntax(visible(text), "json", theme="ansi_dark", word_wrap=True, background_color="default")


def _heading(label: str, tokens: int | None = None) -> Text:
    text = Text(label, style="bold")
    if tokens is not None:
        text.append(f"  ({plural(tokens, 'token')})", style="dim")
    return text


def part_renderables(part: Any) -> list[RenderableType]:
    """One part as headings and bodies."""
    tokens = part_quarters(part) // 4
    if not isinstance(part, dict):
        return [_heading("value", tokens), json_block(part)]
    if part.get("thought"):
        return [_heading("thought", tokens), text_block(js_to_string(part.get("text", "")), style="italic")]
    if isinstance(part.get("text"), str):
        return [_heading("text", tokens), text_block(part["text"])]
    call = part.get("functionCall")
    if isinstance(call, dict):
        name = visible(js_to_string(call.get("name", "?")), one_line=True)
        return [_heading(f"tool call: {name}", tokens), json_block(call.get("args", {}))]
    response = part.get("functionResponse")
    if isinstance(response, dict):
        name = visible(js_to_string(response.get("name", "?")), one_line=True)
        payload = response.get("response")
        out: list[RenderableType] = [_heading(f"tool result: {name}", tokens)]
        if isinstance(payload, dict) and isinstance(payload.get("output"), str):
            out.append(text_block(payload["output"]))
            rest = {k: v for k, v in payload.items() if k != "output"}
            if rest:
                out.append(json_block(rest))
        else:
            out.append(json_block(payload))
        nested = response.get("parts")
        if isinstance(nested, list):
            for inner in nested:
                out.extend(part_renderables(inner))
        return out
    for key in ("inlineData", "fileData"):
        data = part.get(key)
        if isinstance(data, dict):
            mime = visible(js_to_string(data.get("mimeType", "?")), one_line=True)
            size = len(data.get("data", "")) if isinstance(data.get("data"), str) else None
            where = data.get("fileUri")
            label = f"{key}: {mime}" + (f", {size:,} base64 chars" if size is not None else "")
            body = (Text(visible(js_to_string(where), one_line=True)) if where
                    else Text("(binary data not shown)", style="dim"))
            return [_heading(label, tokens), body]
    return [_heading("part", tokens), json_block(part)]


def turn_renderable(analysis: Analysis, index: int, split: int, highlight: str = "",
                    notes_pending: bool = False) -> RenderableType:
    """The turn whole; the words of ``highlight`` (a search) marked wherever they appear as plain text;
    ``notes_pending``: masking and cost are being worked out."""
    side = "summarised" if index < split else "kept"
    notes: list[RenderableType] = [Text("masking and cost: being worked out…", style="dim")] if notes_pending \
        else [*masking_lines(analysis, index), *cost_lines(analysis, index)]  # tui/masking_marks.py, cost_lines.py
    return _turn_group(analysis.turns[index], f"turn {index:,}", analysis.turn_tokens(index), side,
                       analysis.json_chars[index], notes, analysis.recorded[index], highlight)


def tail_turn_renderable(tail: TailRead, index: int) -> RenderableType:
    """A turn of the file's tail, shown while the whole file is read: its number, side and masking
    and cost still being read."""
    notes: list[RenderableType] = [Text("its number in the history, masking and cost: reading…", style="dim")]
    return _turn_group(tail.turns[index], "turn …", tail.tokens(index), "reading…", tail.index.json_lengths[index],
                       notes, tail.index.usage[index], "")


def _turn_group(turn: Turn, number: str, tokens: int, side: str, json_chars: int, notes: list[RenderableType],
                usage: dict[str, Any] | None, highlight: str) -> RenderableType:
    title = Text.assemble(
        (number, "bold"), " · ", (visible(turn.role, one_line=True), "bold"), " · ",
        visible(turn_kind(turn.content), one_line=True),
        " · ", (plural(tokens, "est. token"), "bold"), " · ", (side, "dim"),
    )
    lines: list[RenderableType] = [title]
    meta = Text(style="dim")
    if turn.record_id:
        meta.append(f"record {visible(str(turn.record_id), one_line=True)}")
        if turn.is_tool_result:
            meta.append(" (tool results)")
    meta.append(f"  json {json_chars:,} chars")
    lines.append(meta)
    lines.extend(notes)
    if usage:
        lines.append(Text.assemble(("recorded usage: ", "bold"), usage_words(usage),
                                   ("  (" + usage_text(usage) + ")", "dim")))
    for part in turn.parts:
        lines.append(Rule(style="dim"))
        lines.extend(part_renderables(part))
    if not turn.parts:
        lines.append(Text("(no parts)", style="dim"))
    if highlight:
        for line in lines[2:]:
            for piece in line.renderables if isinstance(line, Group) else [line]:  # (a long text's two ends)
                if isinstance(piece, Text):
                    piece.highlight_words([visible(highlight)], style="reverse", case_sensitive=False)
    return Group(*lines)


class TurnDetail(VerticalScroll, can_focus=True):
    """The selected turn, in full."""

    DEFAULT_CSS = """
    TurnDetail { padding: 0 1; }
    TurnDetail > #detail-body { width: 1fr; }
    """

    def compose(self):  # type: ignore[no-untyped-def]
        yield Static(Text("No turn selected.", style="dim"), id="detail-body", markup=False)

    def show(self, analysis: Analysis, index: int, split: int, highlight: str = "", *,
             notes_pending: bool = False) -> None:
        body = self.query_one("#detail-body", Static)
        if not 0 <= index < len(analysis.turns):
            body.update(Text("No turn selected.", style="dim"))
            return
        body.update(turn_renderable(analysis, index, split, highlight, notes_pending))
        self.scroll_home(animate=False)

    def show_tail(self, tail: TailRead, index: int) -> None:
        """A turn of the file's tail (``session.tail``), while the whole file is read."""
        body = self.query_one("#detail-body", Static)
        if not 0 <= index < len(tail.turns):
            body.update(Text("No turn selected.", style="dim"))
            return
        body.update(tail_turn_renderable(tail, index))
        self.scroll_home(animate=False)

    @property
    def body(self) -> Static:
        return self.query_one("#detail-body", Static)
