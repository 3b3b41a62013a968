"""Export from the app: the session (and the previewed compaction) as Markdown or HTML, or to the clipboard.

The words and figures come from ``inspector.export``, the same ``build`` and
``render`` that ``session-inspector export`` runs, and the file is written by
the same ``write_export`` (atomic, never over the session itself).  The copy
goes through Textual's ``copy_to_clipboard`` (OSC 52: most terminals pass it
to the system clipboard; macOS Terminal does not).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.events import Key
from textual.widgets import Checkbox, Input, Label, Select, Static

from inspector.export import FORMATS, Format, default_name
from inspector.format import visible
from inspector.tui.screens.dialogs import DialogScreen
from inspector.tui.widgets.steady_footer import SteadyFooter
from inspector.tui.widgets.text_field import TextField
from inspector.user_cache import HomeUnknown, home

FORMAT_LABELS: dict[Format, str] = {"md": "Markdown (.md)", "html": "one HTML page (.html)"}


@dataclass(frozen=True)
class ExportChoice:
    """What the user asked for: the format, where, and whether the preview goes in."""

    fmt: Format
    out: Path
    with_preview: bool


def export_folder() -> Path:
    """Where an export goes unless a folder is typed: the home folder (the folder the app was started
    in may be a repository, where an export does not belong); that folder when no home is known."""
    try:
        return home()
    except HomeUnknown:
        return Path.cwd()


class ExportScreen(DialogScreen[ExportChoice | None]):
    """Where and how to export; Enter writes, Esc cancels."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Cancel", id="export.cancel", tooltip="write nothing"),
    ]

    def __init__(self, session_path: Path, folder: Path, *, preview: str | None) -> None:
        """``preview`` says what the previewed compaction is (None: there is none to include)."""
        super().__init__()
        self.session_path = session_path
        self.folder = folder
        self.preview = preview

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog", id="export-dialog"):
            yield Static(Text(f"Export {visible(self.session_path.name, one_line=True)}", style="bold"), markup=False)
            with Horizontal(classes="export-row"):
                yield Label("format ", classes="run-label")
                yield Select([(FORMAT_LABELS[fmt], fmt) for fmt in FORMATS], value="md", allow_blank=False,
                             id="export-format", type_to_search=False)  # (letters go to the file name: on_key)
            with Horizontal(classes="export-row"):
                yield Label("file ", classes="run-label")
                # (not all selected when Tab comes back to it: a letter typed then would replace the path)
                yield TextField(str(self.folder / default_name(self.session_path, "md")), id="export-path",
                                select_on_focus=False)
            if self.preview is not None:
                yield Checkbox(f"with the previewed compaction ({self.preview})", value=True, id="export-preview")
            yield Static("", id="export-error", markup=False)
            yield Static(Text("Enter: write    Tab: next field    Esc: cancel    (y in the session: copy instead)",
                              style="dim"), id="dialog-keys", markup=False)
        yield SteadyFooter()

    def on_mount(self) -> None:
        self.query_one("#export-path", Input).focus()

    def on_key(self, event: Key) -> None:
        """Typing goes to the file name wherever Tab left the focus (the format list, the checkbox:
        neither takes letters), so a path typed after Tab is never lost; space still ticks the box."""
        field = self.query_one("#export-path", Input)
        focused = self.focused
        if focused is field or isinstance(focused, Input) or not event.is_printable or event.character in (None, " "):
            return
        if isinstance(focused, Select) and focused.expanded:
            return  # the open list takes its own keys
        event.stop()
        event.prevent_default()
        field.focus()
        field.insert_text_at_cursor(event.character)

    def on_select_changed(self, event: Select.Changed) -> None:
        """A new format renames the file's extension, unless the user typed a name of their own."""
        if event.value not in FORMATS:
            return
        field = self.query_one("#export-path", Input)
        path = Path(field.value)
        if path.suffix.lstrip(".") in FORMATS:
            field.value = str(path.with_suffix(f".{event.value}"))

    def on_input_changed(self, event: Input.Changed) -> None:
        """A name typed again: the error about the last one no longer holds."""
        if event.value.strip():
            self.query_one("#export-error", Static).update("")

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        text = event.value.strip()
        if not text:
            self.query_one("#export-error", Static).update(Text("give a file name", style="red"))
            return
        out = Path(text).expanduser()
        if not out.is_absolute():
            out = self.folder / out
        fmt = self.query_one("#export-format", Select).value
        with_preview = bool(self.query(Checkbox)) and self.query_one("#export-preview", Checkbox).value
        self.dismiss(ExportChoice("html" if fmt == "html" else "md", out, with_preview))

    def action_cancel(self) -> None:
        self.dismiss(None)
