"""A big recording's memory follows what is looked at, not what was read: a pass over every turn
leaves no parsed record and no content behind, and the app's agentic split builds no content."""

from __future__ import annotations

import gc
import subprocess
import sys
import tracemalloc
from pathlib import Path

import pytest

from inspector.analysis import analyze
from inspector.compaction.budget import Truncation, truncated_content
from inspector.compaction.compress import agentic_split
from inspector.session import history, load
from inspector.session.loader import STREAM_MIN_BYTES
from inspector.session.records import KEPT_FROM_FILE, MessageList
from inspector.session.turns import KEPT_CONTENTS
from inspector.tui.session.splits import cli_agentic_split
from tests.traced import traced

REPO = Path(__file__).resolve().parents[1]
SAMPLES = sorted((REPO / "sample_sessions").glob("*.jsonl"))


@pytest.fixture(scope="module")
def big(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A recording past the size read from its file (``STREAM_MIN_BYTES``), written by the bench's generator."""
    out = tmp_path_factory.mktemp("kept") / "big.jsonl"
    subprocess.run([sys.executable, str(REPO / "bench" / "make_big_session.py"), "--turns", "15000",
                    "--out", str(out)], check=True, capture_output=True)
    assert out.stat().st_size > STREAM_MIN_BYTES
    return out


def test_a_pass_over_every_turn_keeps_no_record_and_no_content(big: Path) -> None:
    session = load(big)
    assert isinstance(session.messages, MessageList) and session.messages.reads_file
    turns = history(session)
    size = big.stat().st_size
    gc.collect()
    tracemalloc.start()
    try:
        for _ in range(2):
            parts = sum(len(turn.parts) for turn in turns)  # every content built, twice
        records = sum(1 for _ in session.messages)  # every record parsed
        gc.collect()
        held, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert parts > len(turns) and records == len(session.messages)
    # what stays is the records and contents read last, never the history (which is several times the file)
    assert held < size // 4, f"{held:,} bytes kept after a pass over a {size:,}-byte session"
    assert len(session.messages._parsed) <= KEPT_FROM_FILE
    assert not any(turn.has_content for turn in turns)
    # the last contents read are kept, the same object while they are
    assert turns[-1].content is turns[-1].content
    assert KEPT_CONTENTS > 0


def _agentic_split_from_contents(path: Path, model: str | None = None) -> tuple[int, int]:
    """(the app's split from figures, ``compress``'s rule on the contents after the budget) of one file."""
    analysis = analyze(load(path), model=model)
    assert any(t.changes_json for t in analysis.truncations) or model is None
    by_turn: dict[int, list[Truncation]] = {}
    for truncation in analysis.truncations:
        by_turn.setdefault(truncation.turn, []).append(truncation)
    contents = [truncated_content(turn.content, by_turn[i]) if i in by_turn else turn.content
                for i, turn in enumerate(analysis.turns)]
    return cli_agentic_split(analysis), agentic_split(contents) if contents else 0


@pytest.mark.parametrize("path", SAMPLES, ids=[p.name for p in SAMPLES])
def test_the_apps_agentic_split_is_the_rule_on_the_contents(path: Path) -> None:
    from_figures, from_contents = _agentic_split_from_contents(path)
    assert from_figures == from_contents


def test_the_apps_agentic_split_counts_what_the_budget_cuts(big: Path) -> None:
    # a small window (Gemma 4's): the budget cuts outputs, which changes the turns' weights
    from_figures, from_contents = _agentic_split_from_contents(big, "gemma-4-31b-it")
    assert from_figures == from_contents


def test_a_big_recording_with_crlf_line_ends_is_read_again_from_its_file(big: Path) -> None:
    """A recording with CR bytes is read whole, not block by block; its bytes are not kept with it."""
    crlf = big.with_name("crlf.jsonl")  # beside it: a truncated output names its folder
    crlf.write_bytes(big.read_bytes().replace(b"\n", b"\r\n"))
    session, plain = load(crlf), load(big)
    assert isinstance(session.messages, MessageList) and session.messages.reads_file
    assert session.messages._data is None
    assert session.line_count == plain.line_count and session.message_lines == plain.message_lines
    assert analyze(session).to_json(big, "jsonl", None) == analyze(plain).to_json(big, "jsonl", None)
    assert session.messages[-1] == plain.messages[-1]


def test_a_lone_cr_keeps_the_bytes_held(big: Path, tmp_path: Path) -> None:
    """Lines ended by a lone CR are counted otherwise than newlines: such a file keeps its bytes."""
    lone = tmp_path / "lone.jsonl"
    lone.write_bytes(big.read_bytes().replace(b"\n", b"\r"))
    session = load(lone)
    assert isinstance(session.messages, MessageList) and not session.messages.reads_file
    assert session.line_count == load(big).line_count


def test_a_recordings_turns_are_made_when_asked_for(big: Path) -> None:
    """No object a turn is held: each is made from the reader's columns when read, the same turn
    whether it is reached by index, by slice or by walking the list."""
    session = load(big)
    turns, held, _ = traced(lambda: history(session))
    assert len(turns) == len(session.turn_index or ()) > 10_000
    assert held < 64 * 1024, f"{held:,} bytes held for {len(turns):,} turns"  # a Turn each: ~100 bytes a turn
    walked = list(turns)
    assert walked == turns[:] == turns
    assert [t.message_index for t in walked] == [turns[i].message_index for i in range(len(turns))]
    assert turns[-1].index == len(turns) - 1 and turns[-len(turns)].index == 0
    with pytest.raises(IndexError):
        turns[len(turns)]


def test_a_budget_plan_holds_no_object_per_output_kept_whole(big: Path) -> None:
    """The tool-output budget cuts nearly every older output of a long session: the plan keeps each
    output kept whole as machine integers (a ``Truncation`` object each took ~200 bytes), made when read."""
    from inspector.analysis import analyze
    from inspector.compaction.budget import plan_budget

    session = load(big)
    analysis = analyze(session)
    index = session.turn_index
    assert index is not None
    plan, held, _ = traced(lambda: plan_budget(index.responses, lambda i, j: "",
                                               lambda tool, seq: f"/out/{tool}_{seq}.txt"))
    assert len(plan) > 1_000
    assert held < 64 * len(plan), f"{held:,} bytes held for {len(plan):,} truncations"
    first = plan[0]  # made when read, as the walk would have made it
    assert first.output_file == f"/out/{first.tool}_{first.seq}.txt" and first.new_tokens == first.original_tokens
    assert list(plan) == [plan[k] for k in range(len(plan))]
    assert [(t.turn, t.part) for t in analysis.truncations][:10] == [(t.turn, t.part) for t in plan][:10]


def test_the_budget_rows_of_analyze_json_make_no_truncation_for_an_output_kept_whole(
        big: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``analyze --json`` writes a row for each output the budget cuts: those kept whole are read from
    the plan's columns (a ``Truncation`` made for each cost more than its row), and say the same."""
    from inspector.compaction.budget import TruncationPlan

    session = load(big)
    analysis = analyze(session)
    plan = analysis.truncations
    assert isinstance(plan, TruncationPlan) and len(plan) > 1_000 and plan.kept_at(len(plan) - 1) is None
    expected = [{"turn": t.turn, "tool": t.tool, "original_tokens": t.original_tokens,
                 "new_tokens": t.new_tokens, "output_file": t.output_file} for t in plan]

    def made(self: TruncationPlan, index: int) -> Truncation:
        kept = self.kept_at(index)
        assert kept is not None, f"truncation {index} made to write its row"
        return kept

    monkeypatch.setattr(TruncationPlan, "_at", made)
    assert analysis.to_json(session.path, session.format, session.session_id)["budget_truncations"] == expected


def test_the_split_reads_the_budget_plan_making_only_the_truncations_of_turns_whose_json_changes(
        big: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """How the tool-output budget moves the split (``analysis.json_deltas``) needs the truncations of the
    turns whose JSON it changes; the plan lists them and where each is, so no other is made."""
    from inspector.analysis import json_deltas
    from inspector.compaction.budget import TruncationPlan

    made: list[int] = []
    original = TruncationPlan._at

    def counted(self: TruncationPlan, index: int) -> Truncation:
        made.append(index)
        return original(self, index)

    monkeypatch.setattr(TruncationPlan, "_at", counted)
    session = load(big)
    analysis = analyze(session)
    plan = analysis.truncations
    assert isinstance(plan, TruncationPlan) and len(plan) > 1_000
    changing = {plan.position(j)[0] for j in plan.changing_json()}
    assert made == [j for j in range(len(plan)) if plan.position(j)[0] in changing]
    made.clear()
    found = json_deltas(analysis.turns, analysis.json_chars, plan)
    assert json_deltas(analysis.turns, analysis.json_chars, list(plan)) == found  # as every truncation read says
