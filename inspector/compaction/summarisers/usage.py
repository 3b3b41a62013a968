"""The tokens a summariser's model reported using, summed over its calls."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, runtime_checkable


@dataclass(frozen=True)
class TokenUsage:
    """Tokens as the model's side counted them (not this project's estimate)."""

    calls: int = 0
    prompt: int = 0  # the input tokens, cached ones included
    output: int = 0  # the answer's tokens (candidates)
    thoughts: int = 0
    cached: int = 0
    total: int = 0

    def __add__(self, other: TokenUsage) -> TokenUsage:
        return TokenUsage(self.calls + other.calls, self.prompt + other.prompt, self.output + other.output,
                          self.thoughts + other.thoughts, self.cached + other.cached, self.total + other.total)

    def to_json(self) -> dict[str, int]:
        return {"calls": self.calls, "prompt": self.prompt, "output": self.output, "thoughts": self.thoughts,
                "cached": self.cached, "total": self.total}

    def words(self, who: str) -> str:
        """``Gemini CLI counted 12,345 tokens over 2 calls (prompt 12,000, answer 300, thinking 45)``."""
        calls = "1 call" if self.calls == 1 else f"{self.calls:,} calls"
        thinking = f", thinking {self.thoughts:,}" if self.thoughts else ""
        return f"{who} counted {self.total:,} tokens over {calls} (prompt {self.prompt:,}, answer {self.output:,}" \
               f"{thinking})"


@runtime_checkable
class Metered(Protocol):
    """A summariser that knows the tokens its model reported (None until a call answered)."""

    @property
    def usage(self) -> TokenUsage | None: ...

    @property
    def metered_by(self) -> str: ...  # who counted them, for a sentence ("Gemini CLI")
