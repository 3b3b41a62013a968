"""Analyse a loaded session as Gemini CLI is set up: the one way every face (``analyze``, ``compact``,
``export``, the app) turns a session and the user's options into an ``Analysis``.

The threshold is ``--threshold``, else ``model.compressionThreshold`` from Gemini CLI's settings, else its
default; the configured model (which decides how Gemini CLI's compression reads the history, and so the
split) is ``--model``, else ``GEMINI_MODEL``, else the settings' ``model.name``, else ``auto``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from inspector.analysis import Analysis, analyze
from inspector.session.loader import Session
from inspector.settings import ConfiguredModel, Threshold, resolve_configured_model, resolve_threshold


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
    configured = resolve_configured_model(model, project_dir=project_dir)
    return Configured(analyze(session, model=model, threshold=chosen.value, view=configured.view), chosen, configured)
