"""Issue 12.8: a key a server echoes back in a 200 reply reaches neither stdout, nor the session, nor the journal."""

from __future__ import annotations

import base64
import shutil
from pathlib import Path

import pytest

from inspector.cli import main
from tests.gemini_server import GeminiServer, reply

SAMPLE = Path(__file__).resolve().parents[1] / "sample_sessions" / "coding-task.jsonl"
KEY = "AIzaEchoedBack-0123456789abcdefXYZ"


def forms(key: str) -> list[str]:
    """The key, and pieces of it base64-encoded at each alignment inside a longer text."""
    encoded = [base64.b64encode(f"{pad}{key}".encode()).decode() for pad in ("", "a", "ab")]
    return [key, *(e[4:-4] for e in encoded), *(e.replace("+", "-").replace("/", "_")[4:-4] for e in encoded)]


ECHO = ("<state_snapshot><key_knowledge>\n"
        f"- your key: {KEY}\n- shouted: {KEY.upper()}\n- whispered: {KEY.lower()}\n"
        f"- encoded: {base64.b64encode(('x-goog-api-key: ' + KEY).encode()).decode()}\n"
        f"- url-safe: {base64.urlsafe_b64encode(('k=' + KEY).encode()).decode()}\n"
        "</key_knowledge></state_snapshot>")


def _session_with_key(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A session under ``tmp_path/chats``, and GEMINI_API_KEY (only) set to KEY."""
    for name in ("GOOGLE_API_KEY", "GOOGLE_GENAI_USE_VERTEXAI", "GOOGLE_CLOUD_PROJECT"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("GEMINI_API_KEY", KEY)
    chats = tmp_path / "chats"
    chats.mkdir()
    return Path(shutil.copyfile(SAMPLE, chats / SAMPLE.name))


def test_an_echoed_key_is_masked_everywhere(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    session = _session_with_key(tmp_path, monkeypatch)
    echo = ECHO
    with GeminiServer([reply(echo), reply(echo)]) as server:
        code = main(["compact", str(session), "--force", "--provider", "gemini", "--base-url", server.url,
                     "--apply", "--json"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert len(server.bodies()) == 2 and "***" in session.read_text()
    written = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert len(written) > 1  # the session, and the store's journal and backup
    texts = {str(p): p.read_bytes().decode("utf-8", "replace") for p in written}
    texts["stdout"], texts["stderr"] = captured.out, captured.err
    for where, text in texts.items():
        if where.endswith(".bak"):
            continue  # the untouched original session, written before any reply
        for form in forms(KEY):
            assert form not in text, (where, form)
        assert KEY.casefold() not in text.casefold(), where  # in no letter case either


async def test_the_app_masks_an_echoed_key_on_screen_and_on_disk(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    from inspector.tui.app import InspectorApp
    from inspector.tui.screens.dialogs import ConfirmScreen
    from inspector.tui.screens.snapshot import SnapshotScreen
    from tests.snapshot_app import idle

    session = _session_with_key(tmp_path, monkeypatch)
    echo = ECHO

    def screen_text(app: InspectorApp) -> str:
        return str(app.screen._compositor.render_full_update().render_segments(app.console))

    with GeminiServer([reply(echo), reply(echo)]) as server:
        app = InspectorApp(session, threshold=0.5, live=False, provider="gemini", base_url=server.url)
        async with app.run_test(size=(160, 50)) as pilot:
            await idle(pilot)
            await pilot.press("c")
            await idle(pilot)
            assert isinstance(app.screen, SnapshotScreen) and len(server.bodies()) == 2
            shown = [screen_text(app)]
            for tab in "12345":
                await pilot.press(tab)
                await pilot.pause()
                shown.append(screen_text(app))
            await pilot.press("a")
            await idle(pilot)
            assert isinstance(app.screen, ConfirmScreen)
            await pilot.press("y")
            await idle(pilot)
            await pilot.press("t")
            await idle(pilot)
            shown.append(screen_text(app))
            shown += [n.message for n in app._notifications]
    assert "***" in session.read_text(), "the apply wrote the masked snapshot"
    texts = {f"screen {i}": text for i, text in enumerate(shown)}
    texts.update({str(p): p.read_bytes().decode("utf-8", "replace") for p in tmp_path.rglob("*")
                  if p.is_file() and not p.name.endswith(".bak")})
    for where, text in texts.items():
        for form in forms(KEY):
            assert form not in text, (where, form)
