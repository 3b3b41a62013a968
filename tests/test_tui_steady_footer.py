"""The footer is rebuilt only when the keys it shows change: a refresh of the bindings that changes
nothing (a focus change, ``refresh_bindings``) keeps its key widgets, and a key that is enabled,
disabled, added or relabelled is drawn at once.  Its keys are made compact or not as the footer is,
before they are mounted."""

from __future__ import annotations

from typing import ClassVar

from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.widgets import Input
from textual.widgets._footer import FooterKey

from inspector.tui.session.screen import SessionScreen
from inspector.tui.widgets.steady_footer import SteadyFooter
from tests.snapshot_app import build_app, sample, settle


class KeysApp(App[None]):
    BINDINGS: ClassVar[list[BindingType]] = [Binding("f2", "act", "Act"), Binding("f3", "other", "Other")]
    can_act = True

    def compose(self) -> ComposeResult:
        yield Input(id="one")
        yield Input(id="two")
        yield SteadyFooter()

    def action_act(self) -> None:
        pass

    def action_other(self) -> None:
        pass

    def action_third(self) -> None:
        pass

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        return None if action == "act" and not self.can_act else True  # None: shown, disabled


def keys(app: App[None]) -> dict[str, FooterKey]:
    return {key.key: key for key in app.screen.query(FooterKey)}


async def test_a_refresh_that_changes_nothing_keeps_the_keys_and_a_change_is_drawn() -> None:
    app = KeysApp()
    async with app.run_test(size=(80, 10)) as pilot:
        await settle(pilot)
        first = keys(app)
        assert set(first) >= {"f2", "f3"} and not first["f2"].has_class("-disabled")
        assert not any(key.compact or key.has_class("-compact") for key in first.values()
                       if not key.has_class("-command-palette"))  # Textual draws that one compact
        app.query_one("#two", Input).focus()
        app.refresh_bindings()
        await settle(pilot)
        assert keys(app) == first and all(keys(app)[k] is first[k] for k in first)
        app.can_act = False
        app.refresh_bindings()
        await settle(pilot)
        assert keys(app)["f2"].has_class("-disabled") and keys(app)["f2"] is not first["f2"]
        app.bind("f4", "third", description="Zed")
        app.refresh_bindings()
        await settle(pilot)
        assert keys(app)["f4"].description == "Zed"


async def test_the_session_screens_footer_keeps_its_keys_across_a_focus_change() -> None:
    app = build_app(sample("coding-task.jsonl"))
    async with app.run_test(size=(160, 45)) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, SessionScreen)
        first = list(screen.query(FooterKey))
        assert {key.description for key in first} >= {"Help", "Quit"}
        assert all(key.compact and key.has_class("-compact") for key in first)
        screen.refresh_bindings()
        await settle(pilot)
        assert list(screen.query(FooterKey)) == first
