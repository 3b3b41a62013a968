"""The full tool outputs an apply saves (the budget cut them to an excerpt in the session)."""

from __future__ import annotations

import stat
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from inspector.compaction.budget import TOOL_OUTPUTS_DIR, Truncation
from inspector.format import describe_os_error
from inspector.jsjson import js_utf8
from inspector.store import files
from inspector.store.errors import StoreError


@dataclass(frozen=True)
class OutputFile:
    path: Path
    data: bytes
    exists: bool  # already there with the same bytes: nothing to write


def plan_outputs(session_path: Path, truncations: Sequence[Truncation]) -> list[OutputFile]:
    outputs: list[OutputFile] = []
    for item in truncations:
        target = Path(item.output_file)
        if not target.is_absolute():
            target = session_path.parent / target
        data = js_utf8(str(item.full_text))  # as Gemini CLI (Node) would write it
        exists = False
        try:
            exists = files.read_own_file(target) == data
        except FileNotFoundError:
            pass
        except OSError as exc:
            raise StoreError(session_path, f"tool output path {target}: {describe_os_error(exc)}; nothing was written"
                             ) from None
        else:
            if not exists:
                raise StoreError(
                    session_path,
                    f"tool output file {target} already exists with different content (written since the "
                    "preview?); preview again. Nothing was written",
                    "conflict",
                )
        outputs.append(OutputFile(target, data, exists))
    return outputs


def refuse_linked_outputs(session_path: Path, output: Path) -> None:
    """A full tool output is written only into real folders: a symbolic link from the tool-outputs
    folder down to the file is refused, not followed (run as root on another user's session, the
    files made would be handed to that user wherever the link points)."""
    parts = output.parts
    if TOOL_OUTPUTS_DIR not in parts[:-1]:
        return
    files.refuse_links(session_path, Path(*parts[:parts.index(TOOL_OUTPUTS_DIR)]), (output,), "writes tool outputs",
                       "The session was left as it was")


def write_outputs(session_path: Path, outputs: Sequence[OutputFile], session_mode: int,
                   hook: files.WriteHook | None, written: list[Path], folders: list[Path]) -> None:
    """Write the outputs not there yet, adding each to ``written`` as it is (the caller removes them
    if a later one fails), and each folder made for them to ``folders``."""
    mode = stat.S_IMODE(session_mode) & 0o666  # a full output is as private as its session
    for output in outputs:
        if output.exists:
            continue
        refuse_linked_outputs(session_path, output.path)
        folders.extend(files.make_folders(output.path.parent, files.folder_mode(mode)))
        try:
            files.atomic_write(output.path, output.data, hook=hook, no_clobber=True, mode=mode)
        except FileExistsError:
            if files.read_own_file(output.path) != output.data:
                raise StoreError(
                    session_path, f"tool output file {output.path} appeared with different content while applying; "
                    "preview again. The session was left as it was", "conflict"
                ) from None
            continue
        written.append(output.path)

