"""Gemini CLI's settings that change the figures: the compression threshold and the model.

``model.compressionThreshold`` is read from the user's settings
(``~/.gemini/settings.json``) and the project's (``.gemini/settings.json``,
which wins), the way Gemini CLI layers them.  A value of 0 or none means the
default, 0.5, as in Gemini CLI.

The configured model (``--model``, else ``GEMINI_MODEL``, else ``model.name``,
else ``auto``, Gemini CLI's own order) decides how compression reads the
history (``compaction.view``), and so where it splits.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from inspector.compaction.view import DEFAULT_CONFIGURED_MODEL, HistoryView, history_view
from inspector.tokens import DEFAULT_THRESHOLD

_COMMENTS = re.compile(r'"(?:\\.|[^"\\])*"|//[^\n]*|/\*.*?\*/', re.S)


def gemini_home() -> Path:
    """The folder that holds ``.gemini`` (``GEMINI_CLI_HOME`` or the home folder)."""
    return Path(os.environ.get("GEMINI_CLI_HOME") or Path.home())


def _read_settings(path: Path) -> dict[str, Any] | None:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError:
        return None
    # Gemini CLI accepts comments in settings files.
    text = _COMMENTS.sub(lambda m: m.group() if m.group().startswith('"') else "", text)
    try:
        value = json.loads(text)
    except json.JSONDecodeError:
        return None
    return value if isinstance(value, dict) else None


def settings_layers(project_dir: Path | None = None) -> list[tuple[Path, dict[str, Any]]]:
    """The settings files that parse, the project's first (its values win)."""
    paths = [(project_dir or Path.cwd()) / ".gemini" / "settings.json", gemini_home() / ".gemini" / "settings.json"]
    return [(path, found) for path in paths if (found := _read_settings(path)) is not None]


@dataclass(frozen=True)
class Threshold:
    value: float
    source: str  # "default", "--threshold", or the settings file it came from


def resolve_threshold(explicit: float | None = None, project_dir: Path | None = None) -> Threshold:
    if explicit is not None:
        return Threshold(explicit, "--threshold")
    for path, settings in settings_layers(project_dir):
        model = settings.get("model")
        value = model.get("compressionThreshold") if isinstance(model, dict) else None
        if isinstance(value, (int, float)) and not isinstance(value, bool) and value:
            return Threshold(float(value), str(path))
    return Threshold(DEFAULT_THRESHOLD, "default")


@dataclass(frozen=True)
class ConfiguredModel:
    """The model Gemini CLI runs with, as it picks it."""

    name: str
    source: str  # "--model", "GEMINI_MODEL", the settings file it came from, or "default"

    @property
    def view(self) -> HistoryView:
        return history_view(self.name)

    @property
    def words(self) -> str:
        """How compression reads the history, and why: for ``analyze`` and the app."""
        whence = "the default" if self.source == "default" else f"from {self.source}"
        return f"before it splits, Gemini CLI's compression {self.view.words} (model {self.name!r}, {whence})"


def resolve_configured_model(explicit: str | None = None, project_dir: Path | None = None) -> ConfiguredModel:
    """``--model``, else ``GEMINI_MODEL``, else the settings' ``model.name`` (the project's first),
    else ``auto``: the order Gemini CLI reads them in."""
    if explicit:
        return ConfiguredModel(explicit, "--model")
    from_env = os.environ.get("GEMINI_MODEL")
    if from_env:
        return ConfiguredModel(from_env, "GEMINI_MODEL")
    for path, settings in settings_layers(project_dir):
        model = settings.get("model")
        name = model.get("name") if isinstance(model, dict) else None
        if isinstance(name, str) and name:
            return ConfiguredModel(name, str(path))
    return ConfiguredModel(DEFAULT_CONFIGURED_MODEL, "default")
