"""How full the context is, and whether Gemini CLI would compress it now: the one rule.

``analyze`` (its header, ``context_tokens``, ``would_compress``), ``compact``
and the app all decide from a ``ContextFigures``:

* the recorded prompt is the input-token count of the newest usage record
  since the session's last compaction (``Analysis.recorded_prompt_tokens``);
  usage recorded before it measured a longer history that no longer exists;
* without one, the estimate of what would be sent: the environment-context
  turn Gemini CLI keeps in front of the history, plus the history;
* Gemini CLI compresses, unforced, once that figure reaches
  ``threshold x token limit``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from inspector.session.loader import Session


@dataclass(frozen=True)
class ContextFigures:
    recorded_prompt_tokens: int | None  # the newest usage since the last compaction, if any
    estimated_tokens: int  # environment turn + history, estimated
    token_limit: int
    threshold: float

    @property
    def deciding_tokens(self) -> int:
        """What the threshold is compared with: the recorded prompt, else the estimate."""
        return self.recorded_prompt_tokens if self.recorded_prompt_tokens is not None else self.estimated_tokens

    @property
    def threshold_tokens(self) -> int:
        return int(self.threshold * self.token_limit)

    @property
    def over_threshold(self) -> bool:
        return self.deciding_tokens >= self.threshold * self.token_limit

    def below_threshold(self) -> str | None:
        """Why Gemini CLI would not compress yet (None when it would)."""
        if self.over_threshold:
            return None
        source = "the last recorded prompt" if self.recorded_prompt_tokens is not None else "the estimate"
        return (f"{self.deciding_tokens:,} tokens ({source}) is under the threshold "
                f"({self.threshold:g} x {self.token_limit:,} = {self.threshold_tokens:,}); use --force to compress "
                "anyway")


def environment_turn(session: Session) -> dict[str, Any] | None:
    """The ``<session_context>`` turn a JSONL or legacy session keeps out of its history.

    A checkpoint (``/chat save``) holds it inside its history instead: None.
    """
    if session.contents is not None:
        return None
    from inspector.session.history import part_array

    for message in session.messages:
        if message.get("type") != "user":
            continue
        parts = part_array(message.get("content"))
        text = next((str(p["text"]) for p in parts if isinstance(p, dict) and isinstance(p.get("text"), str)), "")
        if text.lstrip().startswith("<session_context>"):
            return {"role": "user", "parts": parts}
    return None


def environment_quarters(environment: dict[str, Any] | None) -> int:
    """The environment turn's estimate in quarter tokens (summed with the history's, then floored)."""
    from inspector.tokens import content_parts, parts_quarters

    return parts_quarters(content_parts(environment)) if environment else 0
