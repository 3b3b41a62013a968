"""Export from the session view: the session (and the previewed compaction) as Markdown or HTML,
or the turn at the cursor to the clipboard.

``Exporter`` is a part of ``SessionScreen``.  The words and figures come from
``inspector.export``, the same ``build`` and ``render`` that
``session-inspector export`` runs, and the file is written by the same
``write_export`` (atomic, never over the session itself).  The dialog is
``screens/export.ExportScreen``.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from textual import work

from inspector.format import describe_os_error, plural
from inspector.tui.loading import Loaded
from inspector.tui.preview import Preview
from inspector.tui.screens.export import ExportChoice, ExportScreen, export_folder
from inspector.tui.session.part import Part


class Exporter(Part):
    """``x`` exports the session (and the previewed compaction); ``y`` copies the turn at the cursor."""

    def __init__(self, path: Path) -> None:
        super().__init__()
        self.path = path

    def export(self, shown: Callable[[], tuple[Loaded | None, Preview | None]]) -> None:
        """Ask where and how, then write the version ``shown()`` then (or the history its preview was
        computed from)."""
        _, preview = shown()
        what = None
        if preview is not None:
            what = f"{preview.status}, {preview.strategy}" + (", stale" if preview.stale else "")

        def chosen(choice: ExportChoice | None) -> None:
            if choice is not None:
                self.write_export(choice, *shown())

        self.app.push_screen(ExportScreen(self.path, export_folder(), preview=what), callback=chosen)

    @work(thread=True, exit_on_error=False, group="export", description="exporting")
    def write_export(self, choice: ExportChoice, loaded: Loaded | None, preview: Preview | None) -> None:
        from inspector.export import ExportRefused, build, render, write_export

        result = None
        if choice.with_preview and preview is not None and preview.source is not None:
            loaded, result = preview.source, preview.result  # the history the preview was made from
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

    def copy(self, loaded: Loaded | None, index: int | None) -> None:
        """Turn ``index`` of ``loaded`` to the clipboard, as Markdown."""
        from inspector.export import turn_markdown

        if loaded is None or index is None:
            return
        text = turn_markdown(loaded.analysis, index)
        self.app.copy_to_clipboard(text)
        self.notify(f"Turn {index:,} copied as Markdown ({len(text):,} characters), if the terminal "
                    "passes copies on to the clipboard.", title="Copied", timeout=5)
