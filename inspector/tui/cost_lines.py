"""Cost in the session view: a table column, a line in the detail pane, a line in the apply confirmation.

The figures are ``inspector.pricing.cost``'s, noted once per analysis in the loading
worker (``tui/session_notes.py``); nothing is shown when cost is off or the
model is unknown.
"""

from __future__ import annotations

from rich.text import Text

from inspector.analysis import Analysis
from inspector.format import visible
from inspector.pricing.cost import prompt_saving, session_words, usd_text
from inspector.tui.session_notes import carried_words, noted


def has_cost(analysis: Analysis) -> bool:
    """Whether the table's cost column has anything to show: cost on, and some turn priced."""
    found = noted(analysis)
    return found is not None and found.cost.switch.enabled and bool(found.cost.turns)


def cost_cell(analysis: Analysis, index: int) -> str:
    """The turn table's cost cell: what the turn cost, or nothing (unpriced, or not a model turn)."""
    found = noted(analysis)
    price = found.cost.of_turn(index) if found is not None and found.cost.switch.enabled else None
    return usd_text(price.usd) if price is not None else ""


def cost_lines(analysis: Analysis, index: int) -> list[Text]:
    """The detail pane's line for one turn: its cost, what it assumes, and the session's."""
    found = noted(analysis)
    if found is None or not found.cost.switch.enabled or not 0 <= index < len(analysis.turns):
        return []
    cost = found.cost
    session = session_words(cost)
    whole = f" The session: {session}." if session is not None else ""
    carried = carried_words(found)
    later = f" {carried}" if carried else ""
    price = cost.of_turn(index)
    if price is not None:
        return [Text.assemble(("cost: ", "bold"), (usd_text(price.usd), "bold"),
                              f" ({visible(price.model, one_line=True)}, {price.tier}).{whole}", (later, "dim"))]
    if index in cost.unpriced:
        return [Text(f"cost: none shown; the price table does not know this turn's model, or its usage "
                     f"does not add up.{whole}{later}", style="dim")]
    if found.as_of is not None and index >= found.as_of and analysis.recorded[index]:
        return [Text(f"cost: not worked out yet for this turn.{whole}{later}", style="dim")]
    return []


def saving_text(analysis: Analysis | None, before: int, after: int) -> Text:
    """For the apply confirmation: what the smaller prompt saves on each later turn ("" when
    cost is off or the model unknown)."""
    found = noted(analysis) if analysis is not None else None
    if found is None or not found.cost.switch.enabled:
        return Text("")
    saving = prompt_saving(found.model, before, after)
    if saving is None:
        return Text("")
    tiers = (saving.before.tier if saving.before.tier == saving.after.tier
             else f"{saving.before.tier} before, {saving.after.tier} after")
    return Text.assemble(
        "cost: saves ", (usd_text(saving.usd), "bold"), " on every later turn ",
        (f"({visible(saving.model, one_line=True)}, {tiers}; if sent uncached)", "dim"), "\n",
    )
