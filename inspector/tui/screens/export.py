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
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.events import Key
from textual.widgets import Checkbox, Footer, Input, Label, Select, Static

from inspector.export import FORMATS, Format, default_name
from inspector.format import describe_os_error, plural, visible
from inspector.tui.loading import Loaded
from inspector.tui.preview import Preview
from inspector.tui.screens.base import InspectorScreen
from inspector.tui.screens.dialogs import DialogScreen
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
        yield Footer()

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


class SessionExport(InspectorScreen):
    """``x`` exports the session (and the previewed compaction); ``y`` copies the turn at the cursor."""

    path: Path
    loaded: Loaded | None
    preview: Preview | None = None

    def cursor_turn(self) -> int | None:
        raise NotImplementedError  # SessionScreen: the turn under the table's cursor

    def action_export(self) -> None:
        preview = self.preview
        what = None
        if preview is not None:
            what = f"{preview.status}, {preview.strategy}" + (", stale" if preview.stale else "")

        def chosen(choice: ExportChoice | None) -> None:
            if choice is not None:
                self.write_export(choice)

        self.app.push_screen(ExportScreen(self.path, export_folder(), preview=what), callback=chosen)

    @work(thread=True, exit_on_error=False, group="export", description="exporting")
    def write_export(self, choice: ExportChoice) -> None:
        from inspector.export import ExportRefused, build, render, write_export

        loaded, result = self.loaded, None
        if choice.with_preview and self.preview is not None and self.preview.source is not None:
            loaded, result = self.preview.source, self.preview.result  # the history the preview was made from
        if loaded is None:
            return
        text = render(build(loaded.session, loaded.analysis, result), choice.fmt)
        try:
            size = write_export(text, choice.out, self.path)
        except ExportRefused as exc:
            self.app.call_from_thread(self.notify, str(exc), title="Not exported", severity="error")
            return
        except OSError as exc:
            self.app.call_from_thread(self.notify, f"{choice.out}: {describe_os_error(exc)}",
                                      title="Not exported", severity="error")
            return
        turns = plural(len(loaded.analysis.turns), "turn")
        snapshot = " and the compaction snapshot" if result is not None else ""
        self.app.call_from_thread(self.notify, f"Wrote {choice.out} ({size:,} bytes: {turns}{snapshot}).",
                                  title="Exported", timeout=8)

    def action_copy(self) -> None:
        from inspector.export import turn_markdown

        index = self.cursor_turn()
        if self.loaded is None or index is None:
            return
        text = turn_markdown(self.loaded.analysis, index)
        self.app.copy_to_clipboard(text)
        self.notify(f"Turn {index:,} copied as Markdown ({len(text):,} characters), if the terminal "
                    "passes copies on to the clipboard.", title="Copied", timeout=5)
