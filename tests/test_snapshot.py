"""Parsing snapshots tolerantly and diffing them section by section."""

from __future__ import annotations

from inspector.compaction import snapshot as snap

FULL = """<scratchpad>thinking about <state_snapshot> first</scratchpad>
<state_snapshot>
    <overall_goal>
        Ship the parser.
    </overall_goal>
    <active_constraints>
        <!-- rules -->
        - Never touch vendor/.
        - Keep Python 3.11.
    </active_constraints>
    <mood>
        - cheerful
    </mood>
    <task_state>
        1. [DONE] Write it.
        2. [TODO] Test it.
    </task_state>
</state_snapshot>"""


def test_parse_keeps_order_skips_preamble_and_tolerates_unknown_and_missing_sections() -> None:
    parsed = snap.parse(FULL)
    assert parsed.found
    assert parsed.names() == ["overall_goal", "active_constraints", "mood", "task_state"]
    assert parsed.preamble.startswith("<scratchpad>")
    assert parsed.lines("active_constraints") == ["- Never touch vendor/.", "- Keep Python 3.11."]
    assert parsed.get("key_knowledge") is None and parsed.lines("key_knowledge") == []


def test_parse_without_closing_tag_or_without_snapshot() -> None:
    cut = snap.parse("<state_snapshot><overall_goal>Go</overall_goal><task_state>half")
    assert cut.found and cut.names() == ["overall_goal"]
    none = snap.parse("just prose")
    assert not none.found and none.sections == ()


def test_diff_reports_added_removed_unchanged_per_section() -> None:
    new = FULL.replace("- Keep Python 3.11.", "- Keep Python 3.12.").replace(
        "<mood>\n        - cheerful\n    </mood>", "<key_knowledge>\n - `make` builds\n</key_knowledge>")
    result = snap.diff(FULL, new)
    by_name = {s.name: s for s in result.sections}
    assert by_name["overall_goal"].status == "unchanged"
    constraints = by_name["active_constraints"]
    assert constraints.status == "changed"
    assert constraints.added == ["- Keep Python 3.12."] and constraints.removed == ["- Keep Python 3.11."]
    assert constraints.unchanged == ["- Never touch vendor/."]
    assert by_name["key_knowledge"].status == "added" and by_name["mood"].status == "removed"
    assert result.changed and result.counts()["added"] == 2
    assert not snap.diff(FULL, FULL).changed


def test_diff_ignores_indentation_and_bullet_spacing() -> None:
    a = "<state_snapshot><task_state>\n- Do  it\n</task_state></state_snapshot>"
    b = "<state_snapshot><task_state>\n        -   Do it\n</task_state></state_snapshot>"
    assert not snap.diff(a, b).changed
