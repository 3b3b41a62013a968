"""``session-inspector --serve``: the app in a real browser, bound to 127.0.0.1 only.

The page test starts the real server in a subprocess on a free port, waits
until the port accepts (a bounded connect retry), loads the page in headless
Chromium and reads xterm.js's own screen buffer (tests/browser.py says how):
the session's name, its token total and the token table's rows must be on
screen, with the figures ``analyze`` computes.  The server and every app
process it started are killed at the end, whatever happens.
"""

from __future__ import annotations

import argparse
import http.server
import importlib.util
import json
import re
import shlex
import subprocess
import sys
import threading
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from inspector.analysis import analyze
from inspector.commands import app as app_command
from inspector.session import load
from tests.browser import (
    CHROMIUM,
    REPO,
    Chromium,
    evaluate,
    free_port,
    listening_addresses,
    served,
    served_url,
)
from tests.snapshot_app import SAMPLES

SAMPLE = SAMPLES / "coding-task.jsonl"


def needs_browser() -> None:
    if importlib.util.find_spec("textual_serve") is None:
        pytest.skip("textual-serve is not installed (pip install -e '.[serve]')")
    if not CHROMIUM.is_file():
        pytest.skip(f"{CHROMIUM} is absent (Debian: apt-get install chromium)")
    if not SAMPLE.is_file():
        pytest.skip(f"{SAMPLE} is missing")


def test_the_served_page_shows_the_session_and_its_token_table(tmp_path: Path) -> None:
    needs_browser()
    analysis = analyze(load(SAMPLE), threshold=0.5)
    # the header shows the figure that decides (recorded when Gemini CLI recorded one), as analyze does
    deciding, limit, split = analysis.context.deciding_tokens, analysis.token_limit, analysis.split_point
    port = free_port()
    with served(SAMPLE, port, tmp_path / "serve.log", "--no-watch", "--threshold", "0.5") as server:
        assert listening_addresses(port) == {"127.0.0.1"}  # never every interface
        browser = Chromium(tmp_path / "chromium")
        try:
            page = browser.open(served_url(tmp_path / "serve.log"))
            found, screen = browser.wait_for_text(page, [SAMPLE.name, f"{deciding:,} / {limit:,}", "est. tok"])
        finally:
            browser.close()
        assert server.poll() is None
    assert found, f"the page never showed the session; the screen was:\n{screen}"
    assert f"split {split} (reference)" in screen
    # rows of the token table, with the estimates analyze computed
    for index in (0, split):
        turn = analysis.turns[index]
        row = rf"\b{index}\s+{turn.role}\s+\S.*?\s{analysis.turn_tokens(index):,}\s"
        assert re.search(row, screen), f"no row for turn {index} ({row}) in:\n{screen}"
    assert browser.process.poll() is not None
    assert server.poll() is not None


def test_without_the_extra_it_says_how_to_install_it(tmp_path: Path) -> None:
    blocker = tmp_path / "blocked" / "textual_serve"
    blocker.mkdir(parents=True)
    (blocker / "__init__.py").write_text("raise ImportError('textual-serve is not installed')\n")
    done = subprocess.run(
        [sys.executable, "-m", "inspector", "--serve", str(SAMPLES)], capture_output=True, text=True, timeout=60,
        cwd=REPO, env={"PYTHONPATH": str(blocker.parent), "PATH": "/usr/bin:/bin"},
    )
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "pip install 'session-inspector[serve]'" in lines[0], done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.skipif(importlib.util.find_spec("textual_serve") is None, reason="textual-serve is not installed")
def test_a_port_in_use_is_one_line_and_prints_no_token() -> None:
    """Another program listens on the port: one line, exit 2, and no URL with a token for a server
    that never ran."""
    import socket

    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        done = subprocess.run([sys.executable, "-m", "inspector", "--serve", "--port", str(port), str(SAMPLES)],
                              capture_output=True, text=True, timeout=60, cwd=REPO)
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip() == f"session-inspector: cannot serve on 127.0.0.1:{port}: the port is in use"
    assert "token" not in done.stdout + done.stderr and "Traceback" not in done.stderr


@pytest.mark.parametrize("kind", ["fifo", "device"])
def test_a_fifo_or_a_device_is_refused_before_anything_is_served(tmp_path: Path, kind: str) -> None:
    """Neither a session file nor a folder: one line, exit 2, and no URL (it printed one and served a page
    that waited on the FIFO, or read /dev/zero)."""
    import os

    path = tmp_path / "session.jsonl"
    if kind == "fifo":
        os.mkfifo(path)
    else:
        path = Path("/dev/zero")
    done = subprocess.run([sys.executable, "-m", "inspector", "--serve", str(path)],
                          capture_output=True, text=True, timeout=60, cwd=REPO)
    named = "a FIFO (named pipe)" if kind == "fifo" else "a character device"
    assert done.returncode == 2 and done.stderr.strip() == (
        f"session-inspector: {path}: is {named}, not a session file or folder")
    assert "http" not in done.stdout + done.stderr and "Traceback" not in done.stderr


def test_port_without_serve_is_refused() -> None:
    done = subprocess.run([sys.executable, "-m", "inspector", "--port", "8123", str(SAMPLES)],
                          capture_output=True, text=True, timeout=60, cwd=REPO)
    assert done.returncode == 2 and "--port goes with --serve" in done.stderr


def test_the_served_command_quotes_every_argument(tmp_path: Path) -> None:
    odd = tmp_path / "it's a \"session\" $(touch pwned); x.jsonl"
    parser = argparse.ArgumentParser()
    app_command.add_arguments(parser)
    args = parser.parse_args([str(odd), "--threshold", "0.4", "--provider", "gemini",
                              "--base-url", "http://127.0.0.1:9/v1?a=1&b=2", "--model", "gemini-2.5-flash",
                              "--no-watch", "--serve", "--port", "9999"])
    command = app_command.served_command(args)
    assert shlex.split(command) == [
        sys.executable, "-m", "inspector", str(odd.resolve()), "--model", "gemini-2.5-flash", "--threshold", "0.4",
        "--no-watch", "--provider", "gemini", "--base-url", "http://127.0.0.1:9/v1?a=1&b=2",
    ]
    assert "--serve" not in command and "--port" not in command


OPEN_SOCKET = """new Promise(done => {
  const socket = new WebSocket(%s);
  socket.onopen = () => { socket.close(); done("open"); };
  socket.onerror = () => done("refused");
})"""


class _Page(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = b"<!doctype html><title>another site</title><p>another site</p>"
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


def test_serve_needs_the_token_and_refuses_other_sites(tmp_path: Path) -> None:
    """A page of another site, and anyone without the printed token, cannot drive the app."""
    needs_browser()
    port = free_port()
    log = tmp_path / "serve.log"
    with served(SAMPLE, port, log, "--no-watch") as server:
        url = served_url(log)
        token = url.split("token=", 1)[1]
        assert len(token) >= 32
        base = f"http://127.0.0.1:{port}"
        # the page: only with the token, only under its own host names
        assert _status(f"{base}/") == 403
        wrong = token[:-1] + ("y" if token.endswith("x") else "x")  # one character off (never the token itself)
        assert _status(f"{base}/?token={wrong}") == 403
        assert _status(url) == 200
        assert _status(url, {"Host": f"attacker.example:{port}"}) == 403
        # every URL needs the token, the page's scripts too; no response lets the token travel on
        assert _status(f"{base}/static/js/textual.js") in (403, 404)
        assert _status(f"{base}/static/{wrong}/js/textual.js") in (403, 404)
        assert _status(f"{base}/static/{token}/js/textual.js") == 200
        with urllib.request.urlopen(url, timeout=30) as answer:
            assert answer.headers["Referrer-Policy"] == "no-referrer"
            assert f"/static/{token}/js/textual.js" in answer.read().decode()
        socket_url = f"ws://127.0.0.1:{port}/ws/{token}"
        # a site in another tab of the same browser, which knows even the token
        other = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Page)
        thread = threading.Thread(target=other.serve_forever, daemon=True)
        thread.start()
        browser = Chromium(tmp_path / "chromium")
        try:
            evil = browser.open(f"http://127.0.0.1:{other.server_address[1]}/")
            assert evaluate(browser, evil, OPEN_SOCKET % json.dumps(socket_url)) == "refused"
            page = browser.open(url)
            assert evaluate(browser, page, OPEN_SOCKET % json.dumps(f"ws://127.0.0.1:{port}/ws")) == "refused"
            # the page opened from the printed URL may (the same test that refuses the others)
            assert evaluate(browser, page, OPEN_SOCKET % json.dumps(socket_url)) == "open"
        finally:
            browser.close()
            other.shutdown()
            other.server_close()
            thread.join(timeout=10)
        assert server.poll() is None


def _status(url: str, headers: dict[str, str] | None = None) -> int:
    request = urllib.request.Request(url, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=30) as answer:
            return int(answer.status)
    except urllib.error.HTTPError as exc:
        return int(exc.code)
