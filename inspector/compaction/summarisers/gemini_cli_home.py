"""What the user's Gemini CLI (0.61) keeps in its home folder: whether it is signed in, and the
session a headless run records.

* The home is ``$GEMINI_CLI_HOME`` else ``$HOME``; its ``.gemini/settings.json`` names the way it
  signs in (``security.auth.selectedType``; ``GOOGLE_GENAI_USE_GCA=true`` means Google too).  A
  sign-in with Google (``oauth-personal``) keeps its tokens in ``.gemini/oauth_creds.json``, or, with
  ``GEMINI_FORCE_ENCRYPTED_FILE_STORAGE=true``, encrypted in ``.gemini/gemini-credentials.json``.
* Every run, headless ones too, is recorded as a session:
  ``.gemini/tmp/<project>/chats/session-<YYYY-MM-DDTHH-MM>-<first 8 of its id>.jsonl``, whose first
  line holds ``sessionId``.  ``remove_session`` deletes exactly the one with a given id.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

GOOGLE_SIGN_IN = "oauth-personal"
CREDENTIAL_FILES = ("oauth_creds.json", "gemini-credentials.json")
FIRST_LINE_MAX = 64 * 1024  # a session's metadata line is a few hundred bytes


@dataclass(frozen=True)
class SignIn:
    """How the user's Gemini CLI signs in, as its files say (never their contents)."""

    auth_type: str | None  # security.auth.selectedType, or None when unset
    credentials: Path | None  # the file holding a Google sign-in's tokens, when there is one
    settings: Path | None  # the settings file that names the way

    @property
    def with_google(self) -> bool:
        """Signed in with Google, with the tokens kept where Gemini CLI reads them."""
        return self.auth_type == GOOGLE_SIGN_IN and self.credentials is not None

    def words(self) -> str:
        """``signed in with Google (~/.gemini/oauth_creds.json)``, or why it is not."""
        if self.with_google:
            return f"signed in with Google ({self.credentials})"
        if self.auth_type == GOOGLE_SIGN_IN:
            return f"set to sign in with Google, but no {' or '.join(CREDENTIAL_FILES)} was found: run gemini " \
                   "once to sign in"
        if self.auth_type:
            return f"set to sign in with {self.auth_type!r}"
        return "not signed in (no security.auth.selectedType in its settings)"


def cli_home(env: Mapping[str, str]) -> Path | None:
    """The folder holding ``.gemini``, as Gemini CLI finds it from ``env``; None when it names none."""
    found = env.get("GEMINI_CLI_HOME") or env.get("HOME") or env.get("USERPROFILE")
    return Path(found) if found else None


def find_gemini(env: Mapping[str, str], given: str | None = None) -> str | None:
    """The ``gemini`` to run: ``given`` (a path, or a name looked up on PATH), else ``gemini`` on ``env``'s
    PATH; None when there is none that can run."""
    if given:
        if os.sep in given or (os.altsep and os.altsep in given):
            found = os.path.abspath(given)  # it runs in a folder of its own: a relative path would not hold there
            return found if os.path.isfile(found) and os.access(found, os.X_OK) else None
        return shutil.which(given, path=env.get("PATH", ""))
    return shutil.which("gemini", path=env.get("PATH", ""))


def sign_in(env: Mapping[str, str]) -> SignIn:
    """How the Gemini CLI of ``env``'s home signs in."""
    from inspector.settings import _read_settings  # Gemini CLI's reading of a settings file (comments allowed)

    home = cli_home(env)
    if home is None:
        return SignIn(None, None, None)
    folder = home / ".gemini"
    path = folder / "settings.json"
    found = _read_settings(path) or {}
    security = found.get("security")
    auth = security.get("auth") if isinstance(security, dict) else None
    selected = auth.get("selectedType") if isinstance(auth, dict) else None
    auth_type = selected if isinstance(selected, str) and selected else None
    if env.get("GOOGLE_GENAI_USE_GCA", "").strip().lower() == "true" and auth_type is None:
        auth_type = GOOGLE_SIGN_IN
    credentials = next((folder / name for name in CREDENTIAL_FILES if (folder / name).is_file()), None)
    return SignIn(auth_type, credentials, path if auth_type and selected else None)


def remove_session(env: Mapping[str, str], session_id: str) -> list[Path]:
    """Delete the session Gemini CLI recorded for ``session_id`` (and the folders named by that id that
    hold its subagents' sessions and saved tool outputs), in every project of ``env``'s home; the paths
    removed.  A file is removed only when its first line names this id."""
    home = cli_home(env)
    if home is None or not session_id:
        return []
    removed: list[Path] = []
    tmp = home / ".gemini" / "tmp"
    try:
        projects = [entry for entry in tmp.iterdir() if entry.is_dir()]
    except OSError:
        return []
    for project in projects:
        chats = project / "chats"
        for path in _candidates(chats, session_id):
            if _first_line_id(path) == session_id:
                with contextlib.suppress(FileNotFoundError):
                    path.unlink()
                    removed.append(path)
        for folder in (chats / session_id, project / "tool-outputs" / f"session-{session_id}"):
            if folder.is_dir() and not folder.is_symlink():
                shutil.rmtree(folder, ignore_errors=True)
                removed.append(folder)
    return removed


def _candidates(chats: Path, session_id: str) -> list[Path]:
    try:
        return sorted(chats.glob(f"session-*-{session_id[:8]}.jsonl"))
    except OSError:
        return []


def _first_line_id(path: Path) -> str | None:
    """The ``sessionId`` of the session file's first line (its metadata)."""
    try:
        with path.open("rb") as handle:
            head = handle.read(FIRST_LINE_MAX)
    except OSError:
        return None
    line = head.split(b"\n", 1)[0]
    try:
        record = json.loads(line)
    except ValueError:
        return None
    found = record.get("sessionId") if isinstance(record, dict) else None
    return found if isinstance(found, str) else None
