"""The history as Gemini CLI's compression reads it, and where it splits that history.

``ChatCompressionService.compress`` splits ``chat.getHistory(true)``, not the
turns as recorded.  That call keeps the curated history (a run of model turns
holding one that ``isValidContent`` rejects is left out) and, when the
configured model is a Gemini 2.x, Gemini 3 or custom model (Gemini CLI's
default, ``auto``, is Gemini 3), also strips the thoughts (``stripThoughts``:
a turn left with no parts is dropped) and joins consecutive turns of one role
(``coalesceConsecutiveRoles``).  A 0.61 recording writes each tool result twice
(in the model message's ``toolCalls`` and as a user message), so joining
changes the split of nearly every session with tool calls.

A joined turn always begins at a recorded turn, so the split is still given
as a recorded turn: the first of the joined turn the kept part begins with.
``SplitColumns`` holds, per recorded turn, its share of the JSON length of the
joined turn it is in (the first turn of a joined turn carries the opening and
closing, each later one its parts and a comma), so that prefix sums at joined
turns are those of the joined history, and it can be extended when the
recording grows, from the joined turn before the change.
"""

from __future__ import annotations

import bisect
import re
from array import array
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Any

from inspector.compaction.split import ends_safely, is_split_candidate, split_point
from inspector.jsjson import js_json_len, js_string_json_len, truthy
from inspector.session.figures import INVALID_MODEL_TURN, OTHER_TURN, PLAIN_TURN, ResponseFigures, content_figures
from inspector.session.history import is_valid_model_content, joined, strip_thoughts
from inspector.session.turn_index import TurnIndex, tail_list

# Gemini CLI's model aliases, as resolveModel names them when asked whether a model is Gemini 3
# (with preview access, its default): every one is a Gemini 3 model except auto-gemini-2.5.
_GEMINI_3_ALIASES = ("auto", "pro", "auto-gemini-3", "flash", "flash-lite", "none")
_GEMINI_2 = re.compile(r"gemini-2(\.|$)")
_GEMINI_3 = re.compile(r"gemini-3(\.|-|$)")
DEFAULT_CONFIGURED_MODEL = "auto"  # what Gemini CLI runs with when nothing names a model


class HistoryView(Enum):
    """How ``getHistory(true)`` shows the history to compression."""

    JOINED = "joined"  # thoughts stripped, consecutive turns of one role joined
    AS_RECORDED = "as recorded"  # the curated turns as they are

    @property
    def words(self) -> str:
        """What Gemini CLI's compression does to the history before it splits it."""
        if self is HistoryView.JOINED:
            return "leaves thoughts out and joins consecutive turns of one role"
        return "reads the turns as recorded"


def history_view(configured_model: str) -> HistoryView:
    """The view Gemini CLI's compression reads for ``configured_model`` (``isGemini2Model`` of the
    name as given, or ``supportsModernFeatures`` of the name it resolves to)."""
    if _GEMINI_2.match(configured_model):
        return HistoryView.JOINED
    name = configured_model.strip()
    if name in _GEMINI_3_ALIASES:
        return HistoryView.JOINED
    resolved = "gemini-2.5-pro" if name == "auto-gemini-2.5" else name
    if _GEMINI_3.match(resolved) or not resolved.startswith("gemini-"):
        return HistoryView.JOINED
    return HistoryView.AS_RECORDED


@dataclass
class SplitColumns:
    """Where the split may go, per recorded turn, in one view; extended in place (``extend``)."""

    view: HistoryView
    prefix: array[int]  # prefix[i]: the JSON length of the view's turns before turn i (machine integers)
    flagged: list[int]  # the first turns of the joined turns the kept part may begin with
    safe_end: bool  # the last joined turn is a model turn without a function call
    left_out: list[int]  # the turns the view leaves out (a rejected model run; JOINED: a turn left empty)

    def __len__(self) -> int:
        return len(self.prefix) - 1

    def split(self, deltas: dict[int, int] | None = None) -> int:
        """``findCompressSplitPoint`` of the view, as a recorded turn; ``deltas``: how much the
        tool-output budget changes each turn's JSON length."""
        return split_point(self.prefix, self.flagged, self.safe_end, deltas or {})

    def candidates(self) -> list[int]:
        """Every split the user may step through: 0, the flagged starts, and the end when it is safe."""
        points = [0, *(i for i in self.flagged if i > 0)]
        if self.safe_end and len(self):
            points.append(len(self))
        return points

    def sent_responses(self, index: TurnIndex, content_of: Callable[[int], dict[str, Any]],
                       start: int = 0) -> Sequence[tuple[ResponseFigures, ...]]:
        """Each turn's function responses from ``start`` on as the tool-output budget sees them in
        this view: none in a turn it leaves out, none in a thought part once thoughts are stripped.
        ``index.responses`` itself when that changes nothing."""
        responses = index.responses
        shapes = index.shape
        thoughts = self.view is HistoryView.JOINED and _holds(shapes, OTHER_TURN, start)
        out_from = bisect.bisect_left(self.left_out, start)
        if out_from == len(self.left_out) and not thoughts:
            return responses if start == 0 else responses[start:]
        own = list(responses[start:])
        for i in self.left_out[out_from:]:
            own[i - start] = ()
        if thoughts:
            for i in range(start, len(shapes)):
                if shapes[i] == OTHER_TURN and own[i - start]:
                    found = content_of(i).get("parts")
                    parts: list[Any] = found if isinstance(found, list) else []
                    own[i - start] = tuple(r for r in own[i - start]
                                           if not (type(parts[r[0]]) is dict and truthy(parts[r[0]].get("thought"))))
        return own

    def extend(self, index: TurnIndex, first: int, content_of: Callable[[int], dict[str, Any]]) -> int:
        """The columns of ``index``, whose turns from ``first`` on are new or written again: the turns
        from a settled joined turn before ``first`` are looked at again, the rest kept.  Returns
        that turn: nothing before it changed."""
        restart = self._restart(index.roles, first)
        del self.prefix[restart + 1:]
        del self.flagged[bisect.bisect_left(self.flagged, restart):]
        del self.left_out[bisect.bisect_left(self.left_out, restart):]
        _Walk(self, index, content_of).run(restart)
        return restart

    def _restart(self, roles: Sequence[str], first: int) -> int:
        """The first turn of a joined turn no change from ``first`` on can reach back into: the joined
        turn before the one that holds the start of the run of one role the turn before ``first`` is
        in (a run left out as a whole, or a turn joined onto the one before, changes no turn before
        that run).  0 when no turn the view shows comes before it."""
        t = min(first, len(self)) - 1
        if t <= 0:
            return 0
        while t > 0 and roles[t - 1] == roles[t]:
            t -= 1
        kept = t if not self._is_left_out(t) else self._kept_before(t)
        if kept is None:
            return 0
        before = self._kept_before(self._joined_start(roles, kept))
        if before is None:
            return 0
        restart = self._joined_start(roles, before)
        return restart if self._kept_before(restart) is not None else 0

    def _is_left_out(self, turn: int) -> bool:
        k = bisect.bisect_left(self.left_out, turn)
        return k < len(self.left_out) and self.left_out[k] == turn

    def _kept_before(self, turn: int) -> int | None:
        """The last turn before ``turn`` the view shows (None: none)."""
        turn -= 1
        while turn >= 0 and self._is_left_out(turn):
            turn -= 1
        return turn if turn >= 0 else None

    def _joined_start(self, roles: Sequence[str], turn: int) -> int:
        """The first turn of the joined turn ``turn`` (a turn the view shows) is in."""
        if self.view is not HistoryView.JOINED or not roles[turn]:
            return turn
        while (before := self._kept_before(turn)) is not None and roles[before] == roles[turn]:
            turn = before
        return turn


def split_columns(view: HistoryView, index: TurnIndex, content_of: Callable[[int], dict[str, Any]]) -> SplitColumns:
    """The split columns of every turn of ``index`` (``content_of``: a turn's content, asked for only
    for turns whose shape is not plain)."""
    columns = SplitColumns(view, array("q", [0]), [], False, [])
    _Walk(columns, index, content_of).run(0)
    return columns


def contents_columns(contents: Sequence[dict[str, Any]], view: HistoryView) -> SplitColumns:
    """The split columns of a history given as Content dicts (measured here)."""
    index = TurnIndex.from_rows([content_figures(c) for c in contents])
    return split_columns(view, index, lambda i: contents[i])


def view_split(contents: Sequence[dict[str, Any]], view: HistoryView) -> int:
    """``findCompressSplitPoint`` of ``contents`` in ``view``, as a recorded turn (no budget)."""
    return contents_columns(contents, view).split()


def view_candidates(contents: Sequence[dict[str, Any]], view: HistoryView) -> list[int]:
    """Every split of ``contents`` Gemini CLI's rule allows in ``view`` (``SplitColumns.candidates``)."""
    return contents_columns(contents, view).candidates()


def viewed(contents: Sequence[dict[str, Any]], view: HistoryView) -> list[tuple[int, dict[str, Any]]]:
    """``getHistory(true)`` of ``contents`` built in full: (the first recorded turn, the content) of
    every turn the view shows.  The definition ``SplitColumns`` computes without building it."""
    out: list[tuple[int, dict[str, Any]]] = []
    dropped = _dropped_runs([c.get("role") for c in contents], lambda i: _invalid(contents[i]))
    for i, content in enumerate(contents):
        if i in dropped:
            continue
        if view is HistoryView.JOINED:
            stripped = strip_thoughts(content)
            if stripped is None:
                continue
            role = stripped.get("role")
            if out and role and out[-1][1].get("role") == role:
                out[-1] = (out[-1][0], joined(out[-1][1], stripped))
                continue
            content = stripped
        out.append((i, content))
    return out


def _holds(column: Sequence[int], value: int, start: int) -> bool:
    """Whether ``column`` holds ``value`` from ``start`` on (without copying its tail)."""
    try:
        column.index(value, start)
    except ValueError:
        return False
    return True


def _invalid(content: dict[str, Any]) -> bool:
    return content.get("role") == "model" and not is_valid_model_content(content)


def _dropped_runs(roles: list[Any], invalid: Callable[[int], bool], start: int = 0) -> set[int]:
    """The turns in runs of model turns that hold a turn ``invalid`` says is not valid; ``roles[k]`` is
    turn ``start + k``'s role, and ``invalid`` is asked by that place ``k``."""
    out: set[int] = set()
    k, count = 0, len(roles)
    while k < count:
        if roles[k] != "model":
            k += 1
            continue
        end = k
        while end < count and roles[end] == "model":
            end += 1
        if any(invalid(j) for j in range(k, end)):
            out.update(range(start + k, start + end))
        k = end
    return out


class _Walk:
    """One pass over turns from the first turn of a joined turn (or 0), appending to the columns."""

    def __init__(self, columns: SplitColumns, index: TurnIndex, content_of: Callable[[int], dict[str, Any]]) -> None:
        self.columns, self.index, self.content_of = columns, index, content_of

    def run(self, start: int) -> None:
        columns, index = self.columns, self.index
        # turn ``start + k``'s figures at ``k``, as lists: compiled, a list is read by place without an int
        # object and a generic lookup a cell (both were a third of the walk)
        roles, cuts, shapes = tail_list(index.roles, start), tail_list(index.thought_json, start), \
            tail_list(index.shape, start)
        json_lengths, candidate, safe = tail_list(index.json_lengths, start), tail_list(index.is_candidate, start), \
            tail_list(index.is_safe_end, start)
        joining = columns.view is HistoryView.JOINED
        dropped = _dropped_runs(roles, lambda k: shapes[k] == INVALID_MODEL_TURN, start)
        prefix, left_out = columns.prefix, columns.left_out
        overhead: dict[str, int] = {}  # per role: what a joined turn's later turn does not repeat
        total = prefix[-1]
        role = ""  # the joined turn being read: its role, first turn, where it begins (0 for the first)
        group = group_start = -1
        seen = start > 0
        built = group_candidate = group_safe = False
        for k in range(len(roles)):
            i = start + k
            turn_role = roles[k]
            plain = shapes[k] == PLAIN_TURN
            sent = json_lengths[k] - cuts[k] if joining else json_lengths[k]
            # left out: in a dropped run, or (joined) left empty without its thoughts ("parts":[] when plain)
            if (dropped and i in dropped) or (joining and (sent == self._overhead(overhead, turn_role) + 1 if plain
                                                           else strip_thoughts(self.content_of(i)) is None)):
                prefix.append(total)
                left_out.append(i)
                continue
            if joining and group >= 0 and turn_role and turn_role == role:
                total += sent - self._overhead(overhead, turn_role)  # its parts and a comma
                built = built or not plain
                group_candidate = group_candidate and candidate[k]
                group_safe = group_safe and safe[k]
            else:
                if group >= 0:
                    self._close(group, group_start, built, group_candidate, group_safe)
                    total = prefix[-1]
                total += sent
                role, group, group_start = turn_role, i, i if seen else 0
                seen = True
                built = joining and not plain
                group_candidate, group_safe = candidate[k], safe[k]
            prefix.append(total)
        if group >= 0:
            self._close(group, group_start, built, group_candidate, group_safe)
        elif not seen:
            columns.safe_end = False

    @staticmethod
    def _overhead(known: dict[str, int], role: str) -> int:
        """``{"role":…,"parts":[`` and ``]}`` less the comma a later turn of a joined turn brings."""
        found = known.get(role)
        if found is None:
            found = known[role] = 19 + js_string_json_len(role)
        return found

    def _close(self, first: int, start: int, built: bool, candidate: bool, safe: bool) -> None:
        """The joined turn from ``first`` (where it begins: ``start``) is read to its end."""
        columns = self.columns
        if built:  # a turn in it is not plain: measured by building it, its whole length on its first turn
            group = [k for k in range(first, len(columns.prefix) - 1) if not columns._is_left_out(k)]
            content = self._joined(group)
            end = columns.prefix[first] + js_json_len(content)
            for k in range(first + 1, len(columns.prefix)):
                columns.prefix[k] = end
            candidate, safe = is_split_candidate(content), ends_safely(content)
        if candidate:
            columns.flagged.append(start)
        columns.safe_end = safe

    def _joined(self, group: list[int]) -> dict[str, Any]:
        content: dict[str, Any] | None = None
        for i in group:
            stripped = strip_thoughts(self.content_of(i))
            assert stripped is not None
            content = stripped if content is None else joined(content, stripped)
        assert content is not None
        return content


__all__ = ["DEFAULT_CONFIGURED_MODEL", "HistoryView", "SplitColumns", "contents_columns", "history_view",
           "split_columns", "view_candidates", "view_split", "viewed"]
