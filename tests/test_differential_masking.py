"""Tool-output masking against Gemini CLI's own ToolOutputMaskingService.

The reference's service runs in the shared Node process (the ``mask`` op in
tests/reference) with Math.random and Date.now pinned, on the same history as
``plan_masking``: every sample session and the shared recordings (with the
default settings and with small ones that make masking happen), and generated
histories.  The parts masked, their count, the tokens saved, the text each
masked part holds and the file it names must all agree.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from inspector.compaction.masking import (
    EXEMPT_TOOLS,
    MASKING_TAG,
    SHELL_TOOL,
    MaskingPlan,
    MaskingSettings,
    outputs_folder,
    plan_masking,
)
from inspector.session import history, load
from tests.conftest import session_files
from tests.reference.client import RefError
from tests.reference.strategies import json_values, parts, text

pytestmark = pytest.mark.differential

SCALE = float(os.environ.get("DIFFERENTIAL_SCALE", "1"))
SESSION_ID = "9950d309-5cf1-4ce0-8325-c62d92bf6533"
SETTINGS = [
    MaskingSettings(),
    MaskingSettings(2_000, 1_000, True),
    MaskingSettings(300, 0, False),
    MaskingSettings(0, 100, True),
]


def utf16(text: str) -> bytes:
    return text.encode("utf-16-le", "surrogatepass")


def _reference_settings(cfg: MaskingSettings) -> dict[str, Any]:
    return {
        "protectionThresholdTokens": cfg.protection_threshold_tokens,
        "minPrunableThresholdTokens": cfg.min_prunable_threshold_tokens,
        "protectLatestTurn": cfg.protect_latest_turn,
    }


def compare(reference: Any, contents: list[dict[str, Any]], cfg: MaskingSettings, temp_dir: Path,
            session_id: str | None = SESSION_ID) -> MaskingPlan:
    """Run both on ``contents`` and assert they agree; the plan, for more checks."""
    temp_dir.mkdir(parents=True, exist_ok=True)
    arguments = {"contents": contents, "settings": _reference_settings(cfg), "temp_dir": str(temp_dir),
                  "session_id": session_id or ""}
    try:
        answer = reference.call("mask", **arguments)
    except RefError as error:
        plan = plan_masking(contents, cfg, folder=outputs_folder(str(temp_dir), session_id))
        assert plan.failure is not None, f"the reference failed ({error}) but the plan did not"
        return plan
    plan = plan_masking(contents, cfg, folder=outputs_folder(str(temp_dir), session_id), random_tail=answer["tail"])
    assert plan.failure is None, plan.failure
    assert [[p.turn, p.part] for p in plan.parts] == answer["parts"]
    assert plan.masked_count == answer["masked_count"]
    assert plan.tokens_saved == answer["tokens_saved"]
    written = {f["path"] for f in answer["files"]}
    for item in plan.parts:
        turn = json.loads(answer["history"][item.turn])
        response = turn["parts"][item.part]["functionResponse"]["response"]
        assert list(response) == ["output"], f"turn {item.turn} part {item.part}"
        # compared as UTF-16, as JavaScript holds them: two lone halves in Python are one pair in JS
        assert utf16(response["output"]) == utf16(item.snippet), f"turn {item.turn} part {item.part}"
        assert item.output_file in written
    return plan


# ------------------------------------------------------------ recorded sessions

FILES = session_files()


@pytest.mark.parametrize("path", FILES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_sessions_mask_as_gemini_cli_does(path: Path, tmp_path: Path, reference: Any) -> None:
    session = load(path)
    contents = [t.content for t in history(session)]
    for n, cfg in enumerate(SETTINGS):
        compare(reference, contents, cfg, tmp_path / str(n), session.session_id)


def test_some_sessions_are_masked(reference: Any, tmp_path: Path) -> None:
    """The runs above are not all empty: small settings mask parts in most files."""
    masked = 0
    for path in FILES:
        contents = [t.content for t in history(load(path))]
        masked += compare(reference, contents, SETTINGS[1], tmp_path / path.name).masked_count
    assert masked > 10


def test_an_already_masked_output_is_not_masked_again(reference: Any, tmp_path: Path) -> None:
    big = "line of a long tool output\n" * 2_000
    contents: list[dict[str, Any]] = []
    for n in range(6):
        call = {"id": f"c{n}", "name": "read_file", "args": {}}
        contents.append({"role": "model", "parts": [{"functionCall": call}]})
        contents.append({"role": "user", "parts": [
            {"functionResponse": {"id": f"c{n}", "name": "read_file", "response": {"output": big}}}]})
    contents.append({"role": "model", "parts": [{"text": "done"}]})
    first = compare(reference, contents, MaskingSettings(), tmp_path / "a")
    assert first.masked_count > 0
    masked = [dict(c) for c in contents]
    for item in first.parts:
        part = masked[item.turn]["parts"][item.part]
        masked[item.turn] = {**masked[item.turn], "parts": [
            {**part, "functionResponse": {**part["functionResponse"], "response": {"output": item.snippet}}}]}
    again = compare(reference, masked, MaskingSettings(), tmp_path / "b")
    assert again.masked_count == 0
    assert [(m.turn, m.part) for m in again.markers] == [(p.turn, p.part) for p in reversed(first.parts)]
    assert all(m.saved_path == p.output_file for m, p in zip(again.markers, reversed(first.parts), strict=True))


# ------------------------------------------------------------ generated histories

SHELL_LINES = ["Output: ", "Error: ", "Exit Code: ", "Signal: ", "Background PIDs: ", "Process Group PGID: ",
               "output: ", "Output:", "\rOutput: ", "\u2028Error: "]
line = st.one_of(text, st.builds(lambda head, rest: head + rest, st.sampled_from(SHELL_LINES), text))
long_text = st.builds(
    lambda lines, repeat: ("\n".join(lines) + "\n") * repeat,
    st.lists(line, min_size=1, max_size=30), st.integers(1, 40),
)
responses = st.one_of(
    st.builds(lambda t: {"output": t}, long_text),
    st.builds(lambda t, extra: {"output": t, **extra}, long_text,
              st.fixed_dictionaries({}, optional={"exitCode": json_values, "exit_code": json_values,
                                                  "error": json_values, "stdout": long_text})),
    st.builds(lambda t: {"stdout": t}, long_text),
    st.builds(lambda t: {"output": f"<{MASKING_TAG}>\n{t}\n</{MASKING_TAG}>"}, text),
    json_values,
    long_text,
)
tool_names = st.one_of(st.sampled_from([SHELL_TOOL, SHELL_TOOL, "read_file", "grep", *sorted(EXEMPT_TOOLS)]), text)
call_ids = st.one_of(st.sampled_from(["call-1", "run_shell_command-17", "Ünïcode id", ""]), text)
odd_names = st.one_of(st.integers(-2, 2), st.booleans(), st.just(["read_file"]))  # not strings: the reference throws


@st.composite
def response_parts(draw: st.DrawFn) -> dict[str, Any]:
    fr: dict[str, Any] = {"name": draw(tool_names), "response": draw(responses)}
    if draw(st.integers(0, 4)):
        fr["id"] = draw(call_ids)
    if not draw(st.integers(0, 9)):
        del fr["name"]
    if not draw(st.integers(0, 29)):
        fr["id" if draw(st.booleans()) else "name"] = draw(odd_names)
    return {"functionResponse": fr}


# (made once, not in each draw: hypothesis checks each new strategy the first time it draws from it)
turn_parts = st.lists(st.one_of(response_parts(), response_parts(), parts()), max_size=4)


@st.composite
def histories(draw: st.DrawFn) -> list[dict[str, Any]]:
    contents: list[dict[str, Any]] = []
    for n in range(draw(st.integers(0, 10))):
        role = "user" if n % 2 else "model"
        items = draw(turn_parts)
        contents.append({"role": role, "parts": items})
    return contents


masking_settings = st.builds(
    MaskingSettings,
    st.one_of(st.integers(0, 3_000), st.sampled_from([50_000, 0.5, 10.25])),
    st.one_of(st.integers(0, 2_000), st.sampled_from([30_000, 0.75])),
    st.booleans(),
)


@settings(max_examples=int(120 * SCALE), deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                               HealthCheck.data_too_large])
@given(contents=histories(), cfg=masking_settings, session_id=st.one_of(st.none(), text))
def test_generated_histories_mask_as_gemini_cli_does(
    contents: list[dict[str, Any]], cfg: MaskingSettings, session_id: str | None, reference: Any,
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    plan = compare(reference, contents, cfg, tmp_path_factory.mktemp("mask"), session_id)
    event("masked" if plan.masked_count else ("failed" if plan.failure else "nothing masked"))


@pytest.mark.parametrize("depth", [1, 2, 3, 4, 9])
def test_analyze_masks_as_gemini_cli_does_wherever_the_session_lies(reference: Any, tmp_path: Path,
                                                                     depth: int) -> None:
    """``analyze --json``'s masking figures for a session in a project's ``chats`` folder, however
    deep and long its path (the path is written into each placeholder, so its length is counted):
    the reference's, run with that project folder as its temp dir."""
    import shutil

    from inspector.analysis import analyze
    from inspector.commands.analyze import json_report
    from tests.conftest import SAMPLES

    project = tmp_path.joinpath(*["d" * (n + 1) for n in range(depth)], "my project")
    for name in ("long-migration.jsonl", "coding-task.jsonl"):
        copy = project / "chats" / name
        copy.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(SAMPLES / name, copy)
        session = load(copy)
        report = json_report(session, analyze(session))
        contents = [t.content for t in history(session)]
        answer = reference.call("mask", contents=contents, settings=_reference_settings(MaskingSettings()),
                                temp_dir=str(project), session_id=session.session_id or "")
        assert report["masking"]["masked_count"] == answer["masked_count"], name
        assert report["masking"]["tokens_saved"] == answer["tokens_saved"], name


def test_analyze_masks_as_gemini_cli_does_through_a_symlinked_home(reference: Any, tmp_path: Path) -> None:
    """Gemini CLI writes the placeholder's path from the home folder as it is named ($HOME), never with
    its symlinks resolved: a session read through a symlinked folder is counted with the path as named
    (resolved, the path was longer here, and the saving one token off on some sessions)."""
    import shutil

    from inspector.analysis import analyze
    from inspector.commands.analyze import json_report
    from tests.conftest import SAMPLES

    real = tmp_path / "a-much-longer-folder-name-than-the-link-has" / "home"
    real.mkdir(parents=True)
    (tmp_path / "h").symlink_to(real.parent, target_is_directory=True)
    project = tmp_path / "h" / "home" / ".gemini" / "tmp" / "proj"
    copy = project / "chats" / "coding-task.jsonl"
    copy.parent.mkdir(parents=True)
    shutil.copyfile(SAMPLES / "coding-task.jsonl", copy)
    session = load(copy)
    small = MaskingSettings(300, 0, False)  # so that outputs of this small session are masked
    from inspector.compaction.masking import session_masking

    plan = session_masking(session, analyze(session).turns, small)
    contents = [t.content for t in history(session)]
    answer = reference.call("mask", contents=contents, settings=_reference_settings(small),
                            temp_dir=str(project), session_id=session.session_id or "")
    assert plan.masked_count == answer["masked_count"] > 0
    assert plan.tokens_saved == answer["tokens_saved"]
    assert all(str(project) in part.output_file for part in plan.parts)
    assert json_report(session, analyze(session))["masking"]["tokens_saved"] >= 0
