"""What a session cost, per turn and in all, and what a compaction saves.

Prices come from ``genai-prices`` (pydantic's price table, kept up to date by
its maintainers, with the Gemini models' tiers above 200k prompt tokens and
their cached-input prices).  The usage is what Gemini CLI recorded for each
model turn (``tokens``): the prompt (``input``, which includes ``cached``)
plus ``tool`` is billed as input, of which ``cached`` at the cached price;
``output`` plus ``thoughts`` as output.  The tier follows the prompt's size.

Each figure names the model the price table matched and the tier it used.
A turn whose record names no model is priced as the model the analysis is
for (``--model``, else the newest one the session names: ``Analysis.model``),
on every face alike (``cost_of``); where that is unknown too, or the table
does not know the model, the turn gets no figure at all.  A user signed in with Google (a subscription or the free
tier) pays nothing per token: cost can be turned off (``--no-cost``,
``SESSION_INSPECTOR_COST=off``), and is off by default when Gemini CLI's
settings say that is how the user signs in.
"""

from __future__ import annotations

import bisect
import functools
import math
import os
from array import array
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING, Any

from inspector.analysis import Rows, row_batches
from inspector.pricing.table import ModelPrices, Rate, model_prices
from inspector.session.figures import PackedUsage, UsageColumn, recorded_model, usage_dict
from inspector.session.lazy import LazySequence

if TYPE_CHECKING:
    from inspector.analysis import Analysis
    from inspector.session import Session

MILLION = Decimal(1_000_000)
OFF_WORDS = frozenset({"0", "off", "false", "no"})
ON_WORDS = frozenset({"1", "on", "true", "yes"})
SUBSCRIPTION_AUTH = "oauth-personal"  # Gemini CLI's "Login with Google"


@dataclass(frozen=True)
class CostSwitch:
    enabled: bool
    reason: str  # why: "--no-cost", the environment, the settings file, or "default"


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
class _Band:
    """One model's rates for prompts of one size band (between two tier starts), as whole
    numbers: a turn costs ``amount / 10**(places + 6)`` USD (see ``_amount``)."""

    input: int  # the rate per million tokens times 10**places
    cached: int
    output: int
    places: int  # the most decimal places of the three rates
    model: str  # the name the price table gives the model
    tier: str  # the tier's words, as ``Price.tier``

    def usd(self, amount: int) -> Decimal:
        """The figure ``price_usage`` gives, the same Decimal: ``amount`` is the sum of its three
        products, with their exponent (exact: it is below ``EXACT_BELOW``, well within 28 digits)."""
        return Decimal(amount).scaleb(-self.places) / MILLION

    def usd_float(self, amount: int) -> float:
        """``float(self.usd(amount))``: both are the exact value, correctly rounded."""
        shift = self.places + 6
        return amount / 10**shift if shift >= 0 else float(amount * 10**-shift)


EXACT_BELOW = 1 << 63  # an amount at least this big is priced the Decimal way (never in a real session)


class PricedTurns(LazySequence[TurnCost]):
    """The priced turns of a session, in order, kept as numbers; each ``TurnCost`` is made when asked for."""

    def __init__(self) -> None:
        self.turns = array("q")  # the turn of each priced one, ascending
        self.amounts = array("q")  # its cost over its band's divisor (-1: in ``exact``)
        self.bands: list[_Band] = []
        self.exact: dict[int, Price] = {}  # by position: figures too big for ``amounts``

    def __len__(self) -> int:
        return len(self.turns)

    def _at(self, k: int) -> TurnCost:
        return TurnCost(self.turns[k], self.price(k))

    def price(self, k: int) -> Price:
        """The figure of the ``k``-th priced turn."""
        found = self.exact.get(k)
        if found is not None:
            return found
        band = self.bands[k]
        return Price(band.usd(self.amounts[k]), band.model, band.tier)

    def position(self, turn: int) -> int | None:
        k = bisect.bisect_left(self.turns, turn)
        return k if k < len(self.turns) and self.turns[k] == turn else None

    def total(self) -> Decimal:
        """The sum of every figure: the Decimal that adding them one by one gives, in value and exponent."""
        if self.exact:
            return sum((self.price(k).usd for k in range(len(self))), Decimal(0))
        groups: dict[int, list[int]] = {}  # the amounts of the bands with the same places
        amounts = self.amounts
        for k, band in enumerate(self.bands):
            groups.setdefault(band.places, []).append(amounts[k])
        # Each figure's exponent (Band.usd): -(places + 6), less the amount's trailing zeros, up to
        # -places; the sum's is the least of them and 0 (the sum starts at Decimal(0)).  The least
        # trailing zeros of a group's amounts are those of their greatest common divisor.
        exponent = 0
        for places, group in groups.items():
            exponent = min(exponent, -(places + 6) + _trailing_zeros(math.gcd(*group), 6))
        coefficient = 0
        for places, group in groups.items():
            shift = -(places + 6) - exponent  # >= -(the group's trailing zeros): exact either way
            coefficient += sum(group) * 10**shift if shift >= 0 else sum(group) // 10**-shift
        return Decimal(coefficient).scaleb(exponent)

    def rows(self, reuse: bool) -> Iterator[list[dict[str, Any]]]:
        """The ``turns`` of ``SessionCost.to_json`` in batches (``analysis.Rows``)."""
        turns, amounts, bands, exact = self.turns, self.amounts, self.bands, self.exact
        for start, rows in row_batches(len(turns), reuse, _TURN_ROW):
            for n in range(len(rows)):
                k = start + n
                band = bands[k]
                row = rows[n]
                row["turn"] = turns[k]
                row["usd"] = band.usd_float(amounts[k]) if k not in exact else float(exact[k].usd)
                row["model"] = band.model
                row["tier"] = band.tier
            yield rows


_TURN_ROW: dict[str, Any] = dict.fromkeys(("turn", "usd", "model", "tier"))


@dataclass(frozen=True)
class SessionCost:
    switch: CostSwitch
    turns: PricedTurns = field(default_factory=PricedTurns)
    unpriced: tuple[int, ...] = ()  # turns with recorded usage but no figure (model unknown, usage odd)
    models: tuple[str, ...] = ()  # the models the priced turns assume, in the order they first appear

    @functools.cached_property  # the detail pane shows it at every cursor move
    def total(self) -> Decimal | None:
        return self.turns.total() if self.turns else None

    def of_turn(self, turn: int) -> Price | None:
        k = self.turns.position(turn)
        return self.turns.price(k) if k is not None else None

    def to_json(self, *, lazy: bool = False) -> dict[str, Any]:
        """The ``cost`` of ``analyze --json``; ``lazy``: its turns as ``analysis.Rows``."""
        if not self.switch.enabled:
            return {"enabled": False, "reason": self.switch.reason}
        total = self.total
        turns = Rows(self.turns.rows)
        return {
            "enabled": True,
            "reason": self.switch.reason,
            "currency": "USD",
            "session_usd": float(total) if total is not None else None,
            "models": list(self.models),
            "turns": turns if lazy else turns.to_list(),
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


def _rate(price: Rate, prompt: int) -> tuple[Decimal, int | None]:
    """The rate for a prompt of ``prompt`` tokens, and the tier's start (None: base)."""
    if isinstance(price, Decimal):
        return price, None
    for tier in reversed(price.tiers):
        if prompt > tier.start:
            return tier.price, tier.start
    return price.base, None


def _rates(prices: ModelPrices, prompt: int) -> tuple[Decimal, Decimal, Decimal, int | None]:
    """The input, cached-input and output rates for a prompt of ``prompt`` tokens, and the
    input tier's start (None: base); cached input is billed as input where the table has no price."""
    input_rate, start = _rate(prices.input, prompt)
    cached_rate = _rate(prices.cached, prompt)[0] if prices.cached is not None else input_rate
    return input_rate, cached_rate, _rate(prices.output, prompt)[0], start


def _trailing_zeros(number: int, most: int) -> int:
    """How many zeros ``number`` ends with in decimal, at most ``most`` (``most`` for 0)."""
    count = 0
    while count < most and number % 10 == 0:
        number //= 10
        count += 1
    return count


def _tier_words(prices: ModelPrices, start: int | None) -> str:
    if start is not None:
        return f"prompts over {start:,} tokens"
    if not isinstance(prices.input, Decimal) and prices.input.tiers:
        return f"prompts up to {prices.input.tiers[0].start:,} tokens"
    return "one price for every prompt size"


def _count(value: Any) -> int | None:
    return value if type(value) is int and value >= 0 else (0 if value is None else None)


Counts = tuple[int, int, int]  # (prompt, cached, output) tokens of one turn, as billed


def _counts(usage: PackedUsage | Mapping[str, Any]) -> Counts | None:
    """The billed counts of recorded usage (the prompt includes ``tool``; output includes
    ``thoughts``), or None when its figures do not add up."""
    if type(usage) is tuple:
        prompt_in, output, cached, thoughts, tool = usage[0], usage[1], usage[2], usage[3], usage[4]
    else:
        get = usage.get  # type: ignore[union-attr]
        prompt_in, output, cached, thoughts, tool = get("input"), get("output"), get("cached"), get("thoughts"), \
            get("tool")
    if not (type(prompt_in) is int and type(output) is int and type(cached) is int and type(thoughts) is int
            and type(tool) is int):  # a key left out, or a value that is no count
        prompt_in, output, cached, thoughts, tool = (_count(prompt_in), _count(output), _count(cached),
                                                     _count(thoughts), _count(tool))
        if prompt_in is None or output is None or cached is None or thoughts is None or tool is None:
            return None
    if prompt_in < 0 or output < 0 or cached < 0 or thoughts < 0 or tool < 0:
        return None
    prompt = prompt_in + tool
    if cached > prompt:
        return None
    return prompt, cached, output + thoughts


def _band(prices: ModelPrices, prompt: int) -> _Band | None:
    """The band of prompts of ``prompt`` tokens (None: a rate that is no finite number, priced the
    Decimal way)."""
    input_rate, cached_rate, output_rate, start = _rates(prices, prompt)
    rates = (input_rate, cached_rate, output_rate)
    if not all(rate.is_finite() for rate in rates):
        return None
    places = max(-int(rate.as_tuple().exponent) for rate in rates)
    scaled = [int(rate.scaleb(places)) for rate in rates]
    return _Band(scaled[0], scaled[1], scaled[2], places, prices.model_name, _tier_words(prices, start))


class _Bands:
    """A model's rates by prompt size: ``band(prompt)``, one ``_Band`` between two tier starts."""

    def __init__(self, prices: ModelPrices) -> None:
        starts: set[int] = set()
        for rate in (prices.input, prices.cached, prices.output):
            if rate is not None and not isinstance(rate, Decimal):
                starts.update(tier.start for tier in rate.tiers)
        self.starts = sorted(starts)
        # a prompt of ``start + 1`` tokens is over the tiers up to ``start`` and no others
        self.bands = [_band(prices, prompt) for prompt in [self.starts[0] if self.starts else 0,
                                                           *(start + 1 for start in self.starts)]]

    def band(self, prompt: int) -> _Band | None:
        return self.bands[bisect.bisect_left(self.starts, prompt)] if self.starts else self.bands[0]


@functools.lru_cache(maxsize=64)
def _bands(model: str) -> _Bands | None:
    prices = model_prices(model)
    return _Bands(prices) if prices is not None else None


def _amount(counts: Counts, band: _Band) -> int:
    prompt, cached, output = counts
    return (prompt - cached) * band.input + cached * band.cached + output * band.output


def price_usage(usage: Mapping[str, Any], model: str) -> Price | None:
    """The cost of one model turn from the usage Gemini CLI recorded, or None
    (a model the table does not know, or figures that do not add up)."""
    prices = model_prices(model)
    if prices is None:
        return None
    counts = _counts(usage)
    if counts is None:
        return None
    prompt, cached, output = counts
    input_rate, cached_rate, output_rate, start = _rates(prices, prompt)
    usd = ((prompt - cached) * input_rate + cached * cached_rate + output * output_rate) / MILLION
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


def session_cost(usages: Sequence[Mapping[str, Any] | None] | UsageColumn, models: Sequence[str | None],
                 switch: CostSwitch, override: str | None = None) -> SessionCost:
    """Cost per turn: ``usages`` (recorded, None where none) and ``models`` (the model each
    turn's record names, None where it names none: ``override`` is assumed there), one of
    each per turn.  Each turn is priced with whole numbers in its model's band (the same
    figure as ``price_usage``'s Decimals, exactly)."""
    if not switch.enabled:
        return SessionCost(switch)
    # (a type test: a compiled UsageColumn shares Sequence's ABC cache, so isinstance may take a list for one)
    packed: Sequence[Any] = usages.packed() if type(usages) is UsageColumn else usages  # type: ignore[union-attr]
    if len(packed) != len(models):
        raise ValueError(f"{len(packed)} usages for {len(models)} models")
    priced = PricedTurns()
    turns, amounts, bands, exact = priced.turns, priced.amounts, priced.bands, priced.exact
    unpriced: list[int] = []
    names: dict[str, None] = {}
    found: dict[str, _Bands | None] = {}
    for turn, usage in enumerate(packed):  # (in order: a recording's usage[i] costs more than its pricing)
        if not usage:
            continue
        model = models[turn] or override or ""
        table = found.get(model)
        if table is None and model and model not in found:
            table = found[model] = _bands(model)
        counts = _counts(usage) if table is not None else None
        if table is None or counts is None:
            unpriced.append(turn)
            continue
        band = table.band(counts[0])
        amount = _amount(counts, band) if band is not None else EXACT_BELOW
        if band is None or amount >= EXACT_BELOW:
            price = exact[len(turns)] = _exact_price(usage, model)
            amount = -1
            band = _Band(0, 0, 0, 0, price.model, price.tier)
        turns.append(turn)
        amounts.append(amount)
        bands.append(band)
        if band.model not in names:
            names[band.model] = None
    return SessionCost(switch, priced, tuple(unpriced), tuple(names))


def _exact_price(usage: Any, model: str) -> Price:
    """``price_usage`` of a turn already found priceable (its amount too big for whole numbers kept short)."""
    mapping = usage_dict(usage) if type(usage) is tuple else usage
    found = price_usage(mapping, model) if isinstance(mapping, Mapping) else None
    assert found is not None
    return found


def turn_models(session: Session, analysis: Analysis) -> Sequence[str | None]:
    """The model each turn's record names (None where it names none, or it is no model turn)."""
    index = session.turn_index
    if index is not None and len(index) == len(analysis.turns):
        return index.models  # measured while reading
    from inspector.session.records import peek

    models: list[str | None] = []
    recorded = analysis.recorded.packed()  # no dict built per turn just to see there is usage
    for turn in analysis.turns:
        named = None
        if recorded[turn.index] and turn.role == "model" and turn.message_index is not None \
                and session.contents is None:
            named = recorded_model(peek(session.messages, turn.message_index))
        models.append(named)
    return models


def cost_of(session: Session, analysis: Analysis, switch: CostSwitch) -> SessionCost:
    """Cost per turn and in all for a loaded session: the one function both faces call.

    Where a turn's record names no model, ``analysis.model`` is assumed: the model the figures are
    for (``--model``, else the session's newest)."""
    if not switch.enabled:
        return SessionCost(switch)
    return session_cost(analysis.recorded, turn_models(session, analysis), switch, analysis.model)


def usd_text(usd: Decimal) -> str:
    """Dollars for a person: cents above a dollar, four decimals below (tiny turns still show)."""
    return f"${usd:,.2f}" if abs(usd) >= 1 else f"${usd:,.4f}"


def session_words(cost: SessionCost) -> str | None:
    """What the whole session cost, as every face says it ("$0.1535 over 12 priced turns"); None
    when cost is off or no turn is priced."""
    total = cost.total if cost.switch.enabled else None
    if total is None:
        return None
    count = len(cost.turns)
    return f"{usd_text(total)} over {count:,} priced turn{'' if count == 1 else 's'}"
