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

from inspector.pricing.table import CACHE_NAME, table_key

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


def test_a_second_run_reads_the_kept_prices_without_the_table(tmp_path: Path) -> None:
    models = [_fixed_model(), "gemini-2.5-pro", "gemini-2.5-flash", "no-such-model-anywhere"]
    first = _run(tmp_path, *models)
    second = _run(tmp_path, *models)
    expected = {name: _table(name) for name in models}
    assert first["prices"] == expected
    assert second["prices"] == expected
    assert first["imported_table"] is True
    assert second["imported_table"] is False  # every answer came from the file
    kept = json.loads(_cache_file(tmp_path).read_text(encoding="ascii"))
    assert kept["key"] == table_key()
    assert sorted(kept["models"]) == sorted(models)
    # the folder it made is the one the search index (every session's text) goes into: the owner's only
    assert stat.S_IMODE(_cache_file(tmp_path).parent.stat().st_mode) == 0o700


def test_prices_that_change_with_time_are_never_kept(tmp_path: Path) -> None:
    dated = _dated_model()
    if dated is None:
        pytest.skip("the installed genai-prices has no Google model whose prices change with time")
    first = _run(tmp_path, dated, _fixed_model())
    assert first["prices"][dated] == _table(dated)
    kept = json.loads(_cache_file(tmp_path).read_text(encoding="ascii"))
    assert dated not in kept["models"]
    assert _run(tmp_path, dated)["imported_table"] is True  # looked up again, each run


def test_a_file_kept_for_another_table_is_not_believed(tmp_path: Path) -> None:
    model = _fixed_model()
    path = _cache_file(tmp_path)
    path.parent.mkdir(parents=True)
    bogus = {"id": model, "name": "bogus", "input": "999", "cached": None, "output": "999"}
    path.write_text(json.dumps({"key": "another table", "models": {model: bogus}}), encoding="ascii")
    assert _run(tmp_path, model)["prices"][model] == _table(model)
    assert json.loads(path.read_text(encoding="ascii"))["key"] == table_key()


@pytest.mark.parametrize("content", [
    b"{not json",
    b"\xff\xfe\x00binary",
    b"[" * 100_000,
    b'{"key": null, "models": []}',
    "KEY-MODELS-WRONG-FORM",
    "KEY-PRICE-NO-NUMBER",
    b" " * (2 << 20),
], ids=["broken-json", "binary", "deep", "wrong-top", "wrong-entry", "price-no-number", "over-1-MiB"])
def test_a_damaged_or_foreign_file_is_ignored(tmp_path: Path, content: bytes | str) -> None:
    model = _fixed_model()
    path = _cache_file(tmp_path)
    path.parent.mkdir(parents=True)
    if content == "KEY-MODELS-WRONG-FORM":
        content = json.dumps({"key": table_key(), "models": {model: {"id": 1}}}).encode()
    elif content == "KEY-PRICE-NO-NUMBER":
        entry = {"id": model, "name": "x", "input": "NaN-ish", "cached": None, "output": "1"}
        content = json.dumps({"key": table_key(), "models": {model: entry}}).encode()
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
