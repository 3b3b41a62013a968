"""Where Gemini CLI saves a tool's full output, as a rule both the store and the app read.

A session names these files itself (a masked output's marker, a budget
excerpt's note), so a name in a session is never trusted to be one: only an
absolute path with a ``tool-outputs`` folder above the file, and no ``..``,
is taken for one.  A revert removes such files, and the app shows them.
"""

from __future__ import annotations

from pathlib import PurePosixPath

from inspector.compaction.budget import TOOL_OUTPUTS_DIR


def in_tool_outputs(path: str) -> bool:
    """Whether ``path`` is an absolute path to a file inside a ``tool-outputs`` folder, with no ``..``."""
    if "\0" in path:
        return False
    parts = PurePosixPath(path).parts
    return PurePosixPath(path).is_absolute() and ".." not in parts and TOOL_OUTPUTS_DIR in parts[:-1]
