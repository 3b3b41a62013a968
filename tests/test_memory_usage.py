"""Recorded usage is kept in machine integers, not as a Python tuple of ints per turn."""

from __future__ import annotations

import gc
import json
from array import array
from pathlib import Path

from inspector.analysis import ROWS_BATCH, analyze
from inspector.session import load
from inspector.session.rows import block_of
from inspector.session.usage_store import PackedUsages, packed_row

USAGE = {"input": 1000, "output": 20, "cached": 300, "thoughts": 4, "tool": 0, "total": 1024}
ODD = [  # usages Gemini CLI does not write, kept exactly as recorded
    {"input": 1.5, "output": 20, "cached": 0, "thoughts": 0, "tool": 0, "total": 21.5},
    {"input": -3, "output": 1, "cached": 0, "thoughts": 0, "tool": 0, "total": -2.0},
    {"input": 2**63 + 5, "output": 1, "cached": 0, "thoughts": 0, "tool": 0, "total": 2**63 + 6},
    {"output": 5, "input": 7},
]


def _recording(tmp_path: Path, usages: list[dict[str, object]]) -> Path:
    lines = [{"sessionId": "s-1", "projectHash": "p" * 64, "startTime": "2026-11-28T00:00:00.000Z",
              "lastUpdated": "2026-11-28T00:00:00.000Z", "kind": "main"}]
    for k, usage in enumerate(usages):
        lines.append({"id": f"u{k}", "timestamp": "2026-11-28T00:00:00.000Z", "type": "user",
                      "content": [{"text": f"question {k}"}]})
        lines.append({"id": f"m{k}", "timestamp": "2026-11-28T00:00:00.000Z", "type": "gemini",
                      "content": f"answer {k}", "tokens": usage, "model": "gemini-2.5-pro"})
    path = tmp_path / "session.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def test_a_recordings_usage_holds_no_tuple_per_turn(tmp_path: Path) -> None:
    """Every model turn's usage, as Gemini CLI writes it, lives in arrays of machine integers: the
    column refers to no tuple and no int object, and hands each usage out as recorded."""
    usages = [{**USAGE, "input": 1000 + k * 7919, "total": 1024 + k * 7919} for k in range(50)]
    session = load(_recording(tmp_path, usages))
    index = session.turn_index
    assert index is not None
    column = index.usage.packed()
    assert type(column) is PackedUsages
    held = [obj for obj in gc.get_referents(column) if obj is not PackedUsages]  # (its class is one)
    counts = [obj for obj in held if type(obj) is int]  # how many turns and values it holds: two, not one a turn
    assert len(counts) <= 2 and all(type(obj) in (array, dict, int) for obj in held), [type(obj) for obj in held]
    assert all(not obj for obj in held if type(obj) is dict)  # nothing kept aside: every usage fits
    assert [u for u in index.usage if u is not None] == usages
    assert [index.usage[i] is None for i in range(len(index))] == [k % 2 == 0 for k in range(100)]


def test_usage_of_any_other_shape_is_kept_as_recorded(tmp_path: Path) -> None:
    """A usage with a number that is not a whole one, one beyond 64 bits, or other keys reads
    back exactly as recorded (type too), beside the ones held as machine integers."""
    usages = [USAGE, *ODD, USAGE]
    session = load(_recording(tmp_path, usages))
    index = session.turn_index
    assert index is not None
    found = [u for u in index.usage if u is not None]
    assert found == usages
    assert [type(u["input"]) for u in found] == [int, float, int, int, int, int]


def test_a_grown_recording_keeps_its_usage_when_cut_and_extended(tmp_path: Path) -> None:
    """``TurnIndex.extended`` and ``head`` cut the arrays at the right turn: usage before the cut stays,
    usage after it is the new one."""
    usages = [USAGE, ODD[0], {**USAGE, "input": 5}, ODD[3]]
    index = load(_recording(tmp_path, usages)).turn_index
    assert index is not None
    grown_rows = load(_recording(tmp_path, [{**USAGE, "input": 99}, ODD[2]])).turn_index
    assert grown_rows is not None
    grown = index.extended(5, *block_of(_rows_of(grown_rows)))  # messages 0-4 kept: u0 m0 u1 m1 u2
    assert [u for u in grown.usage if u is not None] == [USAGE, ODD[0], {**USAGE, "input": 99}, ODD[2]]
    head = index.head(4, 4)
    assert list(head.usage) == [None, USAGE, None, ODD[0]]
    assert [u for u in index.usage if u is not None] == usages  # the index itself is as it was


def _rows_of(index: object) -> list[list[tuple[object, ...]]]:
    from inspector.session.turn_index import ROW_FIELDS, TurnIndex

    assert isinstance(index, TurnIndex)
    columns = [index.usage.packed() if name == "usage" else getattr(index, name) for name in ROW_FIELDS]
    rows = [tuple(column[i] for column in columns) for i in range(len(index))]
    return [rows[index.message_starts[m]:index.message_starts[m + 1]] for m in range(len(index.message_starts) - 1)]


def test_a_later_version_shares_the_usage_arrays_and_leaves_the_earlier_as_it_was() -> None:
    """A live append that changes no earlier turn shares the arrays (no copy a version); each version
    reads only its own turns, and one that is no longer at the arrays' end copies before it grows."""
    first = PackedUsages([(k, 2, 3, 4, 5, 6) if k % 3 else None for k in range(1000)])
    before = list(first)
    second = first.head(len(first))
    assert second._values is first._values  # shared, not copied
    second.extend([(7, 7, 7, 7, 7, 7), None])
    assert list(first) == before and len(first) == 1000
    assert list(second) == [*before, (7, 7, 7, 7, 7, 7), None]
    other = first.head(len(first))  # from the earlier version again: it must not grow the shared arrays
    other.append((8, 8, 8, 8, 8, 8))
    assert list(other) == [*before, (8, 8, 8, 8, 8, 8)]
    assert list(second) == [*before, (7, 7, 7, 7, 7, 7), None] and list(first) == before
    del second[500:]
    assert list(second) == before[:500] and list(first) == before


def test_extending_by_pieces_is_appending_turn_by_turn() -> None:
    """``extend`` grows the arrays a piece at a time: the same usages, slots and values as one ``append``
    a turn, across piece boundaries and with every kind of usage (none, six whole numbers as the reader's
    48 bytes or as a tuple, any other shape), onto a column that already holds some and onto a later
    version that shares the arrays."""
    kinds = [None, (1, 2, 3, 4, 5, 6), ODD[0], ODD[3], (2**63 + 5, 1, 0, 0, 0, 2**63 + 6), (True, 2, 3, 4, 5, 6)]
    given = [kinds[k % len(kinds)] if k % 7 else (k, k, k, k, k, k) for k in range(9000)]
    given[5] = packed_row((9, 8, 7, 6, 5, 4))  # (as a reader's row carries it)
    one_by_one = PackedUsages()
    for value in given:
        one_by_one.append(value)
    at_once = PackedUsages(given[:10])
    at_once.extend(given[10:])
    expected = [(9, 8, 7, 6, 5, 4) if k == 5 else value for k, value in enumerate(given)]
    assert list(at_once) == list(one_by_one) == expected
    assert at_once.held()[0] == one_by_one.held()[0] and at_once.held()[1] == one_by_one.held()[1]
    later = at_once.head(len(at_once))
    later.extend(given[:5000])
    at_once.extend([])  # no longer at the arrays' end, and nothing added: they stay shared, not copied
    assert at_once.held()[1] is later.held()[1] and list(at_once) == expected
    assert list(later) == [*expected, *expected[:5000]] and list(at_once) == expected


def test_the_reports_rows_carry_each_turns_usage_across_batches(tmp_path: Path) -> None:
    """The JSON history's rows read usage a batch at a time from the arrays: a batch with no usage at
    all, batches that start or end on one, and usage of any other shape, each row as the column has it."""
    lines = [{"sessionId": "s-1", "projectHash": "p" * 64, "startTime": "2026-11-28T00:00:00.000Z",
              "lastUpdated": "2026-11-28T00:00:00.000Z", "kind": "main"}]
    pairs = ROWS_BATCH + 300  # two turns a pair: the first batch holds no usage, the rest every kind
    for k in range(pairs):
        lines.append({"id": f"u{k}", "timestamp": "2026-11-28T00:00:00.000Z", "type": "user",
                      "content": [{"text": f"question {k}"}]})
        answer = {"id": f"m{k}", "timestamp": "2026-11-28T00:00:00.000Z", "type": "gemini",
                  "content": f"answer {k}", "model": "gemini-2.5-pro"}
        if k >= ROWS_BATCH // 2 + 7:
            answer["tokens"] = ODD[k % len(ODD)] if k % 5 == 0 else {**USAGE, "input": k}
        lines.append(answer)
    path = tmp_path / "session.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    session = load(path)
    result = analyze(session)
    rows = result.to_json(session.path, session.format, session.session_id)["history"]
    assert [row["recorded"] for row in rows] == list(session.turn_index.usage)
    assert rows[0]["recorded"] is None and rows[-1]["recorded"] is not None
    assert any(row["recorded"] in ODD for row in rows)
