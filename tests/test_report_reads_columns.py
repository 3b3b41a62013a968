"""``analyze --json`` of a recording writes its rows from the reader's columns: no turn is made for a
row and no usage looked up by index (each cost more than the row; 170,000 of them on the bench file)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest

from inspector.analysis import analyze
from inspector.commands.analyze import json_report
from inspector.commands.common import print_json
from inspector.pricing.cost import cost_of, resolve_cost
from inspector.session import Turn, history, load
from inspector.session.turns import TurnList
from inspector.session.usage_store import PackedUsages
from tests.conftest import SAMPLES

RECORDINGS = sorted(SAMPLES.glob("*.jsonl"))


@pytest.mark.parametrize("path", RECORDINGS, ids=[p.name for p in RECORDINGS])
def test_the_rows_and_the_cost_make_no_turn_and_look_up_no_usage_by_index(
    path: Path, monkeypatch: pytest.MonkeyPatch, capsysbinary: pytest.CaptureFixture[bytes],
) -> None:
    session = load(path)
    result = analyze(session)
    assert isinstance(result.turns, TurnList) and len(result.turns) > 4
    expected = orjson.dumps(json_report(session, result, cost=True), option=orjson.OPT_INDENT_2) + b"\n"
    report = json_report(session, result, lazy=True, cost=True)
    calls = {"turns made": 0, "usage[i]": 0}

    def counted(name: str, original: Callable[..., Any]) -> Callable[..., Any]:
        def count(*args: Any) -> Any:
            calls[name] += 1
            return original(*args)
        return count

    monkeypatch.setattr(TurnList, "_made", counted("turns made", TurnList._made))
    monkeypatch.setattr(PackedUsages, "__getitem__", counted("usage[i]", PackedUsages.__getitem__))
    print_json(report)  # the rows, made while written
    priced = cost_of(session, result, resolve_cost(True))
    assert calls == {"turns made": 0, "usage[i]": 0}
    whole_cost = json.loads(expected)["cost"]
    assert whole_cost["enabled"] and priced.to_json()["turns"] == whole_cost["turns"]
    written = capsysbinary.readouterr().out
    assert written == expected  # the same bytes as the report made whole
    rows = json.loads(written)["history"]
    index = session.turn_index
    assert index is not None
    assert [(r["role"], r["record_id"]) for r in rows] == list(zip(index.roles, index.record_ids, strict=True))


def test_roles_and_record_ids_are_the_turns_own_with_turns_appended(tmp_path: Path) -> None:
    path = RECORDINGS[0]
    session = load(path)
    turns = history(session)
    assert isinstance(turns, TurnList) and len(turns) > 2
    roles, ids = turns.roles_and_record_ids()
    assert list(zip(roles, ids, strict=True)) == [(t.role, t.record_id) for t in turns]
    grown = turns.head(len(turns) - 1)  # as a live append cuts and grows a recording's turns
    grown.append(Turn(len(grown), {"role": "model", "parts": [{"text": "appended"}]}, "new-record", None))
    roles, ids = grown.roles_and_record_ids()
    assert list(zip(roles, ids, strict=True)) == [(t.role, t.record_id) for t in grown]
    assert (roles[-1], ids[-1]) == ("model", "new-record")
    assert len(roles) == len(turns)


def test_the_history_rows_give_each_turns_usage_as_recorded_without_a_tuple_per_turn(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Usage held as six machine integers, and usage of another shape (a number that is no whole one,
    the keys in another order), is written as the recorded object (``usage_dict``) from the arrays
    it is held in: no tuple is made per turn (170,000 on the bench file)."""
    lines = (SAMPLES / "long-migration.jsonl").read_text().splitlines()
    shapes = iter([
        {"input": 10, "output": 2.5, "cached": 0, "thoughts": 0, "tool": 0, "total": 12.5},
        {"output": 3, "input": 11, "cached": 0, "thoughts": 1, "tool": 0, "total": 15},
        {"input": 2**70, "output": 1, "cached": 0, "thoughts": 0, "tool": 0, "total": 2**70 + 1},
    ])
    changed = []
    for line in lines:
        record = json.loads(line) if line.strip() else None
        if isinstance(record, dict) and isinstance(record.get("tokens"), dict):
            record["tokens"] = next(shapes, record["tokens"])
            line = json.dumps(record)
        changed.append(line)
    path = tmp_path / "usage.jsonl"
    path.write_text("\n".join(changed) + "\n")
    session = load(path)
    result = analyze(session)
    expected = [result.recorded[i] for i in range(len(result.turns))]
    assert sum(u is not None for u in expected) > 3 and {"output": 3, "input": 11, "cached": 0, "thoughts": 1,
                                                           "tool": 0, "total": 15} in expected

    def refused(*args: Any) -> Any:
        raise AssertionError("a usage made into a tuple for its row")

    monkeypatch.setattr(PackedUsages, "__iter__", refused)
    rows = result.to_json(session.path, session.format, session.session_id)["history"]
    assert [row["recorded"] for row in rows] == expected


class _Rows:
    """What print_json streams: an object with ``batches`` (analysis.Rows's shape)."""

    def __init__(self, items: list[dict[str, Any]]) -> None:
        self.items = items

    def batches(self) -> Any:
        yield self.items[:1]
        yield []
        yield self.items[1:]


def test_rows_anywhere_in_objects_are_streamed_in_place_and_the_rest_written_as_it_is(
        capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    first: list[dict[str, Any]] = [{"a": 1}, {"b": [2, "é"]}]
    second: list[dict[str, Any]] = [{"c": None}]
    plain = {"group": {"tokens": 3, "detail": {"read": 1}}, "list": [{"x": 1}], "n": None}
    report = {"history": _Rows(first), "breakdown": plain, "deep": {"inner": {"rows": _Rows(second), "k": 1.5}},
              "empty": _Rows([])}
    whole = {"history": first, "breakdown": plain, "deep": {"inner": {"rows": second, "k": 1.5}}, "empty": []}
    print_json(report)
    assert capsysbinary.readouterr().out == orjson.dumps(whole, option=orjson.OPT_INDENT_2) + b"\n"
    from inspector.commands.common import _mark_rows

    found: dict[str, tuple[Any, int]] = {}
    marked = _mark_rows(report, 0, found)
    assert [depth for _, depth in found.values()] == [1, 3, 1]  # in the order written
    assert marked["breakdown"] is plain and marked is not report  # an object holding no rows: not copied
    assert _mark_rows(plain, 0, {}) is plain
