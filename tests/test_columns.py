"""A live version's per-turn column: a list to its readers, its full chunks shared between versions."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from inspector.session.columns import CHUNK, Column
from inspector.session.turn_index import listed
from tests.traced import traced


def test_a_column_reads_as_the_list_it_was_grown_and_cut_into() -> None:
    rng = random.Random(7)
    model: list[int] = []
    column: Column[int] = Column()
    versions: list[tuple[Column[int], list[int]]] = []
    for _ in range(300):
        step = rng.random()
        if step < 0.5:
            more = [rng.randrange(10**9) for _ in range(rng.randrange(3 * CHUNK))]
            column.extend(more)
            model.extend(more)
        elif step < 0.7 and model:
            cut = rng.randrange(len(model) + 1)
            del column[cut:]
            del model[cut:]
        else:  # a new version: the old one must stay as it was
            versions.append((column, list(model)))
            column = column.head(rng.randrange(len(model) + 1)) if model else Column()
            model = model[:len(column)]
        assert len(column) == len(model)
    for old, expected in [*versions, (column, model)]:
        assert old == expected and list(old) == expected and listed(old) == expected
        if expected:
            k = random.Random(len(expected)).randrange(len(expected))
            assert old[k] == expected[k] and old[-1] == expected[-1] and old[k:k + 5] == expected[k:k + 5]
    with pytest.raises(IndexError):
        column[len(column)]


def test_a_new_version_shares_the_full_chunks() -> None:
    column = Column.of(list(range(50 * CHUNK + 17)))
    def grown() -> Column[int]:
        head = column.head(len(column) - 3)
        head.extend(range(10))
        return head

    head, held, _ = traced(grown)
    assert held < 2 * 8 * CHUNK, f"{held:,} bytes for a version of {len(column):,} items"  # a list copy: 8 a pointer
    assert head[: 50 * CHUNK] == column[: 50 * CHUNK] and len(column) == 50 * CHUNK + 17


SAMPLES = sorted((Path(__file__).resolve().parents[1] / "sample_sessions").glob("*.jsonl"))


@pytest.mark.parametrize("path", SAMPLES[:4], ids=[p.name for p in SAMPLES[:4]])
def test_the_apps_read_shares_its_columns_and_keeps_every_figure(path: Path) -> None:
    """The app's read makes a recording's columns shared ones (the first append then copies nothing
    long); every figure stays what a plain read and analysis give."""
    from inspector.analysis import analyze
    from inspector.session import load
    from inspector.tui.loading import read_session

    loaded = read_session(path)
    plain = load(path)
    assert loaded.session.turn_index is not None and loaded.session.turn_index.shares_columns
    assert loaded.analysis.quarters is loaded.session.turn_index.quarters
    assert loaded.session.turn_index == plain.turn_index
    assert loaded.analysis.to_json(path, "jsonl", None) == analyze(plain).to_json(path, "jsonl", None)
