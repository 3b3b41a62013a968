"""A path the snapshot lists that a later command removed or moved away is said so beside it.

Only for a command recorded as ended ok whose every part ran (``rm``, ``rm -r`` on a folder holding
it, ``git rm``, ``mv``, ``git mv``), resolved where Gemini CLI ran it; never from words alone.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from inspector.cli import main
from tests.test_snapshot_truth import Recording, shell, shell_text

WORKSPACE = "/home/dev/app"


def _write(path: str) -> dict[str, Any]:
    return {"name": "write_file", "args": {"file_path": path, "content": "x = 1\n"}, "status": "success",
            "output": f"Successfully created and wrote to new file: {path}."}


def _run(command: str, code: int = 0, folder: str | None = None) -> dict[str, Any]:
    args = {"command": command} if folder is None else {"command": command, "dir_path": folder}
    fields = f"\nExit Code: {code}" if code else ""
    return shell(args=args, status="success", output=shell_text(f"Output: (empty){fields}\nProcess Group PGID: 7"))


def _session(workspace: bool) -> Recording:
    session = Recording()
    if workspace:
        context = session.lines[1]["$set"]["messages"][0]
        context["content"] = [{"text": f"<session_context>\nThis is the Gemini CLI.\n- **Workspace Directories:**\n"
                                       f"  - {WORKSPACE}\n- **Directory Structure:**\n</session_context>"}]
    session.user("Set the project up, then tidy it.")
    session.model("Writing.", _write(f"{WORKSPACE}/build/out.txt"), _write("notes.txt"),
                  _write(f"{WORKSPACE}/src/keep.py"), _write(f"{WORKSPACE}/src/said.py"),
                  _write(f"{WORKSPACE}/src/semi.py"), _write(f"{WORKSPACE}/tmp.txt"), _write(f"{WORKSPACE}/lib/x.py"))
    session.model("Tidying.", _run("rm -rf build 2>&1"))
    session.model("Moving.", _run("git add -A && git mv notes.txt docs/notes.txt"))
    session.model("Removing.", _run("rm src/keep.py", code=1))
    session.model("Saying.", _run("echo rm src/said.py"))
    session.model("Removing.", _run("rm src/semi.py; ls"))
    session.model("Removing.", _run("rm tmp.txt"))
    session.model("Writing again.", _write(f"{WORKSPACE}/tmp.txt"))
    session.model("Removing.", _run("rm x.py", folder=f"{WORKSPACE}/lib"))
    session.padding(8)
    return session


def _snapshot(path: Path, capsys: pytest.CaptureFixture[str]) -> str:
    assert main(["compact", str(path), "--provider", "offline", "--force", "--json"]) == 0
    result: dict[str, Any] = json.loads(capsys.readouterr().out)
    assert result["status"] == "COMPRESSED", result["message"]
    assert result["false_claims"] == []
    return str(result["snapshot"])


def _listed(snapshot: str, name: str) -> str:
    """The item of an artifact line that lists the file ``name`` (its lines list paths parted by "; ")."""
    for line in snapshot.splitlines():
        if not line.startswith("- CREATED: "):
            continue
        for item in line[len("- CREATED: "):].split("; "):
            if item.split(" (")[0].strip("`").endswith(name):
                return item
    raise AssertionError((name, snapshot))


def test_a_created_file_a_later_command_removed_is_said_removed(tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    snapshot = _snapshot(_session(True).write(tmp_path / "tidy.jsonl"), capsys)
    assert "removed later by `rm -rf build 2>&1` in turn" in _listed(snapshot, "build/out.txt")
    assert "moved away later by `git add -A && git mv notes.txt docs/notes.txt` in turn" in _listed(
        snapshot, "notes.txt")
    assert "removed later by `rm x.py` in turn" in _listed(snapshot, "lib/x.py")  # run in that folder
    for name in ("src/keep.py", "src/said.py", "src/semi.py", "tmp.txt"):
        # failed; only words; a part whose own end is not recorded; written again after it was removed
        assert "later by" not in _listed(snapshot, name), (name, snapshot)


def test_without_a_named_workspace_only_paths_given_alike_are_matched(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    snapshot = _snapshot(_session(False).write(tmp_path / "tidy.jsonl"), capsys)
    assert "moved away later by" in _listed(snapshot, "notes.txt")  # both relative to the workspace
    assert "later by" not in _listed(snapshot, "build/out.txt")  # where `build` is, is not known
    assert "removed later by `rm x.py`" in _listed(snapshot, "lib/x.py")  # its folder is absolute
    assert "later by" not in _listed(snapshot, "src/keep.py")
