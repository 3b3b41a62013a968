"""Headless Chromium over the DevTools protocol, and ``session-inspector --serve`` in a subprocess.

Used by tests/test_serve.py and ``scripts/screenshots.py --browser``.

Chromium is driven through ``--remote-debugging-pipe`` (file descriptors 3
and 4, NUL-separated JSON), so no debugging port is opened and no client
library is needed.  textual-serve draws the terminal with xterm.js on a
canvas, so there is no text in the DOM to read; instead a script injected
before the page's own code keeps a reference to the ``Terminal`` object when
textual.js stores it (``this.terminal = new Terminal(...)``), and the test
reads xterm's own screen buffer - exactly the characters the page shows.
The wait for text happens inside the page, on xterm's ``onWriteParsed``
event, with a deadline.  Every request a page makes is recorded
(``Network.requestWillBeSent``), and no host name but loopback's resolves.
"""

from __future__ import annotations

import base64
import contextlib
import fcntl
import json
import os
import re
import select
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

CHROMIUM = Path("/usr/bin/chromium")
REPO = Path(__file__).resolve().parents[1]
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--hide-scrollbars", "--force-device-scale-factor=1", "--remote-debugging-pipe",
         # no host name resolves but loopback's: a page that reaches for the internet fails to (and its
         # requests are still recorded, ``Chromium.requested``), on any machine, networked or not
         "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1, EXCLUDE localhost")

# Runs before textual.js: remember the xterm Terminal when textual.js assigns it.
KEEP_TERMINAL = """
(() => {
  window.__terminals = [];
  Object.defineProperty(Object.prototype, "terminal", {
    configurable: true,
    get() { return undefined; },
    set(value) {
      Object.defineProperty(this, "terminal", {value, writable: true, configurable: true, enumerable: true});
      if (value && typeof value.write === "function" && value.buffer) window.__terminals.push(value);
    },
  });
  document.addEventListener("DOMContentLoaded", () => {
    const style = document.createElement("style");
    style.textContent = "* { transition: none !important; }";  // no fade-in half-way in a screenshot
    document.head.appendChild(style);
  });
})();
"""

# Resolves with the screen text once every needle is on screen, or at the deadline.
WAIT_FOR_TEXT = """
new Promise((resolve) => {
  const needles = %s;
  const screenText = () => {
    const term = window.__terminals[0];
    if (!term) return "";
    const buffer = term.buffer.active;
    const lines = [];
    for (let y = 0; y < buffer.length; y++) {
      const line = buffer.getLine(y);
      lines.push(line ? line.translateToString(true) : "");
    }
    return lines.join("\\n");
  };
  let done = false;
  const finish = (ok) => { if (!done) { done = true; resolve({ok, text: screenText(),
                                                               terminals: window.__terminals.length}); } };
  setTimeout(() => finish(false), %d);
  const check = () => { if (needles.every((n) => screenText().includes(n))) finish(true); };
  const attach = () => {
    const term = window.__terminals[0];
    if (!term) { if (!done) setTimeout(attach, 50); return; }  // textual.js builds it at window.onload
    term.onWriteParsed(check);
    check();
  };
  attach();
})
"""


class BrowserError(RuntimeError):
    pass


class Chromium:
    """One headless Chromium; ``command`` sends a DevTools command and returns its result."""

    def __init__(self, user_data_dir: Path, *, width: int = 1600, height: int = 1000,
                 executable: Path = CHROMIUM) -> None:
        to_child_read, self._write = os.pipe()
        self._read, from_child_write = os.pipe()

        def wire() -> None:  # in the child: fd 3 reads our commands, fd 4 writes its answers
            high_read = fcntl.fcntl(to_child_read, fcntl.F_DUPFD, 10)  # out of the way of 3 and 4 first
            high_write = fcntl.fcntl(from_child_write, fcntl.F_DUPFD, 10)
            os.dup2(high_read, 3)  # dup2 leaves the copies inheritable
            os.dup2(high_write, 4)

        self.log = user_data_dir / "chromium.log"
        user_data_dir.mkdir(parents=True, exist_ok=True)
        with self.log.open("wb") as log:
            self.process = subprocess.Popen(
                [str(executable), *FLAGS, f"--user-data-dir={user_data_dir}", f"--window-size={width},{height}",
                 "about:blank"],
                stdin=subprocess.DEVNULL, stdout=log, stderr=log, preexec_fn=wire, close_fds=False,
                start_new_session=True,
            )
        os.close(to_child_read)
        os.close(from_child_write)
        self.width, self.height = width, height
        self._next = 0
        self._buffer = b""
        self.events: list[dict[str, Any]] = []

    def _message(self, deadline: float) -> dict[str, Any]:
        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                raise BrowserError("no answer from Chromium in time")
            ready, _, _ = select.select([self._read], [], [], left)
            if ready:
                chunk = os.read(self._read, 1 << 20)
                if not chunk:
                    raise BrowserError(f"Chromium closed the pipe; see {self.log}")
                self._buffer += chunk
        raw, self._buffer = self._buffer.split(b"\0", 1)
        return dict(json.loads(raw))

    def command(self, method: str, params: dict[str, Any] | None = None, *, session: str | None = None,
                timeout: float = 30.0) -> dict[str, Any]:
        self._next += 1
        message: dict[str, Any] = {"id": self._next, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        os.write(self._write, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + timeout
        while True:
            answer = self._message(deadline)
            if answer.get("id") == self._next:
                if "error" in answer:
                    raise BrowserError(f"{method}: {answer['error']}")
                return dict(answer.get("result") or {})
            self.events.append(answer)

    def wait_event(self, method: str, *, session: str | None = None, timeout: float = 30.0) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while True:
            for i, event in enumerate(self.events):
                if event.get("method") == method and (session is None or event.get("sessionId") == session):
                    return self.events.pop(i)
            self.events.append(self._message(deadline))

    def open(self, url: str) -> str:
        """A new page at ``url`` (the terminal kept for reading); returns its session id."""
        target = self.command("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = str(self.command("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"])
        self.command("Page.enable", session=session)
        self.command("Network.enable", session=session)
        self.command("Emulation.setDeviceMetricsOverride", {"width": self.width, "height": self.height,
                                                            "deviceScaleFactor": 1, "mobile": False}, session=session)
        self.command("Page.addScriptToEvaluateOnNewDocument", {"source": KEEP_TERMINAL}, session=session)
        self.command("Page.navigate", {"url": url}, session=session)
        self.wait_event("Page.loadEventFired", session=session)
        return session

    def requested(self, session: str) -> list[str]:
        """The URL of every request the page has made so far (each fetch, style sheet, font, WebSocket),
        whether or not it was answered."""
        self.command("Runtime.evaluate", {"expression": "0"}, session=session)  # events sent before it are in
        return [str(e["params"]["request"]["url"]) for e in self.events
                if e.get("method") == "Network.requestWillBeSent" and e.get("sessionId") == session] + [
            str(e["params"]["url"]) for e in self.events
            if e.get("method") == "Network.webSocketCreated" and e.get("sessionId") == session]

    def wait_for_text(self, session: str, needles: list[str], timeout: float = 30.0) -> tuple[bool, str]:
        """Wait (in the page) until every needle is in xterm's screen buffer; (found, screen text)."""
        expression = WAIT_FOR_TEXT % (json.dumps(needles), int(timeout * 1000))
        answer = self.command("Runtime.evaluate", {"expression": expression, "awaitPromise": True,
                                                   "returnByValue": True}, session=session, timeout=timeout + 10)
        value = answer["result"]["value"]
        if not value["terminals"]:
            raise BrowserError("the page never created its xterm Terminal (textual-serve changed?)")
        return bool(value["ok"]), str(value["text"])

    def screenshot(self, session: str, path: Path) -> None:
        data = self.command("Page.captureScreenshot", {"format": "png"}, session=session)["data"]
        path.write_bytes(base64.b64decode(data))

    def close(self) -> None:
        with contextlib.suppress(BrowserError, OSError):
            self.command("Browser.close", timeout=5)
        stop_group(self.process)
        for fd in (self._read, self._write):
            with contextlib.suppress(OSError):
                os.close(fd)


def stop_group(process: subprocess.Popen[bytes]) -> None:
    """End a process we started in its own session, and everything it started (by its group id)."""
    if process.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=10)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)  # the served app processes, if any outlived the server


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def wait_for_port(port: int, process: subprocess.Popen[bytes], log: Path, timeout: float = 30.0) -> None:
    """A bounded retry on connect: the server is up when 127.0.0.1:port accepts."""
    deadline = time.monotonic() + timeout
    while True:
        if process.poll() is not None:
            raise BrowserError(f"the server exited with {process.returncode}: {log.read_text(errors='replace')}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            if time.monotonic() > deadline:
                raise BrowserError(f"nothing answered on 127.0.0.1:{port} in {timeout:.0f} s") from None
            time.sleep(0.05)


@contextlib.contextmanager
def served(path: Path, port: int, log: Path, *extra: str) -> Iterator[subprocess.Popen[bytes]]:
    """``python -m inspector --serve --port PORT PATH``, stopped (with its apps) on the way out."""
    with log.open("wb") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "inspector", "--serve", "--port", str(port), *extra, str(path)],
            stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT, cwd=REPO, start_new_session=True,
        )
    try:
        wait_for_port(port, process, log)
        yield process
    finally:
        stop_group(process)


def listening_addresses(port: int) -> set[str]:
    """The local addresses listening on ``port`` (from /proc/net/tcp and tcp6)."""
    found: set[str] = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with contextlib.suppress(OSError), open(table, encoding="ascii") as handle:
            for line in handle.readlines()[1:]:
                fields = line.split()
                address, hex_port = fields[1].rsplit(":", 1)
                if fields[3] == "0A" and int(hex_port, 16) == port:  # 0A: LISTEN
                    found.add(_address(address))
    return found


def _address(hex_address: str) -> str:
    raw = bytes.fromhex(hex_address)
    if len(raw) == 4:
        return socket.inet_ntop(socket.AF_INET, raw[::-1])
    words = b"".join(raw[i:i + 4][::-1] for i in range(0, 16, 4))
    return socket.inet_ntop(socket.AF_INET6, words)


def served_url(log: Path) -> str:
    """The URL ``--serve`` printed (with its token); the server prints it before it listens."""
    match = re.search(r"http://127\.0\.0\.1:\d+/\?token=[\w-]+", log.read_text(errors="replace"))
    if match is None:
        raise BrowserError(f"no URL with a token in the server's output: {log.read_text(errors='replace')}")
    return match.group(0)


def evaluate(browser: Chromium, session: str, expression: str, timeout: float = 30.0) -> Any:
    """The value of a JavaScript expression in a page (a promise is awaited)."""
    answer = browser.command("Runtime.evaluate", {"expression": expression, "awaitPromise": True,
                                                  "returnByValue": True}, session=session, timeout=timeout)
    return answer.get("result", {}).get("value")
