"""A Gemini-compatible HTTP server on 127.0.0.1 for tests.

It speaks the REST API the google-genai SDK calls
(``POST /v1beta/models/{model}:generateContent``, ``/v1/...`` too), and the
Vertex AI form of it
(``/v1beta1/projects/{p}/locations/{l}/publishers/google/models/{model}:generateContent``),
answers each request with the next scripted reply (or, once the script is
used up, with what ``answer(request body)`` returns, when given) and records
every request body, so a test points the real SDK at it (``base_url``) and
asserts on what was sent.

It is also an OAuth token endpoint (``POST /token``): a credentials file
whose ``token_uri`` points here lets google-auth's real Application Default
Credentials flow run against it; it answers with ``access_token`` (a fresh
random value per server) and records the form it was sent.

    with GeminiServer([reply("draft"), reply("final")]) as server:
        summariser = GeminiSummariser("gemini-2.5-flash", api_key="k", base_url=server.url)
        ...
        server.requests[0]["body"]["systemInstruction"]
"""

from __future__ import annotations

import json
import re
import secrets
import threading
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

_ROUTE = re.compile(r"^/(v1beta1?|v1|v1alpha)/(?:projects/([^/]+)/locations/([^/]+)/publishers/google/)?"
                    r"models/([^/:]+):(generateContent|countTokens)$")


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
    answer: Callable[[Any], Reply] | None = None  # replies once the script is used up (a stand-in model)
    token_requests: list[dict[str, str]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.access_token = "ya29.test-" + secrets.token_urlsafe(16)
        self.public_key: Any = None  # the service account's, once service_account_file made one
        self._lock = threading.Lock()
        self._release = threading.Event()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        assert self._httpd is not None
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}"

    def next_reply(self, body: Any = None) -> Reply:
        with self._lock:
            if self.script:
                return self.script.pop(0)
        if self.answer is not None:
            return self.answer(body)
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
                if self.path.split("?")[0] == "/token":
                    self._token(data)
                    return
                match = _ROUTE.match(self.path.split("?")[0])
                try:
                    body = json.loads(data or b"null")
                except ValueError:
                    body = None
                with server._lock:
                    server.requests.append({
                        "path": self.path,
                        "model": match.group(4) if match else None,
                        "method": match.group(5) if match else None,
                        "project": match.group(2) if match else None,
                        "location": match.group(3) if match else None,
                        "headers": {k.lower(): v for k, v in self.headers.items()},
                        "body": body,
                    })
                if not match:
                    self._send(error(404, "NOT_FOUND", f"no such route: {self.path}"))
                    return
                answer = server.next_reply(body)
                if answer.hang:
                    server._release.wait(30)
                    return
                self._send(answer)

            def _token(self, data: bytes) -> None:
                form = dict(urllib.parse.parse_qsl(data.decode("utf-8", "replace")))
                with server._lock:
                    server.token_requests.append(form)
                body = {"access_token": server.access_token, "expires_in": 3600, "token_type": "Bearer"}
                self._send(Reply(200, json.dumps(body).encode()))

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
    def service_account_file(self, folder: Any, project: str = "test-project") -> Any:
        """A service-account key file whose ``token_uri`` is this server: google-auth signs a JWT with the
        key (generated here, never a real one) and exchanges it here for ``access_token``."""
        from pathlib import Path

        from cryptography.hazmat.primitives import serialization
        from cryptography.hazmat.primitives.asymmetric import rsa

        key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        self.public_key = key.public_key()
        pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                serialization.NoEncryption()).decode()
        path = Path(folder) / "service-account.json"
        path.write_text(json.dumps({
            "type": "service_account", "project_id": project, "private_key_id": "test-key-1", "private_key": pem,
            "client_email": f"compactor@{project}.iam.gserviceaccount.com", "client_id": "1",
            "token_uri": f"{self.url}/token",
        }))
        return path

    def bodies(self) -> list[dict[str, Any]]:
        return [r["body"] for r in self.requests if r["method"] == "generateContent"]

    @staticmethod
    def texts(content: dict[str, Any]) -> list[str]:
        return [p["text"] for p in content.get("parts", []) if isinstance(p, dict) and "text" in p]


def verified_claims(assertion: str, public_key: Any) -> dict[str, Any]:
    """The claims of an RS256 JWT, after checking its signature with ``public_key`` (raises if it is wrong)."""
    import base64

    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import padding

    def decode(part: str) -> bytes:
        return base64.urlsafe_b64decode(part + "=" * (-len(part) % 4))

    head, body, signature = assertion.split(".")
    assert json.loads(decode(head))["alg"] == "RS256"
    public_key.verify(decode(signature), f"{head}.{body}".encode(), padding.PKCS1v15(), hashes.SHA256())
    claims: dict[str, Any] = json.loads(decode(body))
    return claims
