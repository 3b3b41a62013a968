"""The session view's keys: each binding with its id (a keymap can remap it) and what it does."""

from __future__ import annotations

from textual.binding import Binding, BindingType

SESSION_ACTIONS = frozenset({
    "split", "agentic", "split_reference", "goto_split", "largest_turn", "compact", "compact_focus", "compare",
    "apply", "revert", "timeline", "show_preview", "detail", "strategy", "reload", "agentic_point", "split_here",
    "goto_turn", "search", "search_next", "filter", "order", "warnings", "figures", "provider", "export", "copy",
    "context_view",
})  # the keys that need a session: dimmed while it loads, hidden when it failed to load
TAIL_ACTIONS = frozenset({"detail"})  # the keys that work on the newest turns shown while the file is read


def pending_words(action: str) -> str:
    """What a key says while the session is read: the figure it waits for."""
    for actions, words in _PENDING:
        if action in actions:
            return words
    return "The session is still being read."


_PENDING: tuple[tuple[frozenset[str], str], ...] = (
    (frozenset({"split", "agentic", "split_reference", "goto_split", "agentic_point", "split_here"}),
     "The split is still being read: it needs every turn."),
    (frozenset({"compact", "compact_focus", "compare", "strategy", "provider"}),
     "Compaction needs the whole history, still being read."),
    (frozenset({"search", "search_next", "filter", "order", "largest_turn", "goto_turn"}),
     "Turn numbers are still being read: searching, filtering and going to a turn need every turn."),
    (frozenset({"figures"}), "The figures (total, gauge, split) are still being read."),
    (frozenset({"context_view"}), "The breakdown is still being read: it needs every turn."),
    (frozenset({"warnings"}), "The warnings are still being read: the whole file is read for them."),
)
SPLIT_KEYS = Binding.Group("Split", compact=True)
AGENTIC_KEYS = Binding.Group("Agentic", compact=True)

SESSION_BINDINGS: list[BindingType] = [
    Binding("left_square_bracket", "split(-1)", "Previous split", id="split.previous", key_display="[",
            tooltip="move the split to the previous candidate turn", group=SPLIT_KEYS),
    Binding("right_square_bracket", "split(1)", "Next split", id="split.next", key_display="]",
            tooltip="move the split to the next candidate turn", group=SPLIT_KEYS),
    Binding("left_curly_bracket", "agentic(-1)", "Previous agentic split", id="split.agentic-previous",
            key_display="{", tooltip="move the split to the previous agentic candidate (a model turn, ◆)",
            group=AGENTIC_KEYS),
    Binding("right_curly_bracket", "agentic(1)", "Next agentic split", id="split.agentic-next",
            key_display="}", tooltip="move the split to the next agentic candidate (a model turn, ◆)",
            group=AGENTIC_KEYS),
    Binding("equals_sign", "split_reference", "Reference split", show=False, id="split.reference",
            key_display="=", tooltip="return to the split Gemini CLI would choose"),
    Binding("A", "agentic_point", "Agentic split (like --agentic)", show=False, id="split.agentic",
            key_display="A", tooltip="move the split where compact --agentic puts it: 70% of the weight, "
            "before a model turn"),
    Binding("h", "split_here", "Split here", show=False, id="split.here",
            tooltip="start the kept part at the turn under the cursor"),
    Binding("colon", "goto_turn", "Go to turn", show=False, id="table.goto-turn", key_display=":",
            tooltip="move the cursor to turn N"),
    Binding("slash", "search", "Search", show=False, id="table.search", key_display="/",
            tooltip="find the turns whose text holds some words"),
    Binding("n", "search_next(1)", "Next match", show=False, id="table.search-next",
            tooltip="the next turn the search found"),
    Binding("N", "search_next(-1)", "Previous match", show=False, id="table.search-previous",
            key_display="N", tooltip="the previous turn the search found"),
    Binding("F", "filter", "Filter", show=False, id="table.filter", key_display="F",
            tooltip="show only some turns: a kind, a tool, user or model, >1000 tokens"),
    Binding("o", "order", "Order", show=False, id="table.order",
            tooltip="turn order <-> largest turns first"),
    Binding("c", "compact", "Compact", id="compaction.run",
            tooltip="preview the compaction of the turns above the split"),
    Binding("f", "compact_focus", "Compact with focus", show=False, id="compaction.run-focus",
            tooltip="type what the summary should keep, pick the strategy and target, then compact"),
    Binding("S", "strategy", "Strategy", show=False, id="compaction.strategy", key_display="S",
            tooltip="switch the compaction strategy: reference <-> staged"),
    Binding("C", "compare", "Compare", show=False, id="compaction.compare", key_display="C",
            tooltip="run both strategies on the same history and split, side by side"),
    Binding("p", "show_preview", "Preview", show=False, id="compaction.preview",
            tooltip="open the last compaction preview again"),
    Binding("p", "unavailable('show_preview')", show=False),  # (each: says why, when the key is off)
    Binding("P", "provider", "Summariser", show=False, id="compaction.provider", key_display="P",
            tooltip="who writes the snapshot: offline -> Gemini -> Gemini CLI -> auto (shown before anything is sent)"),
    Binding("a", "apply", "Apply", id="compaction.apply", tooltip="write the previewed compaction to the file"),
    Binding("a", "unavailable('apply')", show=False),
    Binding("u", "revert", "Undo", id="compaction.revert",
            tooltip="undo the newest applied compaction, byte for byte"),
    Binding("u", "unavailable('revert')", show=False),
    Binding("t", "timeline", "Timeline", show=False, id="compaction.timeline",
            tooltip="the compactions applied to this file"),
    Binding("i", "figures", "Figures", show=False, id="session.figures",
            tooltip="which figure decides whether Gemini CLI compresses, why, and every total on screen"),
    Binding("v", "context_view", "Where the context goes", show=False, id="session.context-view",
            tooltip="the estimate by kind, tool, file and model, as bars; Enter lists a group's turns"),
    Binding("w", "warnings", "Warnings", show=False, id="session.warnings",
            tooltip="what was skipped while reading the file (the header counts them)"),
    Binding("r", "reload", "Reload", show=False, id="session.reload", tooltip="read the file again"),
    Binding("b", "subagents", "Subagents", id="session.subagents",
            tooltip="the subagent sessions this session started: list them, open one"),
    Binding("b", "unavailable('subagents')", show=False),
    Binding("x", "export", "Export", show=False, id="session.export",
            tooltip="write the session (and the previewed compaction) as Markdown or HTML"),
    Binding("y", "copy", "Copy turn", show=False, id="session.copy",
            tooltip="copy the turn at the cursor to the clipboard, as Markdown"),
    Binding("d,enter", "detail", "Detail", id="session.detail", key_display="d",
            tooltip="the selected turn in full (in place of the table on a small terminal)"),
    Binding("escape", "close_detail", "Table", id="session.close-detail",
            tooltip="back to the table (on a small terminal the turn is shown in its place)"),
    Binding("escape", "back", "Back", show=False, id="session.back",
            tooltip="close the turn shown in full, back to the preview a line or fact led from, cancel "
                    "loading, or go to the session list"),
]
