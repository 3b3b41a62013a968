"""Analyse a loaded session as Gemini CLI is set up: the one way every face (``analyze``, ``compact``,
``export``, the app) turns a session and the user's options into an ``Analysis``.

The threshold is ``--threshold``, else ``model.compressionThreshold`` from Gemini CLI's settings, else its
default; for an Antigravity transcript, its compaction point (``compaction_point_threshold``).  The
configured model (which decides how Gemini CLI's compression reads the history, and so the split) is
``--model``, else ``GEMINI_MODEL``, else the settings' ``model.name``, else ``auto``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from inspector.analysis import Analysis, analyze
from inspector.session.loader import Session
from inspector.settings import ConfiguredModel, Threshold, resolve_configured_model, resolve_threshold
from inspector.tokens import token_limit


@dataclass(frozen=True)
class Configured:
    """A session's analysis and the settings it was made with (each names where it came from)."""

    analysis: Analysis
    threshold: Threshold
    model: ConfiguredModel


def analyse_configured(session: Session, model: str | None, threshold: float | None,
                       project_dir: Path | None = None) -> Configured:
    """``analyze`` with the threshold and the configured model the options and settings give
    (``project_dir``: where the project's ``.gemini/settings.json`` is looked for; the working folder)."""
    chosen = resolve_threshold(threshold, project_dir=project_dir)
    if session.transcript is not None and threshold is None:  # Antigravity compacts at a point of its own
        chosen = compaction_point_threshold(token_limit(model or session.model))
    configured = resolve_configured_model(model, project_dir=project_dir)
    return Configured(analyze(session, model=model, threshold=chosen.value, view=configured.view), chosen, configured)


def compaction_point_threshold(limit: int) -> Threshold:
    """Antigravity's compaction point (``SESSION_INSPECTOR_COMPACTION_POINT``, else about 150,000 tokens)
    as the share of the window ``limit`` the gauge and the deciding figure are drawn against."""
    from inspector.antigravity.compaction_point import COMPACTION_POINT_VARIABLE, resolve_compaction_point

    point = resolve_compaction_point()
    return Threshold(min(point / limit, 1.0), f"Antigravity's compaction point, {point:,} tokens "
                                              f"({COMPACTION_POINT_VARIABLE} sets it)")
