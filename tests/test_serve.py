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
import importlib.util
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from inspector.analysis import analyze
from inspector.commands import app as app_command
from inspector.session import load
from tests.browser import CHROMIUM, REPO, Chromium, free_port, listening_addresses, served
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
    total, limit, split = analysis.total_estimated_tokens, analysis.token_limit, analysis.split_point
    port = free_port()
    with served(SAMPLE, port, tmp_path / "serve.log", "--no-watch", "--threshold", "0.5") as server:
        assert listening_addresses(port) == {"127.0.0.1"}  # never every interface
        browser = Chromium(tmp_path / "chromium")
        try:
            page = browser.open(f"http://127.0.0.1:{port}/")
            found, screen = browser.wait_for_text(page, [SAMPLE.name, f"{total:,} / {limit:,}", "est. tok"])
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
