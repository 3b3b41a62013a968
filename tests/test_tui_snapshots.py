"""Snapshot tests of the main screens (pytest-textual-snapshot), on files from sample_sessions/.

Update after a deliberate change with ``pytest tests/test_tui_snapshots.py --snapshot-update``
and look at the SVGs in tests/__snapshots__/ before committing them.
"""

from __future__ import annotations

import pytest

from tests.snapshot_app import SAMPLES, build_app, sample, settle

SIZE = (160, 45)


def need(name: str) -> None:
    if not (SAMPLES / name).is_file():
        pytest.skip(f"sample_sessions/{name} is missing")


@pytest.mark.parametrize("name", ["coding-task.jsonl", "long-migration.jsonl", "legacy-pomodoro.json",
                                  "checkpoint-rate-limit.json"])
def test_session_view(snap_compare, name: str) -> None:  # type: ignore[no-untyped-def]
    need(name)
    assert snap_compare(build_app(sample(name)), terminal_size=SIZE, run_before=settle)


def test_split_moved_back(snap_compare) -> None:  # type: ignore[no-untyped-def]
    need("coding-task.jsonl")

    async def run_before(pilot) -> None:  # type: ignore[no-untyped-def]
        await settle(pilot)
        await pilot.press("left_square_bracket")

    assert snap_compare(build_app(sample("coding-task.jsonl")), terminal_size=SIZE, run_before=run_before)


def test_detail_of_a_tool_call(snap_compare) -> None:  # type: ignore[no-untyped-def]
    need("coding-task.jsonl")

    async def run_before(pilot) -> None:  # type: ignore[no-untyped-def]
        await settle(pilot)
        await pilot.press("home", "down", "down", "down", "down")

    assert snap_compare(build_app(sample("coding-task.jsonl")), terminal_size=SIZE, run_before=run_before)


def test_help(snap_compare) -> None:  # type: ignore[no-untyped-def]
    need("coding-task.jsonl")

    async def run_before(pilot) -> None:  # type: ignore[no-untyped-def]
        await settle(pilot)
        await pilot.press("question_mark")

    assert snap_compare(build_app(sample("coding-task.jsonl")), terminal_size=SIZE, run_before=run_before)


def test_compaction_preview(snap_compare) -> None:  # type: ignore[no-untyped-def]
    need("coding-task.jsonl")

    async def run_before(pilot) -> None:  # type: ignore[no-untyped-def]
        await settle(pilot)
        await pilot.press("c")
        await settle(pilot)

    assert snap_compare(build_app(sample("coding-task.jsonl")), terminal_size=SIZE, run_before=run_before)


def test_session_list(snap_compare) -> None:  # type: ignore[no-untyped-def]
    need("coding-task.jsonl")
    assert snap_compare(build_app(sample("")), terminal_size=SIZE, run_before=settle)


def test_agentic_split(snap_compare) -> None:  # type: ignore[no-untyped-def]
    need("coding-task.jsonl")

    async def run_before(pilot) -> None:  # type: ignore[no-untyped-def]
        await settle(pilot)
        await pilot.press("left_curly_bracket")

    assert snap_compare(build_app(sample("coding-task.jsonl")), terminal_size=SIZE, run_before=run_before)


def test_staged_preview_stages(snap_compare) -> None:  # type: ignore[no-untyped-def]
    need("coding-task.jsonl")

    async def run_before(pilot) -> None:  # type: ignore[no-untyped-def]
        await settle(pilot)
        await pilot.press("S", "c")
        await settle(pilot)

    assert snap_compare(build_app(sample("coding-task.jsonl")), terminal_size=SIZE, run_before=run_before)


def test_compare_screen(snap_compare) -> None:  # type: ignore[no-untyped-def]
    need("coding-task.jsonl")

    async def run_before(pilot) -> None:  # type: ignore[no-untyped-def]
        await settle(pilot)
        await pilot.press("C")
        await settle(pilot)

    assert snap_compare(build_app(sample("coding-task.jsonl")), terminal_size=SIZE, run_before=run_before)


# -- the session view at the sizes people use: 80x24 (the smallest), 120x40 and 200x50 ---------

SIZES = [(80, 24), (120, 40), (200, 50)]


@pytest.mark.parametrize("size", SIZES, ids=[f"{w}x{h}" for w, h in SIZES])
def test_session_view_at_size(snap_compare, size: tuple[int, int]) -> None:  # type: ignore[no-untyped-def]
    need("long-migration.jsonl")
    assert snap_compare(build_app(sample("long-migration.jsonl")), terminal_size=size, run_before=settle)


def test_detail_in_place_of_the_table_at_80x24(snap_compare) -> None:  # type: ignore[no-untyped-def]
    need("coding-task.jsonl")

    async def run_before(pilot) -> None:  # type: ignore[no-untyped-def]
        await settle(pilot)
        await pilot.press("home", "down", "d")

    assert snap_compare(build_app(sample("coding-task.jsonl")), terminal_size=(80, 24), run_before=run_before)


def test_help_at_80x24(snap_compare) -> None:  # type: ignore[no-untyped-def]
    need("coding-task.jsonl")

    async def run_before(pilot) -> None:  # type: ignore[no-untyped-def]
        await settle(pilot)
        await pilot.press("question_mark")

    assert snap_compare(build_app(sample("coding-task.jsonl")), terminal_size=(80, 24), run_before=run_before)


def test_filtered_largest_first_at_80x24(snap_compare) -> None:  # type: ignore[no-untyped-def]
    need("coding-task.jsonl")

    async def run_before(pilot) -> None:  # type: ignore[no-untyped-def]
        await settle(pilot)
        await pilot.press("F", *"tool result", "enter")
        await settle(pilot)
        await pilot.press("o")
        await settle(pilot)

    assert snap_compare(build_app(sample("coding-task.jsonl")), terminal_size=(80, 24), run_before=run_before)


def test_compare_at_80x24(snap_compare) -> None:  # type: ignore[no-untyped-def]
    need("coding-task.jsonl")

    async def run_before(pilot) -> None:  # type: ignore[no-untyped-def]
        await settle(pilot)
        await pilot.press("C")
        await settle(pilot)

    assert snap_compare(build_app(sample("coding-task.jsonl")), terminal_size=(80, 24), run_before=run_before)
