"""The staged strategy: each stage's effect, thresholds, and stopping at the target."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from inspector.compaction.pairs import MISSING_RESPONSE, ORPHAN_RESPONSE, pair_calls, repair_pairs
from inspector.compaction.staged import (
    StagedConfig,
    dedupe_file_reads,
    drop_duplicate_results,
    prune_tool_outputs,
    run_staged,
    sliding_window,
    summary_split,
    tokens_of,
)
from inspector.session import history, load

SAMPLES = Path(__file__).resolve().parent.parent / "sample_sessions"


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "parts": [{"text": text}]}


def model(text: str) -> dict[str, Any]:
    return {"role": "model", "parts": [{"text": text}]}


def call(name: str, cid: str, **args: Any) -> dict[str, Any]:
    return {"role": "model", "parts": [{"functionCall": {"id": cid, "name": name, "args": args}}]}


def result(name: str, cid: str, output: str) -> dict[str, Any]:
    return {"role": "user", "parts": [{"functionResponse": {"id": cid, "name": name, "response": {"output": output}}}]}


def tool_session(outputs: list[tuple[str, int]]) -> list[dict[str, Any]]:
    """A prompt, then one call/result pair per (tool, tokens), then a reply."""
    turns = [user("please do the work")]
    for n, (tool, tokens) in enumerate(outputs):
        turns += [call(tool, f"c{n}", command=f"step {n}"), result(tool, f"c{n}", "x" * (tokens * 4))]
    turns.append(model("done"))
    return turns


def outputs_of(contents: list[dict[str, Any]]) -> list[str]:
    return [p["functionResponse"]["response"]["output"] for c in contents for p in c["parts"]
            if "functionResponse" in p]


def test_prune_keeps_the_newest_40k_tokens_of_output_whole() -> None:
    contents = tool_session([("run_shell_command", 15_000)] * 6)
    pruned, detail = prune_tool_outputs(contents, StagedConfig(target_tokens=0))
    outputs = outputs_of(pruned)
    # 15k + 15k fit in 40k; the third would overflow it, so it and the older ones go
    assert [len(o) for o in outputs[-2:]] == [60_000, 60_000]
    assert all(o.startswith("[Output of run_shell_command pruned") for o in outputs[:-2])
    assert detail == "4 tool outputs pruned"
    assert tokens_of(pruned) < tokens_of(contents) - 55_000


def test_prune_never_touches_protected_tools() -> None:
    contents = tool_session([("write_file", 15_000)] * 3 + [("run_shell_command", 15_000)] * 3)
    pruned, _ = prune_tool_outputs(contents, StagedConfig(target_tokens=0))
    outputs = outputs_of(pruned)
    assert all(len(o) == 60_000 for o in outputs[:3])  # write_file: protected
    assert outputs[3].startswith("[Output of run_shell_command pruned")


def test_prune_is_skipped_when_it_saves_too_little() -> None:
    contents = tool_session([("run_shell_command", 12_000)] * 4)  # 48k: only ~8k prunable
    result_ = asyncio.run(run_staged(contents, StagedConfig(target_tokens=1_000)))
    prune = next(s for s in result_.stages if s.name == "prune")
    assert not prune.applied and "would save only" in prune.detail
    assert outputs_of(result_.contents) == outputs_of(contents)


def test_dedupe_keeps_the_latest_read_of_a_file() -> None:
    contents = [user("read it")]
    for n in range(3):
        contents += [call("read_file", f"r{n}", file_path="src/app.py"), result("read_file", f"r{n}", f"v{n}" * 5000)]
    contents += [call("read_file", "part", file_path="src/app.py", offset=10, limit=5),
                 result("read_file", "part", "lines 10-15")]
    deduped, detail, touched = dedupe_file_reads(contents, StagedConfig(target_tokens=0))
    outputs = outputs_of(deduped)
    assert outputs[0].startswith("[Earlier read of src/app.py") and "turn 6" in outputs[0]
    assert outputs[1].startswith("[Earlier read of src/app.py")
    assert outputs[2] == "v2" * 5000  # the latest whole read stays
    assert outputs[3] == "lines 10-15"  # a partial read is not a duplicate
    assert detail == "2 repeated file reads replaced"
    assert touched == tokens_of(contents[2:3]) + tokens_of(contents[4:5])


def test_stages_stop_as_soon_as_the_target_is_met() -> None:
    contents = tool_session([("run_shell_command", 15_000)] * 6)
    target = tokens_of(contents) - 50_000  # pruning alone gets there

    async def never(_: list[dict[str, Any]]) -> tuple[str, str]:
        raise AssertionError("the summariser must not be called once the target is met")

    result_ = asyncio.run(run_staged(contents, StagedConfig(target_tokens=target), never))
    assert result_.stages_used == ["prune"]
    assert [s.name for s in result_.stages] == ["duplicates", "prune"]
    assert result_.fits and result_.tokens_after <= target
    untouched = asyncio.run(run_staged(contents, StagedConfig(target_tokens=10**9), never))
    assert untouched.stages == [] and untouched.contents == contents
    assert untouched.sources == list(range(len(contents)))


def test_summarise_keeps_recent_turns_and_reports_the_snapshot() -> None:
    contents = []
    for n in range(10):
        contents += [user(f"prompt {n} " + "words " * 400), model(f"answer {n}")]
    seen: list[list[dict[str, Any]]] = []

    async def summarise(older: list[dict[str, Any]]) -> tuple[str, str]:
        seen.append(older)
        return "<state_snapshot>draft</state_snapshot>", "<state_snapshot>final</state_snapshot>"

    config = StagedConfig(target_tokens=3_000)
    result_ = asyncio.run(run_staged(contents, config, summarise))
    split = summary_split(contents, config)
    assert split == 14  # 6 of 20 turns kept: 30%
    assert seen == [contents[:14]]
    assert result_.contents[0]["parts"][0]["text"] == "<state_snapshot>final</state_snapshot>"
    assert result_.contents[2:] == contents[14:]
    assert result_.sources == [None, None, *range(14, 20)]
    assert result_.draft_snapshot == "<state_snapshot>draft</state_snapshot>"


def test_sliding_window_drops_an_even_number_after_the_first_exchange() -> None:
    contents = []
    for n in range(12):
        contents += [user(f"prompt {n}"), model(f"answer {n}")]
    windowed, origin, dropped = sliding_window(contents, StagedConfig(target_tokens=0))
    assert dropped % 2 == 0 and dropped == 8  # half of the 18 droppable, rounded to even
    assert windowed[:2] == contents[:2]
    assert "removed 8 older turns" in windowed[2]["parts"][0]["text"]
    assert windowed[4:] == contents[10:]
    assert origin == [0, 1, -1, -1, *range(10, 24)]


def test_repair_gives_every_call_a_response_and_every_response_a_call() -> None:
    contents = [user("go"), call("read_file", "a", file_path="x"), result("grep", "gone", "orphan"), model("ok")]
    repaired, fixes = repair_pairs(contents)
    assert fixes == 2
    texts = [p.get("text") for c in repaired for p in c["parts"]]
    assert ORPHAN_RESPONSE.format(name="grep") in texts
    responses = [p["functionResponse"] for c in repaired for p in c["parts"] if "functionResponse" in p]
    assert responses == [{"id": "a", "name": "read_file",
                          "response": {"output": MISSING_RESPONSE.format(name="read_file")}}]
    assert len(pair_calls(repaired)) == 1


def test_the_stage_table_ends_at_the_size_of_the_result_when_pairs_are_repaired() -> None:
    """The window drops the result of the first exchange's call: the placeholder that answers the call
    is reported as a last row, so the table's last figure is the history's size."""
    contents = [user("go"), call("run_shell_command", "c0", command="make"), result("run_shell_command", "c0", "ok"),
                model("built")]
    for n in range(12):
        contents += [user(f"prompt {n} " + "words " * 300), model(f"answer {n}")]
    result_ = asyncio.run(run_staged(contents, StagedConfig(target_tokens=2_000)))
    assert [s.name for s in result_.stages if s.applied] == ["window", "pairs"]
    assert result_.repairs == 1 and "1 placeholder" in result_.stages[-1].detail
    assert result_.stages[-1].tokens_before == result_.stages[-2].tokens_after
    assert result_.stages[-1].tokens_after == result_.tokens_after == tokens_of(result_.contents)


def test_gemini_cli_duplicate_tool_results_are_dropped_losslessly() -> None:
    turns = history(load(SAMPLES / "gemini-cli-0.61-tool-calls.jsonl"))
    contents = [t.content for t in turns]
    unique, dropped = drop_duplicate_results(contents)
    assert dropped == 2
    # every result that was there is still there once
    before = {p["functionResponse"]["id"] for c in contents for p in c["parts"] if "functionResponse" in p}
    after = [p["functionResponse"]["id"] for c in unique for p in c["parts"] if "functionResponse" in p]
    assert sorted(after) == sorted(before)
    assert repair_pairs(unique) == (unique, 0)
