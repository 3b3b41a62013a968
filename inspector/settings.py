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

import contextlib
import errno
import math
import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from inspector.compaction.view import DEFAULT_CONFIGURED_MODEL, HistoryView, history_view
from inspector.session.reader import read_at
from inspector.session.records import js_json_loads
from inspector.tokens import DEFAULT_THRESHOLD
from inspector.user_cache import HomeUnknown, home

# A string or a comment; one never closed runs to the end (so each is matched once: a file of many
# "/*" that never close cost the square of its length), as Gemini CLI's comment stripping reads it.
_COMMENTS = re.compile(r'"(?:\\.|[^"\\])*(?:"|\Z)|//[^\n]*|/\*.*?(?:\*/|\Z)', re.S)
SETTINGS_MAX_BYTES = 1 << 20  # a settings file is a few KB; a bigger "settings file" is not read


def gemini_home() -> Path:
    """The folder that holds ``.gemini`` (``GEMINI_CLI_HOME`` or the home folder).  Raises HomeUnknown
    (an OSError, said in one line) when neither can be told, as for a container's user with no name."""
    configured = os.environ.get("GEMINI_CLI_HOME")
    if configured:
        return Path(configured)
    try:
        return home()
    except HomeUnknown as exc:
        raise HomeUnknown(errno.ENOENT, f"{exc.strerror}; set HOME or GEMINI_CLI_HOME") from None


def _settings_bytes(path: Path) -> bytes | None:
    """The file's bytes; None when there is none to read, or it is no regular file (a FIFO would be
    waited on for ever, /dev/zero read until memory ran out) or bigger than ``SETTINGS_MAX_BYTES``."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > SETTINGS_MAX_BYTES:
            return None
        return read_at(fd, 0, info.st_size)
    except OSError:
        return None
    finally:
        os.close(fd)


def _read_settings(path: Path) -> dict[str, Any] | None:
    """The settings object, read as Gemini CLI reads it (UTF-8 with what is not replaced, comments
    allowed, then ``JSON.parse``); None when it cannot be read or is no JSON object."""
    data = _settings_bytes(path)
    if data is None:
        return None
    text = data.decode("utf-8", "replace")
    text = _COMMENTS.sub(lambda m: m.group() if m.group().startswith('"') else "", text)
    try:
        value = js_json_loads(text)
    except (ValueError, RecursionError):  # not JSON (NaN is not), or nested deeper than this reader goes
        return None
    return value if isinstance(value, dict) else None


def settings_layers(project_dir: Path | None = None) -> list[tuple[Path, dict[str, Any]]]:
    """The settings files that parse, the project's first (its values win)."""
    if project_dir is None:
        try:
            project_dir = Path.cwd()
        except OSError:  # the folder this runs in was removed (or closed to this user): it holds no settings
            project_dir = None
    paths = [] if project_dir is None else [project_dir / ".gemini" / "settings.json"]
    with contextlib.suppress(HomeUnknown):  # no home folder: no user settings
        paths.append(gemini_home() / ".gemini" / "settings.json")
    return [(path, found) for path in paths if (found := _read_settings(path)) is not None]


@dataclass(frozen=True)
class Threshold:
    value: float
    source: str  # "default", "--threshold", or the settings file it came from


def resolve_threshold(explicit: float | None = None, project_dir: Path | None = None) -> Threshold:
    if explicit is not None:
        return Threshold(explicit, "--threshold")
    passed_over = ""
    for path, settings in settings_layers(project_dir):
        model = settings.get("model")
        value = model.get("compressionThreshold") if isinstance(model, dict) else None
        if isinstance(value, (int, float)) and not isinstance(value, bool) and value:
            try:
                number = float(value)
            except OverflowError:  # an integer written out past the doubles: Infinity to JavaScript
                number = math.inf
            if math.isfinite(number):
                return Threshold(number, str(path) + passed_over)
            # JSON.parse reads 1e400 as Infinity: Gemini CLI would then never compress on its own,
            # and no figure can be drawn against it; the next layer (or the default) is used, and said
            passed_over = passed_over or f" (model.compressionThreshold in {path} is too large to use)"
    return Threshold(DEFAULT_THRESHOLD, "default" + passed_over)


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
