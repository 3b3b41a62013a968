"""Issue 12.8: a key a server echoes back in a 200 reply reaches neither stdout, nor the session, nor the journal.

Issue 37.7: nor does it altered (a part of it, reversed, hex, percent-encoded, split by whitespace or invisible
characters), in a reply or in an error; the real google-genai client talks to the loopback Gemini server.
"""

from __future__ import annotations

import base64
import shutil
import textwrap
import unicodedata
import urllib.parse
from pathlib import Path

import pytest

from inspector.cli import main
from inspector.compaction.summarisers.base import MASK, mask_secrets
from tests.gemini_server import GeminiServer, error, reply

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


@pytest.mark.parametrize("altered_forms", [False, True], ids=["verbatim", "altered"])
async def test_the_app_masks_an_echoed_key_on_screen_and_on_disk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                 altered_forms: bool) -> None:
    from inspector.tui.app import InspectorApp
    from inspector.tui.screens.dialogs import ConfirmScreen, ForgettingScreen
    from inspector.tui.screens.snapshot import SnapshotScreen
    from tests.snapshot_app import idle

    session = _session_with_key(tmp_path, monkeypatch)
    key, echo = (ALTERED_KEY, ALTERED_ECHO) if altered_forms else (KEY, ECHO)
    monkeypatch.setenv("GEMINI_API_KEY", key)

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
            if isinstance(app.screen, ForgettingScreen):  # under the recall threshold the apply is asked twice
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
        for form in forms(key):
            assert form not in text, (where, form)
        readable = text.encode().decode("unicode_escape", "replace") if where.startswith("/") else text
        assert not leaks(text, key) and not leaks(readable, key), (where, leaks(readable, key))


# -- issue 37.7: the key altered on its way back ------------------------------------------------------

ALTERED_KEY = "sk-TEST-SECRET-12Wq8Zr4Vx9Ty2Lp"
ZERO_WIDTH = "\u200b"


def altered(key: str) -> dict[str, str]:
    """The key as a server may echo it when not verbatim."""
    return {
        "partial": key[:17],
        "minus its last character": key[:-1],
        "suffix": key[-9:],
        "split by a newline": f"{key[:10]}\n{key[10:]}",
        "split by spaces": " ".join(key[i:i + 4] for i in range(0, len(key), 4)),
        "zero-width spaces": ZERO_WIDTH.join(key),
        "soft hyphens and joiners": "\u00ad\u200d".join(key),
        "percent-encoded": "".join(f"%{b:02X}" for b in key.encode()),
        "percent-encoded in part": urllib.parse.quote(key, safe="") .replace("-", "%2d"),
        "reversed": key[::-1],
        "hex": key.encode().hex(),
        "HEX": key.encode().hex().upper(),
        "hex of a part": key[3:14].encode().hex(),
        "base64 minus its last character": base64.b64encode(key[:-1].encode()).decode(),
        "base64 wrapped": "\n".join(textwrap.wrap(base64.b64encode(b"key=" + key.encode()).decode(), 8)),
    }


def leaks(text: str, key: str) -> list[str]:
    """Every way ``key`` is still readable in ``text`` (a check written apart from the masking code): a run of
    8+ of its characters, in any case, forwards or backwards, once invisible characters and whitespace are
    taken out and percent-encodings decoded; 8+ of its bytes in hex; 12+ characters of its base64."""
    flat = "".join(ch for ch in urllib.parse.unquote(text)
                   if not ch.isspace() and unicodedata.category(ch) not in ("Cf", "Mn"))
    low = flat.lower()
    found = [f"{key[i:i + 8]!r}" for i in range(len(key) - 7) if key[i:i + 8].lower() in low]
    found += [f"reversed {key[i:i + 8]!r}" for i in range(len(key) - 7) if key[i:i + 8][::-1].lower() in low]
    hexed = key.encode().hex()
    found += [f"hex {hexed[i:i + 16]}" for i in range(0, len(hexed) - 15, 2) if hexed[i:i + 16] in low]
    for pad in range(3):
        encoded = base64.b64encode(b"\0" * pad + key.encode()).decode()
        pure = encoded[-(-8 * pad // 6):(8 * (pad + len(key))) // 6]
        for alphabet in (pure, pure.replace("+", "-").replace("/", "_")):
            found += [f"base64 {alphabet[i:i + 12]}" for i in range(len(alphabet) - 11) if alphabet[i:i + 12] in flat]
    return found


def test_the_leak_check_sees_every_altered_form() -> None:
    for name, form in altered(ALTERED_KEY).items():
        assert leaks(f"said: {form} (end)", ALTERED_KEY), name
    assert not leaks("an ordinary reply about sk-learn and TEST-driven SECRET handling", ALTERED_KEY)


def test_every_altered_form_is_masked_by_the_one_rule() -> None:
    for name, form in altered(ALTERED_KEY).items():
        shown = mask_secrets(f"said: {form} (end)", [ALTERED_KEY])
        assert not leaks(shown, ALTERED_KEY), (name, shown)
        assert shown.startswith("said: ") and shown.endswith(" (end)") and MASK in shown, (name, shown)
    ordinary = "keep sk-learn, TEST and SECRET words; 0123 abcd"
    assert mask_secrets(ordinary, [ALTERED_KEY]) == ordinary


ALTERED_ECHO = ("<state_snapshot><key_knowledge>\n"
                + "".join(f"- {name}: {form}\n" for name, form in altered(ALTERED_KEY).items())
                + "</key_knowledge></state_snapshot>")


def _texts_written(tmp_path: Path) -> dict[str, str]:
    return {str(p): p.read_bytes().decode("utf-8", "replace") for p in tmp_path.rglob("*")
            if p.is_file() and not p.name.endswith(".bak")}  # a backup: the untouched original


def test_an_altered_key_is_masked_in_the_session_the_journal_and_stdout(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    session = _session_with_key(tmp_path, monkeypatch)
    monkeypatch.setenv("GEMINI_API_KEY", ALTERED_KEY)
    with GeminiServer([reply(ALTERED_ECHO), reply(ALTERED_ECHO)]) as server:
        code = main(["compact", str(session), "--force", "--provider", "gemini", "--base-url", server.url,
                     "--apply", "--json"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    texts = _texts_written(tmp_path)
    assert any(name.endswith("journal.jsonl") for name in texts) and MASK in session.read_text()
    texts["stdout"], texts["stderr"] = captured.out, captured.err
    for where, text in texts.items():
        # the files hold JSON: read its escapes (\\n, \\u200b) as the characters they are
        readable = text.encode().decode("unicode_escape", "replace") if where != "stdout" else text
        assert not leaks(text, ALTERED_KEY) and not leaks(readable, ALTERED_KEY), (where, leaks(readable, ALTERED_KEY))


@pytest.mark.parametrize("as_json", [False, True])
def test_an_altered_key_in_an_error_reaches_neither_stdout_nor_stderr(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, as_json: bool) -> None:
    session = _session_with_key(tmp_path, monkeypatch)
    monkeypatch.setenv("GEMINI_API_KEY", ALTERED_KEY)
    forms = altered(ALTERED_KEY)
    message = (f"API key not valid: partial {forms['partial']}, encoded {forms['percent-encoded']}, "
               f"as sent {forms['zero-width spaces']} / {forms['reversed']} / {forms['hex']}")
    with GeminiServer([error(400, "INVALID_ARGUMENT", message)]) as server:
        code = main(["compact", str(session), "--force", "--provider", "gemini", "--base-url", server.url,
                     *(["--json"] if as_json else [])])
    captured = capsys.readouterr()
    assert code == 1, captured
    said = captured.out + captured.err
    assert "400" in said and "API key not valid" in said, said  # the error is said
    readable = said.encode().decode("unicode_escape", "replace") if as_json else said
    assert not leaks(said, ALTERED_KEY) and not leaks(readable, ALTERED_KEY), leaks(readable, ALTERED_KEY)
