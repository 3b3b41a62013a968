"""The app: a session list or one session, help, the command palette, one place for failures."""

from __future__ import annotations

import re
from pathlib import Path
from typing import ClassVar

from textual.app import App
from textual.binding import Binding, BindingType
from textual.dom import DOMNode
from textual.notifications import Notify, SeverityLevel
from textual.screen import Screen
from textual.widgets import Input

from inspector.catalog.listing import is_folder
from inspector.format import visible
from inspector.tui.commands import InspectorCommands
from inspector.tui.running import default_request
from inspector.tui.screens.help import LIST_INTRO, OTHER_INTRO, SEARCH_INTRO, SESSION_INTRO, HelpScreen
from inspector.tui.screens.search import SearchScreen
from inspector.tui.screens.session_list import SessionListScreen
from inspector.tui.session.screen import SessionScreen

TOASTS_SHOWN = 3  # toasts on screen at once, at most (fewer on a short screen: InspectorApp.toasts_shown)
TOAST_ROWS = 6  # one toast's rows with its margin: a title and a message of two or three lines
_SEVERITY_RANK = {"information": 0, "warning": 1, "error": 2}


class InspectorApp(App[None]):
    """session-inspector: where a Gemini CLI session's context goes, and its compaction."""

    TITLE = "session-inspector"
    CSS_PATH = Path(__file__).with_name("app.tcss")
    COMMANDS: ClassVar = {InspectorCommands}  # the app's commands, then Textual's (one provider: a fixed order)
    # Below 120 columns a notification spans the screen, over whole rows (at its right side it hid the
    # table's figures beside their rows, and left the last column of the line under it showing)
    HORIZONTAL_BREAKPOINTS = [(0, "-toasts-across"), (120, "-toasts-aside")]  # noqa: RUF012 (Textual's type)

    BINDINGS: ClassVar[list[BindingType]] = [
        # No key_display: while a text field takes "?", the footer shows the key that still works (f1)
        Binding("question_mark,f1", "help", "Help", id="app.help", tooltip="every key of this screen"),
        Binding("q", "quit", "Quit", id="app.quit", tooltip="leave session-inspector"),
    ]

    def __init__(
        self,
        path: Path | None = None,
        *,
        model: str | None = None,
        threshold: float | None = None,
        live: bool = True,
        provider: str = "offline",
        base_url: str | None = None,
    ) -> None:
        super().__init__()
        self.path = Path(path) if path is not None else None
        self.model = model
        self.threshold = threshold
        self.live = live
        # The request every run derives from (dataclasses.replace): who writes snapshots, --force
        self.request = default_request(provider, base_url)

    def notify(self, message: str, *, title: str = "", severity: SeverityLevel = "information",
               timeout: float | None = None, markup: bool = True) -> None:
        """Every notification, from any screen or widget, is shown as it is: ``visible``, and never
        read as markup (Textual reads it by default, and a widget's ``notify`` passes that on: a
        path holding "[/x]" raised, and session text could style itself).  ``markup`` is taken
        for Textual's signature and ignored."""
        super().notify(visible(message), title=visible(title, one_line=True), severity=severity, timeout=timeout,
                       markup=False)

    def on_notify(self, event: Notify) -> None:
        """Toasts do not pile up over the screen: a notification replaces an earlier one of the same
        words, and no more are shown than ``toasts_shown`` (to make room the least severe go first,
        oldest first: a newer notice never pushes out an error while a less important one is shown).
        Runs before or after Textual's own handler adds the new one; either way the new one stays."""
        new = event.notification
        others = [n for n in self._notifications if n.identity != new.identity]
        same = [n for n in others if (n.title, n.message, n.severity) == (new.title, new.message, new.severity)]
        rest = sorted((n for n in others if n not in same), key=lambda n: (_SEVERITY_RANK[n.severity], n.raised_at))
        dropped = same + rest[:max(0, len(rest) - (self.toasts_shown - 1))]
        for old in dropped:
            self._unnotify(old, refresh=False)
        if dropped:
            self._refresh_notifications()

    @property
    def toasts_shown(self) -> int:
        """How many toasts at most: a toast and its margin take about six rows (a short message at
        80 columns), so together they cover at most half the screen, and never more than three."""
        return max(1, min(TOASTS_SHOWN, self.size.height // (2 * TOAST_ROWS)))

    def on_mount(self) -> None:
        if self.path is not None and not is_folder(self.path):
            self.push_screen(self.session_screen(self.path))
        else:
            self.push_screen(self.list_screen(self.path))

    def list_screen(self, folder: Path | None) -> SessionListScreen:
        return SessionListScreen(folder)

    def session_screen(self, path: Path, turn: int | None = None) -> SessionScreen:
        return SessionScreen(path, model=self.model, threshold=self.threshold, start_turn=turn)

    # -- navigation ----------------------------------------------------------------------
    def open_session(self, path: Path, turn: int | None = None) -> None:
        """Open a session, its cursor on ``turn`` (a search hit) or else at the split."""
        self.push_screen(self.session_screen(path, turn))

    def show_session_list(self, current: Screen[object] | Screen[None] | None = None) -> None:
        """Back: to the list or the search hits below, to the session below (a subagent's parent), or
        else to the list of the current file's folder."""
        below = self.screen_stack[-2] if len(self.screen_stack) > 2 else None
        if isinstance(below, (SessionListScreen, SearchScreen, SessionScreen)):
            self.pop_screen()
            return
        folder = current.path.parent if isinstance(current, SessionScreen) else None
        self.switch_screen(self.list_screen(folder))

    def action_open_list(self) -> None:
        if not isinstance(self.screen, SessionListScreen):
            self.show_session_list(self.screen)

    # -- help ---------------------------------------------------------------------------------
    def help_rows(self, screen: Screen[object]) -> list[tuple[str, str, str, str, str]]:
        nodes: list[DOMNode] = [screen]
        # the app's widgets (a pane's scroll keys too), not a text field's editing keys (TextField is the app's Input)
        nodes.extend(w for w in screen.query("*")
                     if type(w).__module__.startswith("inspector.") and w._bindings and not isinstance(w, Input))
        nodes.append(self)
        rows: list[tuple[str, str, str, str, str]] = []
        seen: set[tuple[str, str]] = set()
        for node in nodes:
            bindings = node._bindings.copy()
            if self._keymap:
                bindings.apply_keymap(self._keymap)
            grouped: dict[str, list[str]] = {}
            info: dict[str, Binding] = {}
            for key_bindings in bindings.key_to_bindings.values():
                for binding in key_bindings:
                    if not binding.description:
                        continue  # Textual's own unnamed bindings (ctrl+c's help_quit): nothing to tell
                    if binding.id is None and binding.action in UNUSED_FRAMEWORK_ACTIONS:
                        continue  # Textual's keys for what no screen here has (sideways scrolling, focus cycling)
                    ident = binding.id or binding.action
                    grouped.setdefault(ident, []).append(self.get_key_display(binding))
                    info.setdefault(ident, binding)
            where = "app" if node is self else ("screen" if node is screen else _words(type(node).__name__))
            for ident, keys in grouped.items():
                if (where, ident) in seen:
                    continue
                seen.add((where, ident))
                binding = info[ident]
                rows.append((where, " ".join(dict.fromkeys(keys)), binding.description or binding.action,
                             binding.tooltip, binding.id or ""))
        return merged_rows(rows)

    def action_help(self) -> None:
        if isinstance(self.screen, HelpScreen):
            return
        self.push_screen(HelpScreen(self.help_rows(self.screen), help_intro(self.screen)))


# Textual's own keys for things no screen of this app has: its lines wrap (no sideways scrolling),
# Tab's focus cycling is what d does (a dialog names its own fields), and text is copied with y.
UNUSED_FRAMEWORK_ACTIONS = frozenset({"app.focus_next", "app.focus_previous", "screen.copy_text", "scroll_left",
                                      "scroll_right", "page_left", "page_right"})


def merged_rows(rows: list[tuple[str, str, str, str, str]]) -> list[tuple[str, str, str, str, str]]:
    """One help row a key and a place: rows of one place with the same key (esc closing the turn or
    going back) become one row naming both, and Textual's unnamed key for an action the app names
    too (^q beside q, both Quit) joins the named row's keys."""
    merged: list[tuple[str, str, str, str, str]] = []
    for where, keys, description, tooltip, ident in rows:
        same = next((i for i, row in enumerate(merged) if row[0] == where and (row[1] == keys or ((
            not ident or not row[4]) and row[2].lower() == description.lower()))), None)
        if same is None:
            merged.append((where, keys, description, tooltip, ident))
            continue
        w, k, d, t, i = merged[same]
        if k == keys:
            merged[same] = (w, k, f"{d} / {description}", "; ".join(x for x in (t, tooltip) if x),
                            ",".join(x for x in (i, ident) if x))  # (one word: never broken over lines)
        else:
            merged[same] = (w, f"{k} {keys}", d, t or tooltip, i or ident)
    return merged


def help_intro(screen: Screen[object]) -> str:
    """What help says first: what the screen it is asked on is for."""
    if isinstance(screen, SessionScreen):
        return SESSION_INTRO
    if isinstance(screen, SessionListScreen):
        return LIST_INTRO
    if isinstance(screen, SearchScreen):
        return SEARCH_INTRO
    return OTHER_INTRO


def _words(class_name: str) -> str:
    """A widget's class name as help says where its keys work: "TurnDetail" -> "turn detail"."""
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", class_name).lower()
