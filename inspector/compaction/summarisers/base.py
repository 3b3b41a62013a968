"""The one interface every summariser offers, and the error it raises."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    from inspector.compaction.snapshot import Provenance
    from inspector.compaction.statuses import ToolStatuses
    from inspector.progress import Reporter

# The masking rule lives in ``masking``; these names are where every summariser has always found it.
from inspector.compaction.summarisers.masking import (  # noqa: F401  (re-exported)
    KEY_VARIABLES,
    MASK,
    env_secrets,
    mask_secrets,
    scrub,
    secret_forms,
)

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
