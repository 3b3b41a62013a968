"""How full the context is, and whether Gemini CLI would compress it now: the one rule.

``analyze`` (its header, ``context_tokens``, ``would_compress``), ``compact``
and the app all decide from a ``ContextFigures``:

* the recorded prompt is the input-token count of the newest usage record
  since the session's last compaction (``Analysis.recorded_prompt_tokens``);
  usage recorded before it measured a longer history that no longer exists;
* without one, the estimate of what would be sent: the environment-context
  turn Gemini CLI keeps in front of the history, plus the history;
* Gemini CLI compresses, unforced, once that figure reaches
  ``threshold x token limit`` and something comes before its split (of the
  history as the tool-output budget leaves it); over the threshold with
  nothing before the split it does nothing (NOOP), and says nothing.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import Enum
from typing import Any

from inspector.format import count_text, percent, plural
from inspector.session.loader import Session


@dataclass(frozen=True)
class ContextFigures:
    recorded_prompt_tokens: int | None  # the newest usage since the last compaction, if any
    estimated_tokens: int  # environment turn + history, estimated
    token_limit: int
    threshold: float
    history_tokens: int | None = None  # the history alone (the turn table's total), when known

    @property
    def source(self) -> str:
        """Which figure decides: the recorded prompt when there is one, else the estimate."""
        return "recorded prompt" if self.recorded_prompt_tokens is not None else "estimate"

    @property
    def environment_tokens(self) -> int:
        """How much of the estimate is the environment turn, not the history (0 when unknown)."""
        return 0 if self.history_tokens is None else self.estimated_tokens - self.history_tokens

    @property
    def share(self) -> float:
        """The deciding figure as a share of the token limit."""
        return self.deciding_tokens / self.token_limit if self.token_limit else 0.0

    @property
    def share_percent(self) -> str:
        """``share`` as every face writes it: one decimal, or as many more as it takes to stay on the
        side of the threshold it is on (524,287 of 1,048,576 is "49.9999%" beside a 50% threshold,
        never "50.0%" beside "below the threshold")."""
        value, line = self.share * 100, float(self.threshold_percent.rstrip("%"))  # compared as both are shown
        if abs(value) >= 1e6:
            return percent(self.share)
        if self.over_threshold and math.isclose(value, line, rel_tol=1e-12):
            return self.threshold_percent  # exactly at the threshold: the same figure, whatever the floats say
        text = f"{value:.1f}"
        for places in range(2, 10):
            if (float(text) >= line) == self.over_threshold:
                break
            text = f"{value:.{places}f}"
        return f"{text}%"

    def reason(self) -> str:
        """Why the verdict is what it is, in one phrase: the deciding figure against the threshold."""
        sign = ">=" if self.over_threshold else "<"
        return (f"{self.source} {count_text(self.deciding_tokens)} {sign} threshold {self.threshold_tokens:,} "
                f"({self.threshold_percent} of {self.token_limit:,})")

    @property
    def threshold_percent(self) -> str:
        """The threshold as a percentage of the window, as every face writes it: never rounded ("50.0%",
        "3.16%"), since a rounded one ("3.2%") disagrees with the threshold's tokens beside it
        (33,135 is 3.16% of 1,048,576; 3.2% would be 33,554) and with the setting's "0.0316"."""
        value = self.threshold * 100
        text = f"{value:.1f}"  # as every other percentage, where that is the threshold exactly ("50.0%")
        if math.isclose(float(text), value, rel_tol=1e-12) and not self._hides_the_line(float(text)):
            return f"{text}%"
        text = f"{value:.12g}"  # without the float's noise ("3.16", not "3.1599999999999997")...
        if self._hides_the_line(float(text)):
            text = repr(value)  # ...unless only the noise tells the share from the line (a hypothesis case)
        return f"{text}%"

    def _hides_the_line(self, shown: float) -> bool:
        """Whether the share, written as closely as ``share_percent`` writes it, would sit on the other
        side of a threshold shown as ``shown`` than the side it is on."""
        share = self.share * 100
        return abs(share) < 1e6 and (round(share, 9) >= shown) != self.over_threshold

    def estimate_note(self) -> str:
        """What the estimate is made of: the history, plus the environment turn when there is one."""
        if self.environment_tokens:
            return (f"estimate {self.estimated_tokens:,} = history {self.history_tokens or 0:,} "
                    f"+ environment turn {self.environment_tokens:,}")
        return f"estimate {self.estimated_tokens:,}"

    def before_note(self, before: int) -> str:
        """Why a compaction's "before" figure is not the history's total (the table's), when it is
        not: Gemini CLI counts the environment turn it sends ahead of the history, which is no row
        of the table ("" otherwise).  Every face that shows a "before" says it in these words."""
        if not self.environment_tokens or before != self.estimated_tokens:
            return ""
        return (f"before = the table's {self.history_tokens or 0:,} + the environment turn "
                f"{self.environment_tokens:,} Gemini CLI sends ahead of the history")

    @property
    def deciding_tokens(self) -> int:
        """What the threshold is compared with: the recorded prompt, else the estimate."""
        return self.recorded_prompt_tokens if self.recorded_prompt_tokens is not None else self.estimated_tokens

    @property
    def threshold_tokens(self) -> int:
        """The fewest tokens that reach the threshold (``over_threshold`` is exactly "at least this
        many"): a threshold that falls between two whole numbers is shown rounded up, never down
        (which would show a prompt of that size as under a threshold equal to it)."""
        return math.ceil(self.threshold * self.token_limit)

    @property
    def over_threshold(self) -> bool:
        return self.deciding_tokens >= self.threshold * self.token_limit

    def below_threshold(self) -> str | None:
        """Why Gemini CLI would not compress yet (None when it would)."""
        if self.over_threshold:
            return None
        source = "the last recorded prompt" if self.recorded_prompt_tokens is not None else "the estimate"
        return (f"{plural(self.deciding_tokens, 'token')} ({source}) is under the threshold "
                f"({self.threshold:g} x {self.token_limit:,} = {self.threshold_tokens:,}); use --force to compress "
                "anyway")


class Verdict(Enum):
    """What Gemini CLI would do before the next prompt, unforced (``verdict``)."""

    COMPRESS = "compress"
    BELOW_THRESHOLD = "below threshold"
    NOTHING_BEFORE_SPLIT = "nothing before the split"

    @property
    def sentence(self) -> str:
        """The verdict in a few words, for a report's or a screen's header."""
        return _WORDS[self].sentence

    @property
    def short(self) -> str:
        """The verdict in two or three words, for a narrow header."""
        return _WORDS[self].short

    @property
    def explained(self) -> str:
        """The verdict as a sentence that says why."""
        return _WORDS[self].explained


@dataclass(frozen=True)
class _Words:
    sentence: str
    short: str
    explained: str


_WORDS = {
    Verdict.COMPRESS: _Words(
        "would compress now", "would compress",
        "Gemini CLI would compress this history before the next prompt."),
    Verdict.BELOW_THRESHOLD: _Words(
        "below the threshold: Gemini CLI would not compress yet", "below threshold",
        "Gemini CLI would not compress this history yet: it is under the threshold."),
    # The split is 0 only when no turn but the first may begin the kept part (whatever the weights)
    # and the history cannot be summarised whole (compaction.split.find_split_point).
    Verdict.NOTHING_BEFORE_SPLIT: _Words(
        "over the threshold, but nothing comes before the split: Gemini CLI would not compress (NOOP)",
        "nothing to summarise",
        "Gemini CLI would not compress this history: nothing comes before its split, since no prompt after "
        "turn 0 can begin the kept part and the history does not end on a model reply without tool calls. "
        "It would do nothing (NOOP)."),
}


def verdict(context: ContextFigures, compress_split: int) -> Verdict:
    """Whether Gemini CLI would compress before the next prompt: the deciding figure against the
    threshold, then its split (``compress_split``: of the history the tool-output budget leaves)."""
    if not context.over_threshold:
        return Verdict.BELOW_THRESHOLD
    return Verdict.COMPRESS if compress_split > 0 else Verdict.NOTHING_BEFORE_SPLIT


def environment_turn(session: Session) -> dict[str, Any] | None:
    """The ``<session_context>`` turn a JSONL or legacy session keeps out of its history.

    A checkpoint (``/chat save``) holds it inside its history instead: None.
    """
    if session.contents is not None:
        return None
    from inspector.session.history import is_environment_content, part_array

    for message in session.messages:
        if message.get("type") == "user" and is_environment_content(message.get("content")):
            return {"role": "user", "parts": part_array(message.get("content"))}
    return None


def environment_quarters(environment: dict[str, Any] | None) -> int:
    """The environment turn's estimate in quarter tokens (summed with the history's, then floored)."""
    from inspector.tokens import content_parts, parts_quarters

    return parts_quarters(content_parts(environment)) if environment else 0
