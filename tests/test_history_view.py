"""Where Gemini CLI splits: the history as its compression reads it (``compaction.view``).

Gemini CLI splits ``getHistory(true)``: for its default model (``auto``, a
Gemini 3 model), and for Gemini 2.x and custom models, that view strips
thoughts and joins consecutive turns of one role.  A 0.61 recording writes
every tool result twice, so the split it makes differs from the one the
recorded turns give.  These tests ask the reference's own ``getHistory`` (run
on the real method) and ``findCompressSplitPoint``.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from inspector import cli
from inspector.analysis import analyze
from inspector.compaction.view import HistoryView, history_view, viewed
from inspector.jsjson import js_stringify
from inspector.session import load
from inspector.session.history import messages_to_turns
from tests.conftest import SAMPLES
from tests.reference import strategies as gen
from tests.reference.client import RefServer

MIGRATION = SAMPLES / "long-migration.jsonl"  # a long agent run: many tool results, consecutive turns of one role

MODEL_NAMES = ["auto", "pro", "flash", "flash-lite", "none", "auto-gemini-3", "auto-gemini-2.5", "gemini-2.5-pro",
               "gemini-2.5-flash", "gemini-2", "gemini-25-pro", "gemini-3-pro-preview", "gemini-3.1-flash-lite",
               "gemini-1.5-pro", "gemini-exp-1206", "gemini-pro", "my-local-model", "", " auto", "auto ",
               " gemini-2.5-pro", "gemini-3", "gemini-30", "GEMINI-2.5-PRO"]


def test_the_configured_model_decides_the_view_as_gemini_cli_does(reference: RefServer) -> None:
    joins = reference.call("joins", models=MODEL_NAMES)["joins"]
    assert [history_view(name) is HistoryView.JOINED for name in MODEL_NAMES] == joins
    assert True in joins and False in joins  # both views occur among the names a user may set


def _split_for(reference: RefServer, path: Path, model: str) -> int:
    contents = [t.content for t in analyze(load(path)).turns]
    answer: int = reference.call("measure", contents=contents, model=model)["split"]
    return answer


def _analyze(capsys: pytest.CaptureFixture[str], *args: str) -> dict[str, Any]:
    assert cli.main(["analyze", "--json", *args]) == 0
    return dict(json.loads(capsys.readouterr().out))


def test_analyze_splits_where_gemini_cli_would_for_the_model_it_runs(
        reference: RefServer, tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A user who runs Gemini CLI with its default model, with ``GEMINI_MODEL``, with a settings
    file or with ``--model`` sees the split that model makes."""
    path = tmp_path / MIGRATION.name
    shutil.copyfile(MIGRATION, path)
    joined, as_recorded = _split_for(reference, path, "auto"), _split_for(reference, path, "auto-gemini-2.5")
    assert joined != as_recorded  # the view matters on this session

    data = _analyze(capsys, str(path))
    assert (data["split_point"], data["history_view"]) == (joined, "joined")

    monkeypatch.setenv("GEMINI_MODEL", "auto-gemini-2.5")
    data = _analyze(capsys, str(path))
    assert (data["split_point"], data["history_view"]) == (as_recorded, "as recorded")
    assert _analyze(capsys, str(path), "--model", "gemini-2.5-pro")["split_point"] == joined  # --model first
    monkeypatch.delenv("GEMINI_MODEL")

    project = tmp_path / "project"
    (project / ".gemini").mkdir(parents=True)
    (project / ".gemini" / "settings.json").write_text('{"model": {"name": "auto-gemini-2.5"}} // a comment\n')
    monkeypatch.chdir(project)
    assert _analyze(capsys, str(path))["split_point"] == as_recorded

    assert cli.main(["analyze", str(path)]) == 0  # the report says which view and why
    text = capsys.readouterr().out
    words, glued = " ".join(text.split()), "".join(text.split())  # wrapped at spaces; a long path folded anywhere
    assert "turns as recorded" in words and "auto-gemini-2.5" in words and ".gemini/settings.json" in glued


HEALTH = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.function_scoped_fixture]
thought_part = st.builds(lambda t: {"text": t, "thought": True}, gen.text)
view_part = st.one_of(
    gen.parts(), thought_part, st.just({"text": ""}), st.just({}), st.just({"functionCall": {"name": "f"}}),
    st.just({"functionResponse": {"name": "f", "response": {"output": "o"}}}), st.just({"thought": True}),
    st.just({"functionCall": {"name": "f"}, "thoughtSignature": ""}),
)
content = st.builds(lambda role, parts: {"role": role, "parts": parts},
                    st.sampled_from(["user", "model"]), st.lists(view_part, max_size=3))


@settings(max_examples=150, deadline=None, suppress_health_check=HEALTH)
@given(contents=st.lists(content, max_size=9), model=st.sampled_from(["auto", "auto-gemini-2.5"]))
def test_the_view_is_getHistory_of_the_reference(reference: RefServer, contents: list[dict[str, Any]],
                                                 model: str) -> None:
    """Thoughts, parts left empty, rejected model turns, calls that get a synthetic signature:
    the view built here, and the split the columns give without building it, are the reference's."""
    answer = reference.call("view", contents=contents, model=model)
    view = history_view(model)
    shown = viewed(contents, view)
    assert [js_stringify(c) for _, c in shown] == answer["history"]
    assert [i for i, _ in shown] == answer["first"]
    assert analyze_contents(contents, view) == reference.call("measure", contents=contents, model=model)["split"]


def analyze_contents(contents: list[dict[str, Any]], view: HistoryView) -> int:
    from inspector.analysis import analyze_turns
    from inspector.session.history import contents_to_turns

    return analyze_turns(contents_to_turns(contents), view=view).split_point


@settings(max_examples=60, deadline=None, suppress_health_check=HEALTH)
@given(messages=gen.messages)
def test_recorded_messages_split_as_the_reference_in_either_view(reference: RefServer,
                                                                 messages: list[dict[str, Any]]) -> None:
    """Messages as a recording holds them (thoughts in ``thoughts``, calls in ``toolCalls``)."""
    contents = [t.content for t in messages_to_turns(messages)]
    for model in ("auto", "auto-gemini-2.5"):
        expected = reference.call("measure", contents=contents, model=model)["split"]
        assert analyze_contents(contents, history_view(model)) == expected, model
