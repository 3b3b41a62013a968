"""Issue 37.5: ``--serve`` works with no network at all, and no log line holds its token.

The page test loads the served page in headless Chromium where no host name
but loopback's resolves (tests/browser.py), records every request the page
makes through the DevTools protocol, and asserts each went to the server on
127.0.0.1, the font included, while the app is drawn.  The log test drives
the server with the printed URL, its scripts, its WebSocket and malformed
tokens (non-ASCII, bytes that are no UTF-8), stops it, and reads everything it
wrote: the token is nowhere, nor any traceback.
"""

from __future__ import annotations

import logging
import urllib.parse
from pathlib import Path

import pytest

from inspector.serve.server import RedactingFormatter, redacted, token_matches
from tests.browser import Chromium, evaluate, free_port, served, served_url, stop_group
from tests.test_serve import SAMPLE, _status, needs_browser

FONT_LOADED = """document.fonts.ready.then(() => Array.from(document.fonts)
  .filter((face) => face.family.replace(/"/g, "") === "Roboto Mono" && face.status === "loaded").length)"""


def test_the_page_reaches_nothing_but_loopback_and_draws_in_its_own_font(tmp_path: Path) -> None:
    needs_browser()
    port = free_port()
    with served(SAMPLE, port, tmp_path / "serve.log", "--no-watch", "--threshold", "0.5"):
        url = served_url(tmp_path / "serve.log")
        browser = Chromium(tmp_path / "chromium")
        try:
            page = browser.open(url)
            found, screen = browser.wait_for_text(page, [SAMPLE.name, "est. tok"])
            loaded_faces = evaluate(browser, page, FONT_LOADED)
            requested = browser.requested(page)
        finally:
            browser.close()
    assert found, f"the page never showed the session; the screen was:\n{screen}"
    hosts = {urllib.parse.urlsplit(u).netloc for u in requested if urllib.parse.urlsplit(u).scheme not in ("data",)}
    assert hosts == {f"127.0.0.1:{port}"}, f"the page reached for {sorted(hosts)}: {requested}"
    fonts = [u for u in requested if u.endswith(".ttf")]
    assert fonts and all("/static/" in u for u in fonts), requested  # the font came from this server
    assert loaded_faces and loaded_faces >= 1, "the terminal's font never loaded"


def test_no_log_line_holds_the_token_and_a_malformed_token_is_a_403(tmp_path: Path) -> None:
    needs_browser()
    port = free_port()
    log = tmp_path / "serve.log"
    with served(SAMPLE, port, log, "--no-watch") as server:
        url = served_url(log)
        token = url.split("token=", 1)[1]
        base = f"http://127.0.0.1:{port}"
        for odd in ("%C3%A9", "%FF", "%", "%ED%A0%80", token[:-1] + "%C3%A9", "é" * 40):
            assert _status(f"{base}/?token={urllib.parse.quote(odd, safe='%')}") == 403, odd
        assert _status(url) == 200
        assert _status(f"{base}/static/{token}/js/textual.js") == 200
        assert _status(f"{base}/static/{token}/no-such-file") == 404
        browser = Chromium(tmp_path / "chromium")
        try:
            page = browser.open(url)  # the page, its scripts, its font and the WebSocket that drives the app
            found, screen = browser.wait_for_text(page, [SAMPLE.name])
        finally:
            browser.close()
        assert found, screen
        stop_group(server)  # every line it would write is written
    text = log.read_text(errors="replace")
    printed, _, logged = text.partition("keep it secret")
    assert token in printed  # the URL printed once, for the user to open
    assert "GET /" in logged and "/ws/***" in logged and "/static/***/" in logged, logged  # the access log ran
    assert token not in logged and token[:12] not in logged, logged
    assert "Traceback" not in logged and " 500 " not in logged, logged


def test_redacted_hides_every_place_a_token_stands() -> None:
    token = "Zm9vYmFyYmF6cXV4LXRva2VuLWhlcmUtMTIzNDU2"
    lines = [
        f'127.0.0.1 [28/Nov/2026:16:00:00 +0000] "GET /?token={token} HTTP/1.1" 200 1234 "-" "Mozilla"',
        f'"GET /ws/{token}?width=80&height=24 HTTP/1.1" 101 0',
        f'"GET /static/{token}/js/textual.js HTTP/1.1" 200 9',
        f'"GET /?delay=1&token={token[:-3]}xyz HTTP/1.1" 403 0 "http://127.0.0.1:8000/?token={token}" "x"',
        f"next=http%3A%2F%2F127.0.0.1%3A8000%2F%3Ftoken%3D{token}",
        f"ValueError: cannot read {token}",
    ]
    for line in lines:
        shown = redacted(line, token)
        assert token not in shown and token[:16] not in shown, shown
        assert "***" in shown
    assert redacted('"GET /favicon.ico HTTP/1.1" 404', token) == '"GET /favicon.ico HTTP/1.1" 404'


def test_a_logged_traceback_is_plain_and_redacted() -> None:
    token = "s3cr3t-t0ken-value-abcdefghijklmnop"
    try:
        secret = token  # noqa: F841  (a local a rich traceback would have shown)
        raise TypeError(f"comparing {token} failed")
    except TypeError:
        record = logging.LogRecord("aiohttp.server", logging.ERROR, __file__, 1, "Error handling request", None,
                                   exc_info=__import__("sys").exc_info())
    shown = RedactingFormatter(token).format(record)
    assert "Traceback" in shown and token not in shown and "secret =" not in shown


@pytest.mark.parametrize("given", ["é", "\udc80", "\ufffd" * 8, "", "x" * 1000])
def test_a_malformed_token_is_only_wrong(given: str) -> None:
    assert token_matches(given, "abc") is False
    assert token_matches("abc", "abc") is True
