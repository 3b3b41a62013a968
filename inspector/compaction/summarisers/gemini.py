"""The Gemini summariser: the google-genai SDK's async client.

Authentication is the SDK's own, as ``choose_provider`` decided it: an API
key (``GEMINI_API_KEY`` / ``GOOGLE_API_KEY``), or Vertex AI
(``GOOGLE_GENAI_USE_VERTEXAI`` with ``GOOGLE_CLOUD_PROJECT`` /
``GOOGLE_CLOUD_LOCATION``) with Application Default Credentials through
google-auth; ``base_url`` (``--base-url``) points it at another endpoint (a
proxy, or the test server).  The key is masked, in plain and in base64, in
everything the model sends back, so a server echoing it cannot make it
reach the screen, the session or the journal.  The SDK's own retries are turned off:
this class retries 429 and 5xx answers itself with bounded exponential backoff
through an injectable ``sleep``, so tests never wait.  Each call has a
timeout; cancelling the task cancels the request.  Every failure becomes a
``SummariserError`` whose message names what went wrong and never holds the key.
"""

from __future__ import annotations

import asyncio
import copy
import os
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from inspector.compaction.summarisers.base import SummariserError, env_secrets, mask_secrets, scrub

if TYPE_CHECKING:
    from google.genai.types import GenerateContentResponse

    from inspector.compaction.summarisers import ProviderChoice

DEFAULT_TIMEOUT = 120.0
DEFAULT_ATTEMPTS = 4
RETRY_STATUS = frozenset({408, 429, 500, 502, 503, 504})
def response_text(response: GenerateContentResponse) -> str:
    """The reference's ``getResponseText``: the first candidate's non-thought text parts, joined."""
    if not response.candidates:
        return ""
    content = response.candidates[0].content
    parts = content.parts if content is not None and content.parts else []
    return "".join(p.text for p in parts if p.text and not p.thought)


def clean_contents(contents: list[dict[str, Any]]) -> list[Any]:
    """Content dicts the SDK accepts: fields it does not know are dropped (session files keep extras)."""
    from google.genai import types
    from pydantic import ValidationError

    out = []
    for content in contents:
        item: Any = content
        for _ in range(50):
            try:
                out.append(types.Content.model_validate(item))
                break
            except ValidationError as exc:
                extras = [e["loc"] for e in exc.errors() if e.get("type") == "extra_forbidden"]
                if not extras:
                    raise SummariserError(f"a history turn cannot be sent to Gemini: {exc.errors()[0]['msg']}",
                                          kind="bad_request") from None
                item = copy.deepcopy(item) if item is content else item
                for loc in extras:
                    _drop(item, loc)
        else:
            raise SummariserError("a history turn cannot be sent to Gemini", kind="bad_request")
    return out


def _drop(obj: Any, loc: tuple[Any, ...]) -> None:
    for key in loc[:-1]:
        obj = obj[key]
    if isinstance(obj, dict):
        obj.pop(loc[-1], None)


class GeminiSummariser:
    """Calls ``client.aio.models.generate_content`` with the compression prompt."""

    name = "gemini"

    def __init__(
        self,
        model: str,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        max_attempts: int = DEFAULT_ATTEMPTS,
        initial_delay: float = 1.0,
        max_delay: float = 30.0,
        sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep,
        client: Any = None,
        choice: ProviderChoice | None = None,
    ) -> None:
        self.model: str | None = model
        self.choice = choice
        self.base_url = base_url
        self.timeout = timeout
        self.max_attempts = max(1, max_attempts)
        self.initial_delay = initial_delay
        self.max_delay = max_delay
        self.sleep = sleep
        self.delays: list[float] = []  # the backoff waits taken, for reports and tests
        self._api_key = api_key
        self._client = client

    def _secrets(self) -> list[str]:
        return [s for s in [self._api_key, *env_secrets()] if s]

    def _error(self, message: str, kind: str, code: int | None = None) -> SummariserError:
        return SummariserError(scrub(message, self._secrets()), kind=kind, status_code=code)

    def client(self) -> Any:
        if self._client is None:
            from google import genai
            from google.genai import types

            options = types.HttpOptions(
                base_url=self.base_url,
                timeout=int(self.timeout * 1000),
                retry_options=types.HttpRetryOptions(attempts=1),
            )
            backend = self.choice.backend if self.choice is not None else "api_key"
            try:
                if backend == "vertex":
                    assert self.choice is not None
                    self._client = genai.Client(vertexai=True, project=self.choice.project,
                                                location=self.choice.location, http_options=options)
                elif backend == "vertex_key":
                    key = os.environ.get(self.choice.key_variable or "") if self.choice is not None else None
                    self._client = genai.Client(vertexai=True, api_key=self._api_key or key, http_options=options)
                else:
                    self._client = genai.Client(vertexai=False, api_key=self._api_key, http_options=options)
            except Exception as exc:  # the SDK raises ValueError for missing credentials
                raise self._error(f"cannot set up the Gemini client: {exc}", "auth") from None
        return self._client

    async def summarise(self, system_prompt: str, contents: list[dict[str, Any]]) -> str:
        from google.auth.exceptions import GoogleAuthError
        from google.genai import errors, types

        client = self.client()
        request = clean_contents(contents)
        config = types.GenerateContentConfig(system_instruction=system_prompt)
        for attempt in range(1, self.max_attempts + 1):
            try:
                async with asyncio.timeout(self.timeout):
                    response = await client.aio.models.generate_content(
                        model=str(self.model), contents=request, config=config
                    )
                return mask_secrets(response_text(response), self._secrets())
            except TimeoutError:
                raise self._error(f"Gemini did not answer within {self.timeout:g} s", "timeout") from None
            except errors.APIError as exc:
                code = exc.code if isinstance(exc.code, int) else None
                detail = exc.message or exc.status or ""
                if code in RETRY_STATUS and attempt < self.max_attempts:
                    delay = min(self.max_delay, self.initial_delay * 2 ** (attempt - 1))
                    self.delays.append(delay)
                    await self.sleep(delay)
                    continue
                kind = "rate_limit" if code == 429 else "server" if code and code >= 500 else "auth" \
                    if code in (401, 403) else "error"
                tries = f" after {attempt} attempts" if attempt > 1 else ""
                raise self._error(f"Gemini API error {code}{tries}: {detail}", kind, code) from None
            except asyncio.CancelledError:
                raise
            except SummariserError:
                raise
            except GoogleAuthError as exc:  # Vertex AI: no Application Default Credentials, or a refused token
                raise self._error(f"Vertex AI credentials: {type(exc).__name__}: {exc}", "auth") from None
            except (ValueError, TypeError, KeyError) as exc:  # a body the SDK could not read
                raise self._error(f"Gemini sent a response that cannot be read: {type(exc).__name__}: {exc}",
                                  "bad_response") from None
            except Exception as exc:  # network failures from aiohttp / httpx, OS errors
                raise self._error(f"cannot reach Gemini: {type(exc).__name__}: {exc}", "network") from None
        raise self._error("Gemini call failed", "error")  # not reached
