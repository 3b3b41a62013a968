"""Summarisers behind one interface, and the choice between them.

``pick_summariser("auto")`` uses Gemini when credentials are present
(``GEMINI_API_KEY`` / ``GOOGLE_API_KEY``, or ``GOOGLE_GENAI_USE_VERTEXAI``
with ``GOOGLE_CLOUD_PROJECT``), else the offline summariser.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from inspector.compaction.summarisers.base import Summariser, SummariserError

PROVIDERS = ("auto", "gemini", "offline")
DEFAULT_MODEL = "gemini-2.5-flash"

__all__ = ["PROVIDERS", "Summariser", "SummariserError", "gemini_available", "pick_summariser"]


def gemini_available(env: Mapping[str, str] | None = None) -> bool:
    env = os.environ if env is None else env
    if env.get("GEMINI_API_KEY") or env.get("GOOGLE_API_KEY"):
        return True
    vertex = (env.get("GOOGLE_GENAI_USE_VERTEXAI") or "").strip().lower() in ("1", "true", "yes")
    return vertex and bool(env.get("GOOGLE_CLOUD_PROJECT"))


def pick_summariser(
    provider: str = "auto",
    *,
    model: str | None = None,
    base_url: str | None = None,
    env: Mapping[str, str] | None = None,
    **gemini_options: Any,
) -> Summariser:
    """The summariser for ``--provider``; ``model`` defaults to the session's, else gemini-2.5-flash."""
    if provider not in PROVIDERS:
        raise ValueError(f"unknown provider {provider!r} (choose from {', '.join(PROVIDERS)})")
    if provider == "auto":
        provider = "gemini" if gemini_available(env) else "offline"
    if provider == "offline":
        from inspector.compaction.summarisers.offline import OfflineSummariser

        return OfflineSummariser(model=model)
    from inspector.compaction.summarisers.gemini import GeminiSummariser

    return GeminiSummariser(model or DEFAULT_MODEL, base_url=base_url, **gemini_options)
