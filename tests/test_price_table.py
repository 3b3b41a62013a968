"""The prices looked up are kept between runs, and what is kept is what the table says.

Each run is a fresh interpreter (the lookups are cached per process) with its
own ``XDG_CACHE_HOME``; the figures it prints are compared with genai-prices'
own ``calc_price`` in this process.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from genai_prices import Usage, calc_price
from genai_prices.data import providers
from genai_prices.types import ModelPrice

from inspector.pricing.table import CACHE_NAME, MOST_TABLES, table_key

REPO = Path(__file__).resolve().parents[1]

PRINT = """
import json, sys
from inspector.pricing.table import model_prices
out = {}
for name in sys.argv[1:]:
    p = model_prices(name)
    out[name] = None if p is None else [p.model_id, p.model_name, repr(p.input), repr(p.cached), repr(p.output)]
print(json.dumps({"prices": out, "imported_table": "genai_prices" in sys.modules}))
"""


def _google_models() -> list[Any]:
    return [model for provider in providers if provider.id == "google" for model in provider.models]


def _fixed_model() -> str:
    return next(m.id for m in _google_models() if isinstance(m.prices, ModelPrice) and m.id.startswith("gemini"))


def _dated_model() -> str | None:
    return next((m.id for m in _google_models() if not isinstance(m.prices, ModelPrice)), None)


def _run(cache: Path, *models: str) -> dict[str, Any]:
    env = {**os.environ, "XDG_CACHE_HOME": str(cache)}
    done = subprocess.run([sys.executable, "-c", PRINT, *models], capture_output=True, text=True, env=env,
                          cwd=REPO, check=True)
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def _table(model: str) -> list[Any] | None:
    """What the table itself says, in the form ``PRINT`` gives."""
    from inspector.pricing.table import _rate_from_table

    try:
        found = calc_price(Usage(input_tokens=0, output_tokens=0), model, provider_id="google")
    except LookupError:
        return None
    table = found.model_price
    if table.input_mtok is None or table.output_mtok is None:
        return None
    cached = None if table.cache_read_mtok is None else _rate_from_table(table.cache_read_mtok)
    return [found.model.id, found.model.name or found.model.id, repr(_rate_from_table(table.input_mtok)),
            repr(cached), repr(_rate_from_table(table.output_mtok))]


def _cache_file(cache: Path) -> Path:
    return cache / "session-inspector" / CACHE_NAME


def _tables(cache: Path) -> dict[str, dict[str, Any]]:
    """The kept tables' models by key, in the file's order (the last used last)."""
    data = json.loads(_cache_file(cache).read_text(encoding="ascii"))
    return {table["key"]: table["models"] for table in data["tables"]}


def _file_of(*tables: tuple[str | None, dict[str, Any]]) -> bytes:
    return json.dumps({"tables": [{"key": key, "models": models} for key, models in tables]}).encode()


def test_a_second_run_reads_the_kept_prices_without_the_table(tmp_path: Path) -> None:
    models = [_fixed_model(), "gemini-2.5-pro", "gemini-2.5-flash", "no-such-model-anywhere"]
    first = _run(tmp_path, *models)
    second = _run(tmp_path, *models)
    expected = {name: _table(name) for name in models}
    assert first["prices"] == expected
    assert second["prices"] == expected
    assert first["imported_table"] is True
    assert second["imported_table"] is False  # every answer came from the file
    kept = _tables(tmp_path)
    assert list(kept) == [table_key()]
    assert sorted(kept[table_key()]) == sorted(models)
    # the folder it made is the one the search index (every session's text) goes into: the owner's only
    assert stat.S_IMODE(_cache_file(tmp_path).parent.stat().st_mode) == 0o700


def test_prices_that_change_with_time_are_never_kept(tmp_path: Path) -> None:
    dated = _dated_model()
    if dated is None:
        pytest.skip("the installed genai-prices has no Google model whose prices change with time")
    first = _run(tmp_path, dated, _fixed_model())
    assert first["prices"][dated] == _table(dated)
    assert dated not in _tables(tmp_path)[table_key()]
    assert _run(tmp_path, dated)["imported_table"] is True  # looked up again, each run


def test_another_tables_prices_are_not_believed_and_are_kept_for_it(tmp_path: Path) -> None:
    """Two installs used in turn (pipx and a venv): each reads its own table's kept prices, and
    keeping its own leaves the other's, so neither imports its table again on every other run."""
    model = _fixed_model()
    path = _cache_file(tmp_path)
    path.parent.mkdir(parents=True)
    bogus = {"id": model, "name": "bogus", "input": "999", "cached": None, "output": "999"}
    path.write_bytes(_file_of(("another table", {model: bogus})))
    first = _run(tmp_path, model)
    assert first["prices"][model] == _table(model)
    assert first["imported_table"] is True
    kept = _tables(tmp_path)
    assert list(kept) == ["another table", table_key()]
    assert kept["another table"] == {model: bogus}
    assert list(kept[table_key()]) == [model]
    second = _run(tmp_path, model)
    assert second["imported_table"] is False
    assert second["prices"][model] == _table(model)


def test_only_the_last_tables_used_are_kept(tmp_path: Path) -> None:
    model = _fixed_model()
    path = _cache_file(tmp_path)
    path.parent.mkdir(parents=True)
    older = [(f"install {n}", {}) for n in range(MOST_TABLES + 2)]
    path.write_bytes(_file_of(*older))
    _run(tmp_path, model)
    kept = list(_tables(tmp_path))
    assert kept == [f"install {n}" for n in range(3, MOST_TABLES + 2)] + [table_key()]
    assert len(kept) == MOST_TABLES


@pytest.mark.parametrize("content", [
    b"{not json",
    b"\xff\xfe\x00binary",
    b"[" * 100_000,
    b'{"key": null, "models": []}',
    b'{"tables": [{"key": null, "models": []}, 5, {"key": "k"}]}',
    "KEY-MODELS-WRONG-FORM",
    "KEY-PRICE-NO-NUMBER",
    b" " * (2 << 20),
], ids=["broken-json", "binary", "deep", "wrong-top", "wrong-tables", "wrong-entry", "price-no-number", "over-1-MiB"])
def test_a_damaged_or_foreign_file_is_ignored(tmp_path: Path, content: bytes | str) -> None:
    model = _fixed_model()
    path = _cache_file(tmp_path)
    path.parent.mkdir(parents=True)
    if content == "KEY-MODELS-WRONG-FORM":
        content = _file_of((table_key(), {model: {"id": 1}}))
    elif content == "KEY-PRICE-NO-NUMBER":
        entry = {"id": model, "name": "x", "input": "NaN-ish", "cached": None, "output": "1"}
        content = _file_of((table_key(), {model: entry}))
    assert isinstance(content, bytes)
    path.write_bytes(content)
    assert _run(tmp_path, model)["prices"][model] == _table(model)


def test_a_cache_folder_that_cannot_be_written_changes_nothing(tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the cache folder would go", encoding="utf-8")
    model = _fixed_model()
    assert _run(blocker, model)["prices"][model] == _table(model)
    assert blocker.read_text(encoding="utf-8") == "a file where the cache folder would go"


def test_kept_tiers_price_a_turn_as_the_table_does(tmp_path: Path) -> None:
    """A figure worked out from kept prices equals genai-prices' own, on both sides of a tier."""
    model = "gemini-2.5-pro"
    _run(tmp_path, model)  # keeps it
    script = """
import json, sys
from inspector.pricing.cost import price_usage
out = [str(price_usage({"input": p, "output": 1000, "cached": 100, "thoughts": 10, "tool": 0}, sys.argv[1]).usd)
       for p in (1000, 200_000, 200_001, 900_000)]
print(json.dumps({"usd": out, "imported_table": "genai_prices" in sys.modules}))
"""
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path)}
    done = subprocess.run([sys.executable, "-c", script, model], capture_output=True, text=True, env=env,
                          cwd=REPO, check=True)
    result = json.loads(done.stdout)
    assert result["imported_table"] is False
    for prompt, usd in zip((1000, 200_000, 200_001, 900_000), result["usd"], strict=True):
        table = calc_price(Usage(input_tokens=prompt, cache_read_tokens=100, output_tokens=1010), model,
                           provider_id="google")
        assert Decimal(usd) == table.total_price
