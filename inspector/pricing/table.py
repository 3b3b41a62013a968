"""The price table's entry for each model a session names, kept between runs.

Prices come from ``genai-prices``, which holds every provider's prices in one
Python module: importing it takes ~0.14 s, more than analysing a small session.
So what it says of each model looked up is kept in
``$XDG_CACHE_HOME/session-inspector/prices-v1.json`` (else ``~/.cache``), keyed
to the installed table (where it is, and its data module's size and
modification time): a new release of genai-prices is read afresh.  A model
whose prices change with the date or the time of day is never kept.  The file
may be deleted at any time; one that cannot be read, or that holds anything
but what this module writes, is ignored, and one that cannot be written is
left alone.
"""

from __future__ import annotations

import contextlib
import functools
import importlib.util
import json
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import TYPE_CHECKING, Any

from inspector.user_cache import HomeUnknown, cache_dir, made_cache_dir

if TYPE_CHECKING:
    from genai_prices.types import TieredPrices

CACHE_NAME = "prices-v2.json"
MOST_MODELS = 256  # entries kept for one table (a session may name anything as its model)
MOST_TABLES = 4  # tables kept: installs used in turn (pipx, a venv, ...) each keep theirs
LONGEST_NAME = 200  # a model name longer than this is looked up each time, never kept
MOST_BYTES = 1 << 20  # a cache file bigger than this is not read


@dataclass(frozen=True)
class Tier:
    start: int  # a prompt of more than this many tokens pays ``price`` (for all its tokens)
    price: Decimal


@dataclass(frozen=True)
class Tiered:
    """A rate that depends on the prompt's size: ``base`` up to the first tier's start."""

    base: Decimal
    tiers: tuple[Tier, ...]


Rate = Decimal | Tiered


@dataclass(frozen=True)
class ModelPrices:
    """One model's prices per million tokens, as the price table gives them."""

    model_id: str
    model_name: str
    input: Rate
    cached: Rate | None
    output: Rate


def table_key() -> str | None:
    """What identifies the installed price table (None: genai-prices is not installed)."""
    spec = importlib.util.find_spec("genai_prices")  # finds it without importing it
    if spec is None or not spec.submodule_search_locations:
        return None
    folder = Path(next(iter(spec.submodule_search_locations)))
    try:
        stats = [(name, (folder / name).stat()) for name in ("__init__.py", "data.py")]
    except OSError:
        return None
    return "|".join([str(folder), *(f"{name}:{st.st_size}:{st.st_mtime_ns}" for name, st in stats)])


# -- the cache file's form ----------------------------------------------------------------------

def _rate_json(rate: Rate) -> Any:
    if isinstance(rate, Decimal):
        return str(rate)
    return {"base": str(rate.base), "tiers": [[tier.start, str(tier.price)] for tier in rate.tiers]}


def _decimal(value: Any) -> Decimal:
    if not isinstance(value, str):
        raise ValueError("a price that is not a string")
    try:
        return Decimal(value)
    except InvalidOperation as exc:
        raise ValueError(f"a price that is no number: {value!r}") from exc


def _rate_of(value: Any) -> Rate:
    if isinstance(value, str):
        return _decimal(value)
    if not isinstance(value, dict) or set(value) != {"base", "tiers"} or not isinstance(value["tiers"], list):
        raise ValueError("a rate of the wrong form")
    tiers = []
    for item in value["tiers"]:
        if not (isinstance(item, list) and len(item) == 2 and type(item[0]) is int):
            raise ValueError("a tier of the wrong form")
        tiers.append(Tier(item[0], _decimal(item[1])))
    return Tiered(_decimal(value["base"]), tuple(tiers))


def _entry_json(prices: ModelPrices | None) -> Any:
    if prices is None:
        return None
    return {"id": prices.model_id, "name": prices.model_name, "input": _rate_json(prices.input),
            "cached": None if prices.cached is None else _rate_json(prices.cached),
            "output": _rate_json(prices.output)}


def _entry_of(value: Any) -> ModelPrices | None:
    if value is None:
        return None
    if not isinstance(value, dict) or set(value) != {"id", "name", "input", "cached", "output"} \
            or not isinstance(value["id"], str) or not isinstance(value["name"], str):
        raise ValueError("an entry of the wrong form")
    cached = value["cached"]
    return ModelPrices(value["id"], value["name"], _rate_of(value["input"]),
                       None if cached is None else _rate_of(cached), _rate_of(value["output"]))


class _Kept:
    """The cache file's entries for the installed table, read once per process.  The file holds the
    entries of the last ``MOST_TABLES`` tables used, the last used last: ``{"tables": [{"key": ...,
    "models": {...}}, ...]}``, so that two installs used in turn do not each throw the other's away."""

    def __init__(self, path: Path | None, key: str | None) -> None:
        self.path = path
        self.key = key
        self.entries: dict[str, ModelPrices | None] = {}
        self.others: list[dict[str, Any]] = []  # the other tables' as read, each checked, the last used last
        if key is not None:
            self._read()

    def _read(self) -> None:
        if self.path is None:
            return
        try:
            with self.path.open("rb") as handle:
                text = handle.read(MOST_BYTES + 1)
            data = json.loads(text) if len(text) <= MOST_BYTES else None
        except (OSError, ValueError, RecursionError):
            return
        tables = data.get("tables") if isinstance(data, dict) else None
        if not isinstance(tables, list):
            return
        for table in tables[-MOST_TABLES:]:
            if not isinstance(table, dict) or set(table) != {"key", "models"} or not isinstance(table["key"], str) \
                    or not isinstance(table["models"], dict):
                continue
            try:
                entries = {name: _entry_of(value) for name, value in table["models"].items()}
            except ValueError:
                continue  # not what this module writes: that table starts afresh
            if table["key"] == self.key:
                self.entries = entries
            else:
                self.others.append(table)

    def keep(self, model: str, prices: ModelPrices | None) -> None:
        if self.path is None or self.key is None or len(model) > LONGEST_NAME or len(self.entries) >= MOST_MODELS:
            return
        self.entries[model] = prices
        from inspector.store.files import atomic_write

        models = {name: _entry_json(entry) for name, entry in self.entries.items()}
        tables = [*self.others[-(MOST_TABLES - 1):], {"key": self.key, "models": models}]
        data = json.dumps({"tables": tables}, ensure_ascii=True, sort_keys=True)
        with contextlib.suppress(OSError):
            made_cache_dir(self.path.parent)
            atomic_write(self.path, data.encode("ascii"))


@functools.lru_cache(maxsize=1)
def _kept() -> _Kept:
    try:
        path = cache_dir() / CACHE_NAME
    except HomeUnknown:  # no home folder: prices are looked up in the table every time, and not kept
        return _Kept(None, None)
    return _Kept(path, table_key())


def _rate_from_table(rate: Decimal | TieredPrices) -> Rate:
    if isinstance(rate, Decimal):
        return rate
    return Tiered(rate.base, tuple(Tier(tier.start, tier.price) for tier in rate.tiers))


def _look_up(model: str) -> tuple[ModelPrices | None, bool]:
    """The table's entry for ``model``, and whether it may be kept (its prices do not change with time)."""
    from genai_prices import Usage, calc_price
    from genai_prices.types import ModelPrice

    try:
        found = calc_price(Usage(input_tokens=0, output_tokens=0), model, provider_id="google")
    except LookupError:
        return None, True
    fixed = isinstance(found.model.prices, ModelPrice)
    table = found.model_price
    if table.input_mtok is None or table.output_mtok is None:
        return None, fixed
    return ModelPrices(found.model.id, found.model.name or found.model.id, _rate_from_table(table.input_mtok),
                       None if table.cache_read_mtok is None else _rate_from_table(table.cache_read_mtok),
                       _rate_from_table(table.output_mtok)), fixed


@functools.lru_cache(maxsize=64)
def model_prices(model: str) -> ModelPrices | None:
    """The price table's entry for a Gemini model, or None when it has none."""
    kept = _kept()
    if model in kept.entries:
        return kept.entries[model]
    prices, fixed = _look_up(model)
    if fixed:
        kept.keep(model, prices)
    return prices
