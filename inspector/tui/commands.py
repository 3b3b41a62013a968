"""The command palette: every key of the screen by name, plus the app's actions without a key.

The entries come from the bindings themselves (their description, tooltip and
key), so the palette offers exactly what the footer and the help screen show,
and an action that cannot run now (``check_action``) is left out.  ``discover``
fills the empty palette with the same list.

Textual's own commands (keys, theme, screenshot, quit...) come after the app's
from the same provider: with two providers the empty palette listed them in
whichever order the two answered, which changed from run to run.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import partial
from typing import Any

from textual.app import App
from textual.command import DiscoveryHit, Hit, Hits, Provider
from textual.screen import Screen


@dataclass(frozen=True)
class PaletteCommand:
    name: str
    help: str
    action: str
    target: Screen[Any] | App[Any]  # the screen or the app that runs it


UNBOUND: tuple[tuple[str, str, str], ...] = (  # (name, help, app action): actions with no key of their own
    ("Open a session", "list the sessions and pick one", "open_list"),
)


def palette_commands(screen: Screen[Any]) -> Iterator[PaletteCommand]:
    """What the palette offers on ``screen``: its enabled bindings and the app's, once per action."""
    app = screen.app
    seen: set[tuple[int, str]] = set()
    for active in screen.active_bindings.values():
        binding = active.binding
        node = screen if active.node is screen else app if active.node is app else None
        if node is None:
            continue  # a widget's own keys (cursor moves) are not commands
        if not binding.id or not binding.description or not active.enabled:
            continue
        if (id(node), binding.action) in seen:
            continue
        seen.add((id(node), binding.action))
        help_text = f"{binding.tooltip or binding.description}  (key {app.get_key_display(binding)})"
        yield PaletteCommand(binding.description, help_text, binding.action, node)
    for name, help_text, action in UNBOUND:
        yield PaletteCommand(name, help_text, action, app)


class InspectorCommands(Provider):
    """Offers the app's actions in the command palette, then Textual's own (by name)."""

    def _entries(self) -> Iterator[tuple[str, str, Callable[[], object], bool]]:
        """(name, help, what it runs, shown in the empty palette) of every command, in order."""
        names = set()
        for command in palette_commands(self.screen):
            names.add(command.name)
            yield command.name, command.help, partial(command.target.run_action, command.action), True
        for system in sorted(self.app.get_system_commands(self.screen), key=lambda c: c.title):
            if system.title not in names:  # "Quit": the app's own, with its key
                yield system.title, system.help, system.callback, system.discover

    async def discover(self) -> Hits:
        for name, help_text, run, shown in self._entries():
            if shown:
                yield DiscoveryHit(name, run, help=help_text)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for name, help_text, run, _ in self._entries():
            score = matcher.match(name)
            if score > 0:
                yield Hit(score, matcher.highlight(name), run, text=name, help=help_text)
