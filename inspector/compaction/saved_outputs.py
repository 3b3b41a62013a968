"""Where Gemini CLI saves a tool's full output, as a rule both the store and the app read, and reading
the text behind a masked output's marker for the app (``read_saved_output``).

A session names these files itself (a masked output's marker, a budget
excerpt's note), so a name in a session is never trusted to be one: only an
absolute path with a ``tool-outputs`` folder above the file, and no ``..``,
is taken for one.  A revert removes such files, and the app shows them.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from inspector.compaction.budget import TOOL_OUTPUTS_DIR
from inspector.compaction.masking import MaskedMarker, outputs_folder


def in_tool_outputs(path: str) -> bool:
    """Whether ``path`` is an absolute path to a file inside a ``tool-outputs`` folder, with no ``..``."""
    if "\0" in path:
        return False
    parts = PurePosixPath(path).parts
    return PurePosixPath(path).is_absolute() and ".." not in parts and TOOL_OUTPUTS_DIR in parts[:-1]


SAVED_SHOWN_BYTES = 1 << 20  # the most of a saved output read for showing


@dataclass(frozen=True)
class SavedOutput:
    """The full text behind a ``<tool_output_masked>`` marker, or why it cannot be shown."""

    path: str | None  # the file read, or the one the marker names
    text: str | None  # None: gone or unreadable (``note`` says which)
    size: int = 0  # the file's size in bytes
    note: str = ""  # one plain sentence for a person


def read_saved_output(marker: MaskedMarker, session_path: Path, session_id: str | None) -> SavedOutput:
    """Read the file a marker names; where it has moved with the project's temp
    folder, look for it by name in this session's ``tool-outputs`` folder."""
    from inspector.analysis import project_temp_dir

    if marker.saved_path is None:
        return SavedOutput(None, None, note="The marker does not name a file holding the full output.")
    name = marker.saved_path.replace("\\", "/").rsplit("/", 1)[-1]
    candidates: list[Path] = []
    if in_tool_outputs(marker.saved_path):  # a session names any path it likes: only Gemini CLI's kind is opened
        candidates.append(Path(marker.saved_path))
    if name not in ("", ".", ".."):
        candidates.append(Path(outputs_folder(str(project_temp_dir(session_path)), session_id)) / name)
    if not candidates:
        return SavedOutput(marker.saved_path, None, note=f"The marker names {marker.saved_path}, which is no file "
                           f"in a {TOOL_OUTPUTS_DIR} folder: it is not opened.")
    problems: list[str] = []
    for candidate in dict.fromkeys(candidates):
        try:  # no link followed, no FIFO waited on: what was opened is checked, not what was looked at
            fd = os.open(candidate, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC)
        except FileNotFoundError:
            continue
        except OSError as error:
            problems.append(f"{candidate} cannot be read ({error.strerror or error}).")
            continue
        with os.fdopen(fd, "rb") as handle:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode):
                problems.append(f"{candidate} is not a regular file.")
                continue
            try:
                data = handle.read(SAVED_SHOWN_BYTES)
            except OSError as error:
                problems.append(f"{candidate} cannot be read ({error.strerror or error}).")
                continue
        text = data.decode("utf-8", "replace")
        note = "" if info.st_size <= SAVED_SHOWN_BYTES else (
            f"The first {SAVED_SHOWN_BYTES:,} of {info.st_size:,} bytes are shown.")
        return SavedOutput(str(candidate), text, info.st_size, note)
    if problems:
        return SavedOutput(marker.saved_path, None, note=" ".join(problems))
    return SavedOutput(marker.saved_path, None, note=f"The full output was saved to {marker.saved_path}; "
                       "that file is gone.")
