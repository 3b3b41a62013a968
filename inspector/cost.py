"""What a session cost, per turn and in all, and what a compaction saves.

Prices come from ``genai-prices`` (pydantic's price table, kept up to date by
its maintainers, with the Gemini models' tiers above 200k prompt tokens and
their cached-input prices).  The usage is what Gemini CLI recorded for each
model turn (``tokens``): the prompt (``input``, which includes ``cached``)
plus ``tool`` is billed as input, of which ``cached`` at the cached price;
``output`` plus ``thoughts`` as output.  The tier follows the prompt's size.

Each figure names the model the price table matched and the tier it used.
A turn whose record names no model, or a model the table does not know, gets
no figure at all.  A user signed in with Google (a subscription or the free
tier) pays nothing per token: cost can be turned off (``--no-cost``,
``SESSION_INSPECTOR_COST=off``), and is off by default when Gemini CLI's
settings say that is how the user signs in.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from genai_prices.types import TieredPrices

    from inspector.analysis import Analysis
    from inspector.session import Session

    Rate = Decimal | TieredPrices

MILLION = Decimal(1_000_000)
OFF_WORDS = frozenset({"0", "off", "false", "no"})
ON_WORDS = frozenset({"1", "on", "true", "yes"})
SUBSCRIPTION_AUTH = "oauth-personal"  # Gemini CLI's "Login with Google"


@dataclass(frozen=True)
class CostSwitch:
    enabled: bool
    reason: str  # why: "--no-cost", the environment, the settings file, or "default"


@dataclass(frozen=True)
class ModelPrices:
    """One model's prices per million tokens, as the price table gives them."""

    model_id: str
    model_name: str
    input: Rate
    cached: Rate | None
    output: Rate


@dataclass(frozen=True)
class Price:
    """One figure, with what it assumes."""

    usd: Decimal
    model: str  # the model the price table matched (its name)
    tier: str  # e.g. "prompts up to 200,000 tokens"

    def to_json(self) -> dict[str, Any]:
        return {"usd": float(self.usd), "model": self.model, "tier": self.tier}


@dataclass(frozen=True)
class TurnCost:
    turn: int
    price: Price


@dataclass(frozen=True)
class SessionCost:
    switch: CostSwitch
    turns: tuple[TurnCost, ...] = ()
    unpriced: tuple[int, ...] = ()  # turns with recorded usage but no figure (model unknown, usage odd)
    _index: dict[int, Price] = field(default_factory=dict, repr=False, compare=False)

    def __post_init__(self) -> None:
        self._index.update((t.turn, t.price) for t in self.turns)

    @functools.cached_property  # the detail pane shows it at every cursor move
    def total(self) -> Decimal | None:
        return sum((t.price.usd for t in self.turns), Decimal(0)) if self.turns else None

    @property
    def models(self) -> list[str]:
        return list(dict.fromkeys(t.price.model for t in self.turns))

    def of_turn(self, turn: int) -> Price | None:
        return self._index.get(turn)

    def to_json(self) -> dict[str, Any]:
        if not self.switch.enabled:
            return {"enabled": False, "reason": self.switch.reason}
        total = self.total
        return {
            "enabled": True,
            "reason": self.switch.reason,
            "currency": "USD",
            "session_usd": float(total) if total is not None else None,
            "models": self.models,
            "turns": [{"turn": t.turn, **t.price.to_json()} for t in self.turns],
            "unpriced_turns": list(self.unpriced),
        }


def resolve_cost(explicit: bool | None = None, project_dir: Path | None = None) -> CostSwitch:
    """Whether to show cost: the flag, else ``SESSION_INSPECTOR_COST``, else off for a
    user Gemini CLI's settings say signs in with Google, else on."""
    if explicit is not None:
        return CostSwitch(explicit, "--cost" if explicit else "--no-cost")
    word = os.environ.get("SESSION_INSPECTOR_COST", "").strip().lower()
    if word in OFF_WORDS or word in ON_WORDS:
        return CostSwitch(word in ON_WORDS, f"SESSION_INSPECTOR_COST={word}")
    from inspector.settings import settings_layers

    for path, settings in settings_layers(project_dir):
        security = settings.get("security")
        auth = security.get("auth") if isinstance(security, dict) else None
        chosen = auth.get("selectedType") if isinstance(auth, dict) else settings.get("selectedAuthType")
        if isinstance(chosen, str):
            if chosen == SUBSCRIPTION_AUTH:
                return CostSwitch(False, f"signed in with Google ({path}): no per-token cost")
            return CostSwitch(True, f"signed in with {chosen} ({path})")
    return CostSwitch(True, "default")


@functools.lru_cache(maxsize=64)
def model_prices(model: str) -> ModelPrices | None:
    """The price table's entry for a Gemini model, or None when it has none."""
    from genai_prices import Usage, calc_price

    try:
        found = calc_price(Usage(input_tokens=0, output_tokens=0), model, provider_id="google")
    except LookupError:
        return None
    table = found.model_price
    if table.input_mtok is None or table.output_mtok is None:
        return None
    return ModelPrices(found.model.id, found.model.name or found.model.id, table.input_mtok,
                       table.cache_read_mtok, table.output_mtok)


def _rate(price: Rate, prompt: int) -> tuple[Decimal, int | None]:
    """The rate for a prompt of ``prompt`` tokens, and the tier's start (None: base)."""
    if isinstance(price, Decimal):
        return price, None
    for tier in reversed(price.tiers):
        if prompt > tier.start:
            return tier.price, tier.start
    return price.base, None


def _tier_words(prices: ModelPrices, start: int | None) -> str:
    if start is not None:
        return f"prompts over {start:,} tokens"
    if not isinstance(prices.input, Decimal) and prices.input.tiers:
        return f"prompts up to {prices.input.tiers[0].start:,} tokens"
    return "one price for every prompt size"


def _count(value: Any) -> int | None:
    return value if type(value) is int and value >= 0 else (0 if value is None else None)


def price_usage(usage: Mapping[str, Any], model: str) -> Price | None:
    """The cost of one model turn from the usage Gemini CLI recorded, or None
    (a model the table does not know, or figures that do not add up)."""
    prices = model_prices(model)
    if prices is None:
        return None
    get = usage.get
    prompt_in, cached, output, thoughts, tool = (
        _count(get("input")), _count(get("cached")), _count(get("output")), _count(get("thoughts")),
        _count(get("tool")))
    if prompt_in is None or cached is None or output is None or thoughts is None or tool is None:
        return None
    prompt = prompt_in + tool
    if cached > prompt:
        return None
    input_rate, start = _rate(prices.input, prompt)
    cached_rate = _rate(prices.cached, prompt)[0] if prices.cached is not None else input_rate
    output_rate = _rate(prices.output, prompt)[0]
    usd = ((prompt - cached) * input_rate + cached * cached_rate + (output + thoughts) * output_rate) / MILLION
    return Price(usd, prices.model_name, _tier_words(prices, start))


def prompt_price(model: str, tokens: int) -> Price | None:
    """What sending a prompt of ``tokens`` uncached tokens costs."""
    return price_usage({"input": tokens}, model)


@dataclass(frozen=True)
class Saving:
    """What a smaller prompt saves on every turn that follows (before and after priced alike)."""

    usd: Decimal
    model: str
    before: Price
    after: Price

    def to_json(self) -> dict[str, Any]:
        return {"usd_per_turn": float(self.usd), "model": self.model, "tier_before": self.before.tier,
                "tier_after": self.after.tier, "assumes": "the prompt sent uncached"}


def prompt_saving(model: str | None, before_tokens: int, after_tokens: int) -> Saving | None:
    """The saving per later turn of a prompt cut from ``before_tokens`` to ``after_tokens``
    (a compaction, or masking), or None when the model is unknown."""
    if model is None:
        return None
    before = prompt_price(model, max(before_tokens, 0))
    after = prompt_price(model, max(after_tokens, 0))
    if before is None or after is None:
        return None
    return Saving(before.usd - after.usd, before.model, before, after)


def session_cost(usages: Sequence[Mapping[str, Any] | None], models: Sequence[str | None],
                 switch: CostSwitch) -> SessionCost:
    """Cost per turn: ``usages`` (recorded, None where none) and ``models`` (the model each
    turn's record names, None where it names none), one of each per turn."""
    if not switch.enabled:
        return SessionCost(switch)
    priced: list[TurnCost] = []
    unpriced: list[int] = []
    for turn, (usage, model) in enumerate(zip(usages, models, strict=True)):
        if not usage:
            continue
        price = price_usage(usage, model) if model else None
        if price is None:
            unpriced.append(turn)
        else:
            priced.append(TurnCost(turn, price))
    return SessionCost(switch, tuple(priced), tuple(unpriced))


def turn_models(session: Session, analysis: Analysis, override: str | None = None) -> list[str | None]:
    """The model each turn's record names (``override`` where it names none)."""
    from inspector.session.records import peek

    models: list[str | None] = []
    recorded = analysis.recorded.packed()  # no dict built per turn just to see there is usage
    for turn in analysis.turns:
        named = None
        if not recorded[turn.index]:
            models.append(None)  # nothing to price: the record is not read
            continue
        if turn.role == "model" and turn.message_index is not None and session.contents is None:
            value = peek(session.messages, turn.message_index).get("model")
            named = value if isinstance(value, str) and value else None
        models.append(named or (override if turn.role == "model" else None))
    return models


def cost_of(session: Session, analysis: Analysis, switch: CostSwitch, override: str | None = None) -> SessionCost:
    """Cost per turn and in all for a loaded session: the one function both faces call."""
    if not switch.enabled:
        return SessionCost(switch)
    return session_cost(analysis.recorded, turn_models(session, analysis, override), switch)


def usd_text(usd: Decimal) -> str:
    """Dollars for a person: cents above a dollar, four decimals below (tiny turns still show)."""
    return f"${usd:,.2f}" if abs(usd) >= 1 else f"${usd:,.4f}"
