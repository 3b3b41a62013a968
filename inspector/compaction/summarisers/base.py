"""The one interface every summariser offers, and the error it raises."""

from __future__ import annotations

import base64
import os
import re
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    from inspector.compaction.snapshot import Provenance
    from inspector.compaction.statuses import ToolStatuses
    from inspector.progress import Reporter

KEY_VARIABLES = ("GEMINI_API_KEY", "GOOGLE_API_KEY")
MASK = "***"
RETRY_STAGE = "retry: "  # how a summariser's report of a retry begins (the CLI says these on stderr)
NO_ROOM = "no_room"  # ``SummariserError.kind``: the snapshot's budget cannot hold even an empty snapshot


class SummariserError(Exception):
    """A summariser call that failed; ``str(exc)`` is one line, free of secrets."""

    def __init__(self, message: str, *, kind: str = "error", status_code: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        # "auth" | "rate_limit" | "server" | "timeout" | "network" | "bad_response" | "error" | "no_room"
        self.kind = kind
        self.status_code = status_code


class EmptyAnswer(SummariserError):
    """The model wrote no text and said why (a block, a safety stop): ``str(exc)`` names the reason.

    Raised where an empty answer would otherwise be taken silently: the first call's
    is an empty summary, the verification's leaves the draft standing, each with this
    reason said beside it.
    """

    def __init__(self, message: str) -> None:
        super().__init__(message, kind="empty")


@runtime_checkable
class Summariser(Protocol):
    """Turns a system prompt and a list of Content dicts into the model's text."""

    name: str  # "gemini" | "offline" | anything a test supplies
    model: str | None

    async def summarise(self, system_prompt: str, contents: list[dict[str, Any]]) -> str: ...


@runtime_checkable
class Grounded(Protocol):
    """A summariser that reads the recorded tool statuses and says which turns each of its lines comes from.

    ``compress`` hands it the statuses (``ground``) before the calls, with the
    estimated tokens of the history it will summarise when they are known
    already and, where that history is not the recorded one (a staged stage
    dropped turns), the recorded turn each of its turns is (``names``, for the
    turn numbers its lines' words give); it asks for the provenance of the
    final snapshot (``cite``) after them.
    """

    def ground(self, statuses: ToolStatuses, tokens: int | None = None, names: Sequence[int | None] = ()) -> None: ...

    def cite(self, snapshot: str) -> Provenance | None: ...


@runtime_checkable
class Reporting(Protocol):
    """A summariser whose own work is long enough to report progress and honour cancellation."""

    def use_reporter(self, reporter: Reporter) -> None: ...


def env_secrets() -> list[str]:
    """The API keys set in the environment (their values: never shown, only masked)."""
    return [v for v in (os.environ.get(k) for k in KEY_VARIABLES) if v]


def secret_forms(secret: str) -> list[str]:
    """The secret as it may appear in text: plain, and its base64 (standard and URL-safe) at any alignment.

    A secret inside a longer base64-encoded text shows as one of three
    fragments, depending on where it starts within a 3-byte group; only the
    characters that depend on the secret alone are kept.
    """
    forms = [secret]
    raw = secret.encode()
    for pad in range(3):
        encoded = base64.b64encode(b"\0" * pad + raw).decode().rstrip("=")
        start, stop = -(-8 * pad // 6), (8 * (pad + len(raw))) // 6
        fragment = encoded[start:stop]
        if len(fragment) >= 8:
            forms.append(fragment)
            forms.append(fragment.replace("+", "-").replace("/", "_"))
    return sorted(set(forms), key=len, reverse=True)


def mask_secrets(text: str, secrets: Iterable[str | None]) -> str:
    """``text`` with every secret masked: in plain in any letter case (a server may upper-case what
    it echoes), and in base64."""
    for secret in secrets:
        if secret and len(secret) >= 4:
            if secret.casefold() in text.casefold():
                text = re.sub(re.escape(secret), MASK, text, flags=re.IGNORECASE)
            for form in secret_forms(secret):
                if form in text:
                    text = text.replace(form, MASK)
    return text


def scrub(text: str, secrets: Iterable[str | None]) -> str:
    """``text`` with every secret (and any ``key=...`` query value) masked, on one line."""
    text = mask_secrets(text, secrets)
    text = re.sub(r"(?i)([?&](?:key|api_key|access_token)=)[^&\s'\"]+", r"\1***", text)
    text = re.sub(r"(?i)(x-goog-api-key['\"]?\s*[:=]\s*['\"]?)[^'\"\s,}]+", r"\1***", text)
    return " ".join(text.split())
