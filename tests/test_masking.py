"""Masking in ``analyze --json``, its settings, and the saved outputs behind markers."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings

from inspector import cli
from inspector.analysis import project_temp_dir
from inspector.compaction.masking import (
    MaskedMarker,
    MaskingSettings,
    masking_settings,
    outputs_folder,
    plan_masking,
    session_masking,
)
from inspector.compaction.saved_outputs import read_saved_output
from inspector.session import Session, SessionError, history, load
from tests.conftest import session_files
from tests.reference.client import RefServer
from tests.reference.strategies import jsonl_files

SESSION_ID = "5e551011-aaaa-4bbb-8ccc-123456789abc"


def write_session(folder: Path, outputs: list[str], tool: str = "read_file") -> Path:
    """A recording under ``<folder>/chats/`` whose tool calls returned ``outputs``."""
    chats = folder / "chats"
    chats.mkdir(parents=True)
    lines: list[dict[str, Any]] = [{"sessionId": SESSION_ID, "projectHash": "0" * 64,
                                    "startTime": "2026-11-22T10:00:00.000Z", "kind": "main"}]
    for n, output in enumerate(outputs):
        lines.append({"id": f"u{n}", "timestamp": "2026-11-22T10:00:00.000Z", "type": "user",
                      "content": [{"text": f"step {n}"}]})
        call = {"id": f"call-{n}", "name": tool, "args": {"n": n}, "status": "success",
                "timestamp": "2026-11-22T10:00:00.000Z",
                "result": [{"functionResponse": {"id": f"call-{n}", "name": tool, "response": {"output": output}}}]}
        lines.append({"id": f"g{n}", "timestamp": "2026-11-22T10:00:00.000Z", "type": "gemini",
                      "content": "", "toolCalls": [call], "model": "gemini-2.5-pro"})
    path = chats / "session-2026-11-22T10-00-5e551011.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


@pytest.fixture
def isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project folder as the working directory, and a home with no settings."""
    project = tmp_path / "project"
    project.mkdir()
    monkeypatch.chdir(project)
    monkeypatch.setenv("GEMINI_CLI_HOME", str(tmp_path / "home"))
    return project


def analyze_json(capsys: pytest.CaptureFixture[str], path: Path) -> dict[str, Any]:
    assert cli.main(["analyze", "--json", str(path)]) == 0
    return json.loads(capsys.readouterr().out)


@pytest.mark.differential
def test_analyze_json_masking_is_the_references(
    isolated: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], reference: RefServer
) -> None:
    outputs = [f"file {n}\n" + "x = 1\n" * (5_000 + 300 * n) for n in range(12)]
    project_tmp = tmp_path / "gemini-tmp" / "proj"
    path = write_session(project_tmp, outputs)
    report = analyze_json(capsys, path)["masking"]
    contents = [t.content for t in history(load(path))]
    answer = reference.call("mask", contents=contents, temp_dir=str(project_tmp), session_id=SESSION_ID)
    assert answer["masked_count"] > 0
    assert report["masked_count"] == answer["masked_count"]
    assert report["tokens_saved"] == answer["tokens_saved"]
    assert report["parts"] == answer["parts"]
    assert report["settings"]["source"] == "default"

    # the project's settings are honoured: a larger protection window masks fewer parts
    settings = {"protectionThresholdTokens": 120_000, "minPrunableThresholdTokens": 1_000}
    (isolated / ".gemini").mkdir()
    (isolated / ".gemini" / "settings.json").write_text(
        "// comments are allowed\n" + json.dumps({"contextManagement": {"tools": {"outputMasking": settings}}}))
    narrower = analyze_json(capsys, path)["masking"]
    answer = reference.call("mask", contents=contents, settings=settings, temp_dir=str(project_tmp),
                            session_id=SESSION_ID)
    assert 0 < narrower["masked_count"] == answer["masked_count"] < report["masked_count"]
    assert narrower["parts"] == answer["parts"]
    assert narrower["settings"]["source"].endswith("settings.json")


def test_settings_layer_key_by_key(isolated: Path, tmp_path: Path) -> None:
    home = tmp_path / "home" / ".gemini"
    home.mkdir(parents=True)
    (home / "settings.json").write_text(json.dumps({"contextManagement": {"tools": {"outputMasking": {
        "protectionThresholdTokens": 10, "minPrunableThresholdTokens": 20, "protectLatestTurn": False}}}}))
    (isolated / ".gemini").mkdir()
    (isolated / ".gemini" / "settings.json").write_text(json.dumps({"contextManagement": {"tools": {
        "outputMasking": {"protectionThresholdTokens": 99, "minPrunableThresholdTokens": "lots",
                          "protectLatestTurn": None}}}}))
    found = masking_settings()
    assert (found.protection_threshold_tokens, found.min_prunable_threshold_tokens, found.protect_latest_turn) == (
        99, 20, False)
    assert str(isolated) in found.source and str(home) in found.source
    (home / "settings.json").unlink()
    assert masking_settings().min_prunable_threshold_tokens == MaskingSettings().min_prunable_threshold_tokens


def test_markers_name_their_saved_files_which_open_or_are_said_gone(isolated: Path, tmp_path: Path) -> None:
    project_tmp = tmp_path / "gemini-tmp" / "proj"
    outputs = [f"output {n}\n" + "data line\n" * 8_000 for n in range(10)]
    path = write_session(project_tmp, outputs)
    contents = [t.content for t in history(load(path))]
    plan = plan_masking(contents, folder=outputs_folder(str(project_tmp), SESSION_ID))
    assert plan.masked_count > 0
    # write what Gemini CLI would: the files, and the masked parts in the history
    for item in plan.parts:
        Path(item.output_file).parent.mkdir(parents=True, exist_ok=True)
        fr = contents[item.turn]["parts"][item.part]["functionResponse"]
        Path(item.output_file).write_text(outputs[int(fr["id"].split("-")[1])], encoding="utf-8")
        contents[item.turn]["parts"][item.part] = {"functionResponse": {**fr, "response": {"output": item.snippet}}}
    again = plan_masking(contents)
    assert again.masked_count == 0
    assert {(m.turn, m.part) for m in again.markers} == {(p.turn, p.part) for p in plan.parts}
    by_place = {(p.turn, p.part): p for p in plan.parts}
    for marker in again.markers:
        assert marker.saved_path == by_place[marker.turn, marker.part].output_file
        saved = read_saved_output(marker, path, SESSION_ID)
        assert saved.text is not None and saved.text.startswith("output ")
        assert saved.text in outputs

    marker = again.markers[0]
    # recorded on another machine: the same name in this session's folder is found
    elsewhere = MaskedMarker(marker.turn, marker.part, marker.tool,
                             "/home/someone/.gemini/tmp/x/tool-outputs/" + Path(marker.saved_path or "").name)
    assert read_saved_output(elsewhere, path, SESSION_ID).text == Path(marker.saved_path or "").read_text()
    # gone: said plainly
    Path(marker.saved_path or "").unlink()
    gone = read_saved_output(marker, path, SESSION_ID)
    assert gone.text is None and "gone" in gone.note and marker.saved_path in gone.note
    # a FIFO where the file was is never opened
    os.mkfifo(marker.saved_path or "")
    fifo = read_saved_output(marker, path, SESSION_ID)
    assert fifo.text is None and "not a regular file" in fifo.note


def same_plan(session: Session, where: str) -> None:
    """The plan from the reader's figures (reading back only the outputs it may mask) is the
    plan over the turns' own contents, with every part measured again."""
    turns = history(session)
    folder = outputs_folder(str(project_temp_dir(session.path)), session.session_id)
    for cfg in (MaskingSettings(), MaskingSettings(300, 0, False), MaskingSettings(0, 0, False)):
        from_figures = session_masking(session, turns, cfg)
        whole = plan_masking([t.content for t in turns], cfg, folder=folder)
        assert from_figures == whole, where
        assert [p.snippet for p in from_figures.parts] == [p.snippet for p in whole.parts], where


@pytest.mark.parametrize("path", session_files(), ids=lambda p: p.name)
def test_the_readers_figures_give_the_same_plan(path: Path) -> None:
    same_plan(load(path), str(path))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=jsonl_files())
def test_the_readers_figures_give_the_same_plan_on_generated_files(
        data: bytes, tmp_path_factory: pytest.TempPathFactory) -> None:
    path = tmp_path_factory.mktemp("lazy") / "session.jsonl"
    path.write_bytes(data)
    try:
        session = load(path)
    except SessionError:
        return
    same_plan(session, data.decode("utf-8", "replace"))


def test_a_marker_naming_a_file_outside_tool_outputs_is_never_opened(isolated: Path, tmp_path: Path) -> None:
    """A session names whatever path it likes in a marker: only a file in a tool-outputs folder is read
    (a marker naming /etc/shadow had the app show it), never through a link."""
    project_tmp = tmp_path / "gemini-tmp" / "proj"
    path = write_session(project_tmp, ["output\n" + "data line\n" * 8_000 for _ in range(4)])
    secret = tmp_path / "secret.txt"
    secret.write_text("the secret\n", encoding="utf-8")
    outputs = Path(outputs_folder(str(project_tmp), SESSION_ID))
    outputs.mkdir(parents=True)
    (outputs / "linked.txt").symlink_to(secret)
    named = [str(secret), f"{outputs}/../../../../secret.txt", "secret.txt", f"{tmp_path}/tool-outputs-not/secret.txt",
             f"{outputs}/linked.txt"]
    for saved_path in named:
        found = read_saved_output(MaskedMarker(1, 0, "read_file", saved_path), path, SESSION_ID)
        assert found.text is None, saved_path
        assert "the secret" not in found.note
    outside = read_saved_output(MaskedMarker(1, 0, "read_file", str(secret)), path, SESSION_ID)
    assert "not opened" in outside.note or "gone" in outside.note
    (outputs / "kept.txt").write_text("the saved output\n", encoding="utf-8")  # Gemini CLI's own file still opens
    kept = read_saved_output(MaskedMarker(1, 0, "read_file", f"{outputs}/kept.txt"), path, SESSION_ID)
    assert kept.text == "the saved output\n"
