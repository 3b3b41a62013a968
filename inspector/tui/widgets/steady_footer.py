"""A footer rebuilt only when the keys it shows change.

Textual's ``Footer`` makes all its key widgets again whenever its screen's bindings are
refreshed: on every focus change and every ``refresh_bindings``, though the keys, their
labels and whether each is enabled are most often the same.  Each rebuild mounts and
styles a widget per key.  This footer keeps what it drew while those are unchanged.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.widgets import Footer
from textual.widgets._footer import FooterKey


class SteadyFooter(Footer):
    """A ``Footer`` that recomposes only when what ``compose`` would show differs from what it shows."""

    _drawn: tuple[object, ...] | None = None

    def keys_shown(self) -> tuple[object, ...]:
        """What ``Footer.compose`` draws from: each shown binding, whether it is enabled, its tooltip and
        key label, and whether the command palette's key is shown."""
        if not self._bindings_ready:
            return ()
        app = self.app
        keys = tuple(
            (binding, enabled, tooltip, app.get_key_display(binding))
            for key, (_, binding, enabled, tooltip) in self.screen.active_bindings.items()
            if binding.show or key == app.COMMAND_PALETTE_BINDING
        )
        return (self.show_command_palette and app.ENABLE_COMMAND_PALETTE, *keys)

    def compose(self) -> ComposeResult:
        for widget in super().compose():
            if isinstance(widget, FooterKey):  # compact as it will be, before it is mounted, not restyled after
                # Footer binds each key's ``compact`` to its own, but not the command palette's (compact
                # by default, as Textual draws it)
                compact = True if widget.has_class("-command-palette") else self.compact
                widget.set_reactive(FooterKey.compact, compact)
                widget.set_class(compact, "-compact", update=False)
            yield widget

    async def recompose(self) -> None:
        if self.is_attached:
            shown = self.keys_shown()
            if shown == self._drawn:
                return
            self._drawn = shown
        await super().recompose()
