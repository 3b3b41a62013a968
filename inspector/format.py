"""Small text formatting shared by the CLI report and the app."""

from __future__ import annotations

from typing import Any

_BLOCKS = " ▏▎▍▌▋▊▉█"


def compact_number(value: float | int | None) -> str:
    """1234 -> 1.2k, 1234567 -> 1.2M; exact below a thousand."""
    if value is None:
        return ""
    value = float(value)
    for limit, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(value) >= limit:
            scaled = value / limit
            return f"{scaled:.1f}{suffix}" if scaled < 10 else f"{scaled:.0f}{suffix}"
    return f"{value:.0f}"


def usage_text(usage: dict[str, Any] | None) -> str:
    """Recorded usage as input/output/cached (+thoughts)."""
    if not usage:
        return ""
    text = "/".join(compact_number(usage.get(k) or 0) for k in ("input", "output", "cached"))
    if usage.get("thoughts"):
        text += f" +{compact_number(usage['thoughts'])}th"
    return text


def share_bar(share: float, width: int = 1) -> str:
    """A left-aligned bar of eighth blocks for a share between 0 and 1."""
    eighths = max(0, min(width * 8, round(share * width * 8)))
    if share > 0 and eighths == 0:
        eighths = 1
    full, rest = divmod(eighths, 8)
    return ("█" * full + (_BLOCKS[rest] if rest else "")).ljust(width)


def percent(share: float) -> str:
    return f"{share * 100:.1f}%"
