"""Talk to ``ref_server.mjs``: one Node process, many requests.

    server = RefServer.start(dist_src)
    answer = server.call("load", path="/tmp/x.jsonl", measure=True)
    server.close()

Requests are written with ``ensure_ascii`` so lone surrogates travel as
``\\udXXX`` escapes and reach JavaScript as the same UTF-16 units.
"""

from __future__ import annotations

import json
import subprocess
import tempfile
import threading
from pathlib import Path
from typing import Any

SERVER = Path(__file__).with_name("ref_server.mjs")


class RefError(RuntimeError):
    """The reference answered ``ok: false`` (it threw, or the op is unknown)."""


class RefServer:
    def __init__(self, process: subprocess.Popen[bytes], stderr: Any) -> None:
        self._process = process
        self._stderr = stderr
        self._lock = threading.Lock()
        self._next = 0
        self.calls = 0

    @classmethod
    def start(cls, dist_src: Path, node: str = "node") -> RefServer:
        stderr = tempfile.TemporaryFile()  # noqa: SIM115 - closed in close()
        process = subprocess.Popen(
            [node, str(SERVER), str(dist_src)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=stderr,
        )
        server = cls(process, stderr)
        ready = server._read()
        if not ready.get("ready"):
            server.close()
            raise RuntimeError(f"reference server did not start: {ready}")
        return server

    def _read(self) -> dict[str, Any]:
        assert self._process.stdout is not None
        line = self._process.stdout.readline()
        if not line:
            self._stderr.seek(0)
            tail = self._stderr.read().decode("utf-8", "replace")[-2000:]
            raise RuntimeError(f"reference server exited (code {self._process.poll()}): {tail}")
        answer: dict[str, Any] = json.loads(line)
        return answer

    def call(self, op: str, **arguments: Any) -> dict[str, Any]:
        """Run ``op``; the answer's fields, or RefError when the reference threw."""
        with self._lock:
            self._next += 1
            request = {"op": op, "id": self._next, **arguments}
            assert self._process.stdin is not None
            self._process.stdin.write(json.dumps(request, ensure_ascii=True).encode() + b"\n")
            self._process.stdin.flush()
            answer = self._read()
            self.calls += 1
        if answer.get("id") != self._next:
            raise RuntimeError(f"reference server out of step: {answer}")
        if not answer.get("ok"):
            raise RefError(str(answer.get("error")))
        return answer

    def close(self) -> None:
        if self._process.stdin:
            self._process.stdin.close()
        try:
            self._process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()
        if self._process.stdout:
            self._process.stdout.close()
        self._stderr.close()
