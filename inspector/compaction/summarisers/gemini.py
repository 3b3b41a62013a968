"""The Gemini summariser: the google-genai SDK's async client.

Authentication is the SDK's own, as ``choose_provider`` decided it: an API
key (``GEMINI_API_KEY`` / ``GOOGLE_API_KEY``), or Vertex AI
(``GOOGLE_GENAI_USE_VERTEXAI`` with ``GOOGLE_CLOUD_PROJECT`` /
``GOOGLE_CLOUD_LOCATION``) with Application Default Credentials through
google-auth; ``base_url`` (``--base-url``) points it at another endpoint (a
proxy, or the test server).  The key is masked, in every form ``masking`` lists
(parts of it, hex, base64, percent-encoded, split), in
everything the model sends back, so a server echoing it cannot make it
reach the screen, the session or the journal.  The SDK's own retries are turned off:
this class retries 408, 429 and 5xx answers and a connection that fails or drops
itself, at most ``max_attempts`` times, with exponential backoff (or the server's
``Retry-After`` / ``RetryInfo`` when longer; one past ``max_delay`` ends the call)
through an injectable ``sleep``, so tests never wait; each retry is reported
(``RETRY_STAGE``) before its wait.  Each call has a timeout; cancelling the task
cancels the request.  An answer Gemini blocked (``promptFeedback.blockReason``),
left without a candidate or stopped (``finishReason`` other than STOP) is an
error naming that reason, never an empty or cut snapshot (``EmptyAnswer`` when
it wrote nothing).  Every failure becomes a ``SummariserError`` whose message is
one line saying what happened and what to do, and never holds the key.
"""

from __future__ import annotations

import asyncio
import copy
import os
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any

from inspector.compaction.summarisers.base import (
    RETRY_STAGE,
    EmptyAnswer,
    SummariserError,
    env_secrets,
    mask_secrets,
    scrub,
)
from inspector.progress import SILENT, Reporter

if TYPE_CHECKING:
    from google.genai.types import GenerateContentResponse

    from inspector.compaction.summarisers.choice import ProviderChoice

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
        self._reporter: Reporter = SILENT

    def use_reporter(self, reporter: Reporter) -> None:
        """Where each retry is said (``RETRY_STAGE``, then why and how long it waits) before its wait."""
        self._reporter = reporter

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
        waits: list[float] = []
        for attempt in range(1, self.max_attempts + 1):
            try:
                async with asyncio.timeout(self.timeout):
                    response = await client.aio.models.generate_content(
                        model=str(self.model), contents=request, config=config
                    )
                text = response_text(response)
                self._check_answer(response, text)
                return mask_secrets(text, self._secrets())
            except TimeoutError:
                raise self._error(f"Gemini did not answer within {self.timeout:g} s; try again later, or allow it "
                                  "more time (compact --timeout SECONDS)", "timeout") from None
            except errors.APIError as exc:
                code = exc.code if isinstance(exc.code, int) else None
                asked = retry_after(exc)
                if code in RETRY_STATUS and attempt < self.max_attempts:
                    if asked is not None and asked > self.max_delay:
                        raise self._error(self._api_problem(exc, attempt, waits, asked), _kind(code), code) from None
                    await self._wait_to_retry(attempt, waits, _http_head(exc), asked)
                    continue
                raise self._error(self._api_problem(exc, attempt, waits), _kind(code), code) from None
            except asyncio.CancelledError:
                raise
            except SummariserError:
                raise
            except GoogleAuthError as exc:  # Vertex AI: no Application Default Credentials, or a refused token
                raise self._error(f"Vertex AI credentials: {type(exc).__name__}: {short(str(exc))}; check "
                                  "GOOGLE_APPLICATION_CREDENTIALS or run 'gcloud auth application-default login'",
                                  "auth") from None
            except (ValueError, TypeError, KeyError) as exc:  # a body the SDK could not read
                raise self._error(f"Gemini sent a response that cannot be read ({type(exc).__name__}: "
                                  f"{short(str(exc))}); try again, or check that --base-url is a Gemini API endpoint",
                                  "bad_response") from None
            except Exception as exc:  # network failures from aiohttp / httpx, OS errors
                if attempt < self.max_attempts and _transient(exc):  # as Gemini CLI retries ECONNRESET and the like
                    await self._wait_to_retry(attempt, waits, self._not_reached(exc))
                    continue
                raise self._error(self._unreachable(exc, attempt, waits), "network") from None
        raise self._error("Gemini call failed", "error")  # not reached

    async def _wait_to_retry(self, attempt: int, waits: list[float], what: str, asked: float | None = None) -> None:
        """Say the retry (``RETRY_STAGE``) and wait for it: the backoff, or longer when the server asked."""
        delay = max(min(self.max_delay, self.initial_delay * 2 ** (attempt - 1)), asked or 0.0)
        self.delays.append(delay)
        waits.append(delay)
        said = f"{RETRY_STAGE}{what}; trying again in {delay:g} s (attempt {attempt + 1} of {self.max_attempts})"
        self._reporter.report(scrub(said, self._secrets()), 0)
        await self.sleep(delay)

    def _check_answer(self, response: GenerateContentResponse, text: str) -> None:
        """Raise unless the answer is whole: a blocked prompt, no candidate, or a candidate Gemini stopped
        (``finishReason`` other than STOP) is said with its reason instead of passing as an empty or cut text."""
        feedback = response.prompt_feedback
        if feedback is not None and feedback.block_reason is not None:
            block = short(_enum_name(feedback.block_reason) or "")
            why = f": {short(feedback.block_reason_message)}" if feedback.block_reason_message else ""
            raise EmptyAnswer(scrub(f"Gemini blocked the request (promptFeedback.blockReason {block}{why}) and "
                                    f"wrote no summary; {OTHER_WAY}", self._secrets()))
        if not response.candidates:
            raise EmptyAnswer(f"Gemini answered with no candidate and no reason, so there is no summary; try again, "
                              f"or {OTHER_WAY}")
        reason = _enum_name(response.candidates[0].finish_reason)
        if reason in FINISHED:
            return
        why = STOPPED.get(reason or "", "Gemini stopped it")
        reason = scrub(short(reason or ""), self._secrets())  # a server's own word: one short line, no key
        if not text.strip():
            raise EmptyAnswer(f"Gemini wrote no text (finishReason {reason}: {why}); try again, or {OTHER_WAY}")
        if reason == "MAX_TOKENS":
            from inspector.compaction.snapshot import shape_problem

            if shape_problem(text) is None:  # the limit came after a whole snapshot: it stands, as Gemini CLI keeps it
                return
        advice = "try again, or summarise fewer turns (a later --split)" if reason == "MAX_TOKENS" else OTHER_WAY
        raise SummariserError(f"Gemini's answer was cut off (finishReason {reason}: {why}), so it is not a whole "
                              f"snapshot; {advice}", kind="cut_off")

    def _api_problem(self, exc: Any, attempt: int, waits: list[float], asked: float | None = None) -> str:
        """One sentence for an HTTP error: the status, what it means here, Gemini's words, what to do."""
        code = exc.code if isinstance(exc.code, int) else None
        detail = short(exc.message or "").rstrip(".") or "no message"
        head = _http_head(exc)
        tries = _tries(attempt, waits)
        key = self.choice.key_variable if self.choice is not None and self.choice.key_variable else None
        vertex = self.choice is not None and self.choice.backend == "vertex"
        if asked is not None:
            return f"{head}{tries} and asks to wait {asked:g} s before another try (Retry-After), longer than the " \
                   f"{self.max_delay:g} s this waits: {detail}; try again later"
        if code == 429:
            what, do = "too many requests, or the key's quota is used up", \
                "wait a minute and try again, or check the quota of the key"
        elif code in (401, 403) or (code == 400 and "api key" in detail.lower()):
            what = "the credentials were refused"
            do = "check the Application Default Credentials and the project's access to Vertex AI" if vertex \
                else f"check the key in {key or 'GEMINI_API_KEY or GOOGLE_API_KEY'}"
        elif code == 404:
            what, do = f"no model {self.model!r} here", "name an existing model with --model (e.g. gemini-2.5-flash)"
        elif code is not None and code >= 500:
            what, do = "Gemini's side failed", "try again later"
        elif code == 400:
            what, do = "the request was refused as invalid", f"change what its message names, or {OTHER_WAY}"
        else:
            what, do = "the request failed", "try again later"
        return f"{head} ({what}){tries}: {detail}; {do}"

    def _unreachable(self, exc: BaseException, attempt: int, waits: Sequence[float]) -> str:
        """One sentence for a request that never got an answer: where, the system's reason, the attempts
        made, what to do."""
        return f"{self._not_reached(exc)}{_tries(attempt, waits)}; check the network connection" + \
            (" and --base-url" if self.base_url else "") + ", then try again"

    def _not_reached(self, exc: BaseException) -> str:
        """``cannot reach Gemini at HOST:PORT (the system's reason)``."""
        host, port = getattr(exc, "host", None), getattr(exc, "port", None)
        where = f" at {host}:{port}" if isinstance(host, str) and port else f" at {self.base_url}" \
            if self.base_url else ""
        cause: BaseException | None = exc
        reason = f"{type(exc).__name__}: {short(str(exc))}"
        for _ in range(20):  # the chain of causes, never followed round a loop
            if cause is None:
                break
            if isinstance(cause, OSError) and cause.errno:
                reason = os.strerror(cause.errno)
                break
            cause = cause.__cause__ or cause.__context__
        return f"cannot reach Gemini{where} ({reason})"


OTHER_WAY = "use the offline summariser instead (--provider offline, or P in the app)"
FINISHED = frozenset({None, "STOP", "FINISH_REASON_UNSPECIFIED"})
STOPPED = {
    "MAX_TOKENS": "the answer reached the output token limit",
    "SAFETY": "Gemini's safety filters stopped the answer",
    "RECITATION": "the answer recited source material",
    "BLOCKLIST": "the answer held a blocked term",
    "PROHIBITED_CONTENT": "the answer was stopped as prohibited content",
    "SPII": "the answer held sensitive personal information",
    "LANGUAGE": "the answer's language is not supported",
}
DETAIL_CHARS = 300


def short(text: str) -> str:
    """A server's words on one line, at most ``DETAIL_CHARS`` characters (an error body may be megabytes)."""
    text = " ".join(text[:DETAIL_CHARS * 4].split())
    return text if len(text) <= DETAIL_CHARS else text[:DETAIL_CHARS - 1] + "…"


def _enum_name(value: Any) -> str | None:
    if value is None:
        return None
    name = getattr(value, "value", value)
    return str(name)


def _transient(exc: BaseException) -> bool:
    """A failure to connect or a connection that broke: worth another try (Gemini CLI retries ECONNRESET,
    ETIMEDOUT, ECONNREFUSED, ENOTFOUND and the like)."""
    kinds: tuple[type[BaseException], ...] = (OSError,)
    try:
        import aiohttp

        kinds += (aiohttp.ClientConnectionError, aiohttp.ClientPayloadError)
    except ImportError:  # the SDK then talks through httpx
        pass
    try:
        import httpx

        kinds += (httpx.TransportError,)
    except ImportError:
        pass
    return isinstance(exc, kinds)


def _http_head(exc: Any) -> str:
    """``Gemini answered HTTP 429 RESOURCE_EXHAUSTED``: the status code and, when it says more, its name."""
    code = exc.code if isinstance(exc.code, int) else None
    status = exc.status if isinstance(exc.status, str) and exc.status and exc.status != str(code) else ""
    return f"Gemini answered HTTP {code}{' ' + status if status else ''}"


def _tries(attempt: int, waits: Sequence[float]) -> str:
    """`` after 3 attempts 1, 2 s apart`` when the call was tried again, else ""."""
    return f" after {attempt} attempts {', '.join(f'{w:g}' for w in waits)} s apart" if waits else ""


def _kind(code: int | None) -> str:
    if code == 429:
        return "rate_limit"
    if code in (401, 403):
        return "auth"
    return "server" if code is not None and code >= 500 else "error"


def retry_after(exc: Any) -> float | None:
    """The seconds the server asks to wait: its ``Retry-After`` header (seconds or a date), else the
    ``retryDelay`` of a ``google.rpc.RetryInfo`` in the error body; None when it asks nothing."""
    import email.utils
    import math
    import re
    import time

    headers = getattr(getattr(exc, "response", None), "headers", None)
    value = headers.get("retry-after") if headers is not None and hasattr(headers, "get") else None
    if isinstance(value, str) and value.strip():
        try:
            seconds = float(value.strip())
        except ValueError:
            try:
                when = email.utils.parsedate_to_datetime(value.strip())
            except (TypeError, ValueError):
                when = None
            seconds = when.timestamp() - time.time() if when is not None and when.tzinfo is not None else math.nan
        if math.isfinite(seconds):
            return max(0.0, seconds)
    body = exc.details if isinstance(getattr(exc, "details", None), dict) else {}
    error = body.get("error", body)
    details = error.get("details") if isinstance(error, dict) else None
    for item in details if isinstance(details, list) else []:
        if isinstance(item, dict) and str(item.get("@type", "")).endswith("RetryInfo"):
            found = re.fullmatch(r"\s*(\d+(?:\.\d+)?)s\s*", str(item.get("retryDelay", "")))
            if found:
                return float(found.group(1))
    return None
