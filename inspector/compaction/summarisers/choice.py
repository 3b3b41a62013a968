"""Which summariser will run and why (``ProviderChoice``), as ``summarisers.choose_provider`` decides it.

Its own module so that a summariser can name the choice it runs under without importing the package that
picks summarisers (which imports every summariser).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal


@dataclass(frozen=True)
class ProviderChoice:
    """Which summariser will run and why, decided before anything is sent."""

    provider: Literal["gemini", "gemini-cli", "offline"]
    backend: Literal["api_key", "vertex", "vertex_key", "gemini_cli", "none"]
    reason: str  # one plain sentence, never a secret
    requested: str = "auto"
    key_variable: str | None = None  # the variable holding the key (its name only)
    project: str | None = None
    location: str | None = None
    problem: str | None = None  # why the request cannot be met as asked (e.g. gemini with no credentials)
    program: str | None = None  # gemini-cli: the ``gemini`` that runs

    @property
    def sends(self) -> bool:
        """Whether a compaction with this choice sends the history off the machine."""
        return self.provider in ("gemini", "gemini-cli")

    def to_json(self) -> dict[str, str | None]:
        return {"provider": self.provider, "backend": self.backend, "reason": self.reason, "requested": self.requested,
                "key_variable": self.key_variable, "project": self.project, "location": self.location,
                "problem": self.problem, "program": self.program}

    def label(self) -> str:
        """A few words for a header: "offline", "Gemini (API key)", "Vertex AI (my-proj, us-central1)"."""
        if self.provider == "offline":
            return "offline"
        if self.provider == "gemini-cli":
            return "Gemini CLI" if self.program is None else f"Gemini CLI ({self.program})"
        if self.backend == "vertex":
            return f"Vertex AI ({self.project}, {self.location})"
        if self.backend == "vertex_key":
            return "Vertex AI (API key)"
        return "Gemini (API key)" if self.backend == "api_key" else "Gemini (no credentials)"
