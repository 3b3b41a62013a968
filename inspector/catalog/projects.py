"""Which project a session belongs to, by the name of its folder, and how to resume it in Gemini CLI.

Gemini CLI keeps a project's sessions under ``~/.gemini/tmp/<project>/chats``.
``<project>`` is a short name it records in ``~/.gemini/projects.json``
(``{"projects": {"/the/project/path": "short-name"}}``) and in a
``.project_root`` file inside that folder; older versions used the sha256 of
the project's path.  So the project's own folder is found, in this order:
the ``.project_root`` file, ``projects.json`` (by short name, or by the hash
of a path it lists), the first of the ``directories`` the session recorded.
Where none says, the temp folder's own name stands (a hash cut short).
"""

from __future__ import annotations

import hashlib
import json
import shlex
from dataclasses import dataclass, field
from pathlib import Path, PurePath

from inspector.settings import gemini_home
from inspector.user_cache import HomeUnknown

PROJECT_ROOT_FILE = ".project_root"
REGISTRY_MAX_BYTES = 4 * 1024 * 1024  # a registry is a few kB; a bigger file is not read


@dataclass(frozen=True)
class ProjectNames:
    """Project paths by temp folder name (a short name or a hash), from ``projects.json``."""

    paths: dict[str, str] = field(default_factory=dict)

    def path_of(self, temp_folder: Path) -> str | None:
        """The project path of ``~/.gemini/tmp/<name>``: its ``.project_root``, else the registry."""
        marker = temp_folder / PROJECT_ROOT_FILE
        try:
            if marker.is_file() and marker.stat().st_size < 64 * 1024:
                owner = marker.read_text(encoding="utf-8", errors="replace").strip()
                if owner:
                    return owner
        except OSError:
            pass
        return self.paths.get(temp_folder.name)


def read_registry(path: Path | None = None) -> ProjectNames:
    """``~/.gemini/projects.json`` read as Gemini CLI reads it; an unreadable or malformed one is
    empty (Gemini CLI starts a new one then), so no listing ever fails because of it."""
    try:
        path = path or gemini_home() / ".gemini" / "projects.json"
        if not path.is_file() or path.stat().st_size > REGISTRY_MAX_BYTES:
            return ProjectNames()
        data = json.loads(path.read_bytes())
    except (OSError, HomeUnknown, ValueError, RecursionError):
        return ProjectNames()
    projects = data.get("projects") if isinstance(data, dict) else None
    if not isinstance(projects, dict):
        return ProjectNames()
    paths: dict[str, str] = {}
    for project, short in projects.items():
        if isinstance(project, str) and isinstance(short, str):
            paths[short] = project
            paths[hashlib.sha256(project.encode("utf-8", "surrogatepass")).hexdigest()] = project
    return ProjectNames(paths)


def folder_label(project_path: str | None, directories: tuple[str, ...], temp_name: str) -> str:
    """The name a person knows the project by: its folder's name, from what is known of its path."""
    for known in (project_path, *directories):
        if known:
            name = PurePath(known.rstrip("/\\") or known).name
            if name:
                return name
    return temp_name


def resume_command(session_id: str | None, project_path: str | None) -> str | None:
    """The command that resumes the session in Gemini CLI 0.61: ``gemini --resume <id>`` (the flag
    takes ``latest``, a list index or a session id), run in the project's folder, since Gemini CLI
    looks for the session among the sessions of the folder it starts in.  None without an id."""
    if not session_id:
        return None
    command = f"gemini --resume {shlex.quote(session_id)}"
    return f"cd {shlex.quote(project_path)} && {command}" if project_path else command
