"""The header of the session view: file, format, model, the context gauge and the split figures."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from inspector.format import percent
from inspector.tui.loading import Loaded, human_size

GAUGE_WIDTH = 48


def gauge(used: int, limit: int, threshold: float, width: int = GAUGE_WIDTH) -> Text:
    """A bar of ``used / limit`` with the compression threshold marked by ┃."""
    share = used / limit if limit else 0.0
    filled = max(0, min(width, round(share * width)))
    mark = max(0, min(width - 1, int(threshold * width)))
    over = used >= threshold * limit
    text = Text()
    for i in range(width):
        if i == mark:
            text.append("┃", style="bold red" if over else "bold yellow")
        elif i < filled:
            text.append("█", style="red" if over and i >= mark else "green")
        else:
            text.append("░", style="dim")
    return text


def header_lines(loaded: Loaded, split: int) -> Text:
    session, analysis = loaded.session, loaded.analysis
    total = analysis.total_estimated_tokens
    limit = analysis.token_limit
    line1 = Text.assemble(
        (session.path.name, "bold"),
        "  ·  ", session.format,
        "  ·  ", (analysis.model or "model unknown", "bold cyan"),
        "  ·  ", human_size(session.size),
        "  ·  ", f"{len(analysis.turns):,} turns",
    )
    if analysis.warnings:
        line1.append(f"  ·  {len(analysis.warnings)} warning(s)", style="yellow")
    line2 = Text.assemble("context ", gauge(total, limit, analysis.threshold), " ")
    line2.append(f"{total:,}", style="bold")
    line2.append(f" / {limit:,} ({percent(total / limit if limit else 0)})")
    line2.append(f"   threshold {percent(analysis.threshold)} = {int(analysis.threshold * limit):,}", style="dim")
    recorded = analysis.recorded_prompt_tokens
    line2.append("   recorded last prompt: ")
    line2.append(f"{recorded:,}" if recorded is not None else "none", style="bold")
    figures = analysis.split_figures(split)
    kind = loaded.split_kind(split)
    ref = "reference" if kind == "reference" else f"{kind}; reference {analysis.split_point}"
    line3 = Text.assemble(
        "split ", (f"{split}", "bold magenta"), " (", (ref, "bold" if kind == "agentic" else ""), ")   summarise ",
        (f"{figures['summarised_turns']:,}", "bold"), " turns / ",
        (f"{figures['summarised_tokens']:,}", "bold"), " tok   keep ",
        (f"{figures['kept_turns']:,}", "bold"), " turns / ",
        (f"{figures['kept_tokens']:,}", "bold"), f" tok ({percent(float(figures['kept_share']))})",
    )
    if analysis.compress_split_point != analysis.split_point:
        line3.append(f"   after the tool-output budget: {analysis.compress_split_point}", style="dim")
    verdict = "   would compress now" if analysis.would_compress else "   below the threshold"
    line3.append(verdict, style="yellow" if analysis.would_compress else "dim")
    return Text("\n").join([line1, line2, line3])


class ContextHeader(Static):
    """Three lines of figures about the open session; updated at every split step."""

    DEFAULT_CSS = """
    ContextHeader { height: auto; padding: 0 1; background: $panel; }
    """

    def show(self, loaded: Loaded, split: int) -> None:
        self.update(header_lines(loaded, split))
