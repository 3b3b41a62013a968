"""Why the estimate and the recorded prompt differ, in one line.

The header's gauge shows what Gemini CLI compares with its threshold (the
prompt the API last recorded, else the estimate); the split line and the
table show Gemini CLI's estimate of the history.  They often differ a lot
(``long-migration.jsonl``: 525,821 recorded, 1,096,349 estimated, more than
the window), and each reason is measured, never guessed:

* tool results the history holds twice: Gemini CLI records a result with its
  call and, in the same recording, again as a message of its own; resumed,
  the history has both, while the API saw it once;
* turns after the newest request the API counted: not in its figure yet;
* the rest: the estimate counts characters (a quarter token per ASCII
  character), the API the model's tokens, and the API's figure includes the
  system prompt and tool declarations, which the estimate leaves out.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from inspector.format import compact_number, count_text, plural
from inspector.tokens import content_parts, part_quarters

if TYPE_CHECKING:
    from inspector.analysis import Analysis
    from inspector.session.turn_index import TurnIndex


@dataclass(frozen=True)
class EstimateGap:
    """The estimate (environment turn + history) beside the recorded prompt, and what explains the gap."""

    estimated: int
    recorded: int
    history: int  # the estimate of the history alone: the table's and the split's total
    twice: int  # tokens of tool results whose call id an earlier result in the history has already
    unsent_turns: int  # turns after the newest turn with recorded usage
    unsent: int  # their estimate

    def reasons(self, short: bool = False, rounded: bool = False) -> list[str]:
        """What makes the gap, largest measured part first; ``short``: in a few words each,
        ``rounded``: with rounded figures (546k)."""
        number = compact_number if rounded else count_text
        found = []
        if self.twice:
            found.append(f"{number(self.twice)} {'' if rounded else 'results '}held twice" if short else
                         f"{number(self.twice)} of it is tool results the history holds twice "
                         "(recorded with the call and again as a message; the API saw them once)")
        if self.unsent_turns:
            found.append(f"{number(self.unsent)} not sent yet" if short else
                         f"{plural(self.unsent_turns, 'turn')} after the last request add {number(self.unsent)}")
        if self.estimated - self.twice - self.unsent > self.recorded:
            found.append("chars, not tokens" if short else
                         "the rest: the estimate counts characters, the API the model's tokens")
        else:
            found.append("API adds system prompt+tools" if short else
                         "the API's figure also holds the system prompt and tool declarations")
        return found

    def words(self, level: int = 0) -> str:
        """One line: the two figures and why they differ; ``level`` 0 in full, 1 shorter (exact figures),
        2 shortest (rounded figures)."""
        if level >= 2:
            return (f"est. {compact_number(self.history)} vs recorded {compact_number(self.recorded)}: "
                    + "; ".join(self.reasons(True, True)))
        if level == 1:
            return (f"estimate {count_text(self.history)} vs recorded {count_text(self.recorded)}: "
                    + "; ".join(self.reasons(True)))
        return (f"the split's {count_text(self.history)} (Gemini CLI's estimate of the history) differs from the "
                f"recorded {count_text(self.recorded)} (what it compares): " + "; ".join(self.reasons()))


def twice_held_quarters(analysis: Analysis, index: TurnIndex | None = None) -> int:
    """Quarter tokens of the function responses whose call id an earlier response already had."""
    seen: set[object] = set()
    total = 0
    if index is not None and len(index) == len(analysis.turns):
        for outputs in index.outputs:
            for output in outputs:
                ident = output[4]
                if isinstance(ident, str) and ident:
                    if ident in seen:
                        total += output[2]
                    seen.add(ident)
        return total
    for turn in analysis.turns:
        for part in content_parts(turn.content):
            response = part.get("functionResponse") if type(part) is dict else None
            ident = response.get("id") if isinstance(response, dict) else None
            if isinstance(ident, str) and ident and response:
                if ident in seen:
                    total += part_quarters(part)
                seen.add(ident)
    return total


def estimate_gap(analysis: Analysis, index: TurnIndex | None = None) -> EstimateGap | None:
    """Why the estimate differs from the recorded prompt; None without one, or when they agree."""
    context = analysis.context
    recorded = context.recorded_prompt_tokens
    if recorded is None or recorded == context.estimated_tokens:
        return None
    last = next((i for i in range(len(analysis.turns) - 1, analysis.fresh_from - 1, -1)
                 if (analysis.recorded.input_tokens(i) or 0) > 0), len(analysis.turns) - 1)
    count = len(analysis.turns)
    return EstimateGap(context.estimated_tokens, recorded, analysis.total_estimated_tokens,
                       twice_held_quarters(analysis, index) // 4,
                       count - 1 - last, analysis.tokens_between(last + 1, count))
