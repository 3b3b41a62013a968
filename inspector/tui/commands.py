"""The command palette: every action by name, "area: verb".

Each entry names the screen it belongs to; the palette offers an entry only
where it applies (and dims none: an action that cannot run now is left out).
``discover`` fills the empty palette with the same list.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from functools import partial

from textual.command import DiscoveryHit, Hit, Hits, Provider
from textual.screen import Screen


@dataclass(frozen=True)
class PaletteCommand:
    name: str
    help: str
    action: str
    screen: str  # the class name of the screen it runs on, or "app"


COMMANDS: tuple[PaletteCommand, ...] = (
    PaletteCommand("session: open", "list the sessions and pick one", "open_list", "app"),
    PaletteCommand("session: reload", "read the open file again", "reload", "SessionScreen"),
    PaletteCommand("split: next", "move the split to the next candidate turn", "split(1)", "SessionScreen"),
    PaletteCommand("split: previous", "move the split to the previous candidate turn", "split(-1)", "SessionScreen"),
    PaletteCommand("split: next agentic", "move the split to the next model turn it may start at (◆)", "agentic(1)",
                   "SessionScreen"),
    PaletteCommand("split: previous agentic", "move the split to the previous model turn it may start at (◆)",
                   "agentic(-1)", "SessionScreen"),
    PaletteCommand("split: reference", "return to the split Gemini CLI would choose", "split_reference",
                   "SessionScreen"),
    PaletteCommand("split: like compact --agentic", "70% of the weight, before a model turn", "agentic_point",
                   "SessionScreen"),
    PaletteCommand("split: here", "start the kept part at the turn under the cursor", "split_here", "SessionScreen"),
    PaletteCommand("turn: go to turn N", "type a turn number", "goto_turn", "SessionScreen"),
    PaletteCommand("turn: search", "find the turns whose text holds some words", "search", "SessionScreen"),
    PaletteCommand("turn: next match", "the next turn the search found", "search_next(1)", "SessionScreen"),
    PaletteCommand("turn: previous match", "the previous turn the search found", "search_next(-1)", "SessionScreen"),
    PaletteCommand("table: filter", "show only some turns: a kind, a tool, user or model, >1000 tokens", "filter",
                   "SessionScreen"),
    PaletteCommand("table: order", "turn order <-> largest turns first", "order", "SessionScreen"),
    PaletteCommand("turn: show in full", "the selected turn in full", "detail", "SessionScreen"),
    PaletteCommand("turn: go to split", "move the cursor to the first kept turn", "goto_split", "SessionScreen"),
    PaletteCommand("turn: largest", "move the cursor to the turn with the most tokens", "largest_turn",
                   "SessionScreen"),
    PaletteCommand("compaction: run", "summarise the turns above the split (offline by default)", "compact",
                   "SessionScreen"),
    PaletteCommand("compaction: run with focus", "type an instruction for the summary, then run", "compact_focus",
                   "SessionScreen"),
    PaletteCommand("compaction: switch strategy", "reference (Gemini CLI's) <-> staged (cheapest stages first)",
                   "strategy", "SessionScreen"),
    PaletteCommand("compaction: compare strategies", "run both strategies on the same history, side by side",
                   "compare", "SessionScreen"),
    PaletteCommand("compaction: switch summariser", "offline -> Gemini -> auto; says which runs and why", "provider",
                   "SessionScreen"),
    PaletteCommand("compaction: show preview", "open the last compaction preview", "show_preview", "SessionScreen"),
    PaletteCommand("compaction: apply", "write the previewed compaction to the session file", "apply",
                   "SessionScreen"),
    PaletteCommand("compaction: revert", "undo the newest applied compaction, byte for byte", "revert",
                   "SessionScreen"),
    PaletteCommand("compaction: timeline", "the compactions applied to this session", "timeline", "SessionScreen"),
    PaletteCommand("sessions: filter", "keep only the sessions matching some words", "filter", "SessionListScreen"),
    PaletteCommand("sessions: rescan", "look for session files again", "rescan", "SessionListScreen"),
    PaletteCommand("view: help", "every key of this screen", "help", "app"),
    PaletteCommand("app: quit", "leave session-inspector", "quit", "app"),
)


def _action_name(action: str) -> str:
    return action.split("(", 1)[0]


class InspectorCommands(Provider):
    """Offers the app's actions in the command palette."""

    def _available(self) -> Iterator[tuple[PaletteCommand, object]]:
        screen: Screen[object] = self.screen
        for command in COMMANDS:
            if command.screen == "app":
                target: object = self.app
            elif type(screen).__name__ == command.screen:
                target = screen
            else:
                continue
            name = _action_name(command.action)
            if not hasattr(target, f"action_{name}"):
                continue
            check = getattr(target, "check_action", None)
            if check is not None and check(name, ()) is not True:
                continue
            yield command, target

    def _runner(self, target: object, action: str):  # type: ignore[no-untyped-def]
        return partial(target.run_action, action)  # type: ignore[attr-defined]

    async def discover(self) -> Hits:
        for command, target in self._available():
            yield DiscoveryHit(command.name, self._runner(target, command.action), help=command.help)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for command, target in self._available():
            score = matcher.match(command.name)
            if score > 0:
                yield Hit(score, matcher.highlight(command.name), self._runner(target, command.action),
                          text=command.name, help=command.help)
