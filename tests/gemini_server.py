"""A Gemini-compatible HTTP server on 127.0.0.1 for tests.

It speaks the REST API the google-genai SDK calls
(``POST /v1beta/models/{model}:generateContent``, ``/v1/...`` too), answers
each request with the next scripted reply and records every request body, so
a test points the real SDK at it (``base_url``) and asserts on what was sent.

    with GeminiServer([reply("draft"), reply("final")]) as server:
        summariser = GeminiSummariser("gemini-2.5-flash", api_key="k", base_url=server.url)
        ...
        server.requests[0]["body"]["systemInstruction"]
"""

from __future__ import annotations

import json
import re
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

_ROUTE = re.compile(r"^/(v1beta|v1|v1alpha)/models/([^/:]+):(generateContent|countTokens)$")


@dataclass
class Reply:
    status: int = 200
    body: bytes = b"{}"
    hang: bool = False  # never answer (until the server stops): for timeouts


def reply(text: str, *, thought: str | None = None) -> Reply:
    parts: list[dict[str, Any]] = []
    if thought is not None:
        parts.append({"text": thought, "thought": True})
    parts.append({"text": text})
    body = {
        "candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}],
        "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15},
        "modelVersion": "test-model",
    }
    return Reply(200, json.dumps(body).encode())


def error(code: int, status: str, message: str) -> Reply:
    return Reply(code, json.dumps({"error": {"code": code, "message": message, "status": status}}).encode())


def raw(body: bytes, status: int = 200) -> Reply:
    return Reply(status, body)


def hang() -> Reply:
    return Reply(hang=True)


@dataclass
class GeminiServer:
    script: list[Reply] = field(default_factory=list)
    requests: list[dict[str, Any]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        self._release = threading.Event()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        assert self._httpd is not None
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}"

    def next_reply(self) -> Reply:
        with self._lock:
            if self.script:
                return self.script.pop(0)
        return error(500, "INTERNAL", "the test server has no scripted reply left")

    def start(self) -> GeminiServer:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:  # keep test output clean
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                data = self.rfile.read(length)
                match = _ROUTE.match(self.path.split("?")[0])
                try:
                    body = json.loads(data or b"null")
                except ValueError:
                    body = None
                with server._lock:
                    server.requests.append({
                        "path": self.path,
                        "model": match.group(2) if match else None,
                        "method": match.group(3) if match else None,
                        "headers": {k.lower(): v for k, v in self.headers.items()},
                        "body": body,
                    })
                if not match:
                    self._send(error(404, "NOT_FOUND", f"no such route: {self.path}"))
                    return
                answer = server.next_reply()
                if answer.hang:
                    server._release.wait(30)
                    return
                self._send(answer)

            def _send(self, answer: Reply) -> None:
                try:
                    self.send_response(answer.status)
                    self.send_header("Content-Type", "application/json; charset=UTF-8")
                    self.send_header("Content-Length", str(len(answer.body)))
                    self.end_headers()
                    self.wfile.write(answer.body)
                except (BrokenPipeError, ConnectionResetError):
                    pass

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, args=(0.02,), name="gemini-test-server",
                                        daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._release.set()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    def __enter__(self) -> GeminiServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- helpers for assertions ---------------------------------------------------
    def bodies(self) -> list[dict[str, Any]]:
        return [r["body"] for r in self.requests if r["method"] == "generateContent"]

    @staticmethod
    def texts(content: dict[str, Any]) -> list[str]:
        return [p["text"] for p in content.get("parts", []) if isinstance(p, dict) and "text" in p]
