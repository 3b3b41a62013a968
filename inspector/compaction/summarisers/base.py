"""The one interface every summariser offers, and the error it raises."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any, Protocol, runtime_checkable


class SummariserError(Exception):
    """A summariser call that failed; ``str(exc)`` is one line, free of secrets."""

    def __init__(self, message: str, *, kind: str = "error", status_code: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.kind = kind  # "auth" | "rate_limit" | "server" | "timeout" | "network" | "bad_response" | "error"
        self.status_code = status_code


@runtime_checkable
class Summariser(Protocol):
    """Turns a system prompt and a list of Content dicts into the model's text."""

    name: str  # "gemini" | "offline" | anything a test supplies
    model: str | None

    async def summarise(self, system_prompt: str, contents: list[dict[str, Any]]) -> str: ...


def scrub(text: str, secrets: Iterable[str | None]) -> str:
    """``text`` with every secret (and any ``key=...`` query value) masked, on one line."""
    for secret in secrets:
        if secret and len(secret) >= 4:
            text = text.replace(secret, "***")
    text = re.sub(r"(?i)([?&](?:key|api_key|access_token)=)[^&\s'\"]+", r"\1***", text)
    text = re.sub(r"(?i)(x-goog-api-key['\"]?\s*[:=]\s*['\"]?)[^'\"\s,}]+", r"\1***", text)
    return " ".join(text.split())
