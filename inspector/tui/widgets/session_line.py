"""One session in a line, as the session list and the search show the one under the cursor."""

from __future__ import annotations

from rich.text import Text

from inspector.format import visible


def named_in_full(file_name: str, session_id: str | None, title: str, width: int) -> Text:
    """One session as the line under a list shows it: its file name first, then its id and title,
    cut only at the line's end (``width``)."""
    text = Text(visible(file_name, one_line=True), style="bold")
    if session_id:
        text.append(f"  {visible(session_id, one_line=True)}", style="dim")
    if title:
        text.append(f"  {visible(title, one_line=True)}")
    text.truncate(max(width, 1), overflow="ellipsis")
    return text
