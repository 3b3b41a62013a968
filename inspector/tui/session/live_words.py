"""What the live view tells a person of a change on disk: plain functions over two versions read."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from textual.notifications import SeverityLevel

from inspector.format import plural

if TYPE_CHECKING:
    from collections.abc import Sequence

    from inspector.session.errors import LoadWarning
    from inspector.tui.loading import Loaded

# What a person is told happened when a change on disk was read whole (an append that extends is
# said in the status line only).
READ_AGAIN_WORDS = {
    "rewritten": "was rewritten on disk",
    "truncated": "was cut short on disk",
    "changed": "changed on disk other than by new turns at its end",  # + what stopped the extension
    "readable": "can be read again",  # after it could not be read for a while (watch.Unreadable)
}


@dataclass(frozen=True)
class ChangeReport:
    """The status line's words (None: left as it is) and a notification (None: none) for a change."""

    status: str | None
    notice: str | None = None
    severity: SeverityLevel = "information"
    timeout: float = 4


def read_again_words(kind: str, reason: str) -> str:
    """What happened on disk that made a whole read (READ_AGAIN_WORDS; for a change an append could
    not extend, the line that stopped it)."""
    words = READ_AGAIN_WORDS[kind]
    return f"{words}: {reason}" if kind == "changed" and reason else words


def skipped_since(previous: Loaded, loaded: Loaded) -> list[LoadWarning]:
    """The lines ``loaded`` skips that ``previous`` did not, but the last line while it is still being written."""
    session = loaded.session
    seen = set(previous.analysis.warnings)
    return [w for w in loaded.analysis.warnings if w not in seen
            and not (w.line == session.line_count and not session.ends_with_newline)]


def change_report(previous: Loaded, loaded: Loaded, name: str, kind: str, reason: str) -> ChangeReport:
    """An extension is said in the status line (a toast per append is noise on a long run), a whole
    read (after a change of ``kind``, see READ_AGAIN_WORDS) in a notification too."""
    turns, before = len(loaded.analysis.turns), len(previous.analysis.turns)
    added = turns - before
    if loaded.changed_from is not None:
        return ChangeReport(f"live: {plural(added, 'new turn')}" if added > 0 else "live: appended")
    if kind == "appended":
        return ChangeReport(None, f"{plural(added, 'new turn')} in {name}." if added > 0 else None)
    words = read_again_words(kind, reason)
    if loaded.session.sha256 == previous.session.sha256:  # touched, or written again as it was
        return ChangeReport("live: read again, unchanged",
                            f"{name} {words}; it has not changed." if kind == "readable" else None)
    if skipped_since(previous, loaded) and kind == "changed" and added == 0:
        return ChangeReport("live: read again")  # the skipped line says it
    return ChangeReport("live: read again", f"{name} {words}; read again: {plural(turns, 'turn')} (was {before:,}).",
                        "warning", 8)


def skipped_notice(name: str, skipped: Sequence[LoadWarning]) -> str | None:
    """The one notification for lines skipped while reading (None when there are none)."""
    if not skipped:
        return None
    more = f" (and {len(skipped) - 1:,} more)" if len(skipped) > 1 else ""
    return f"{name}: {skipped[0]}{more}. Press w to see every warning."
