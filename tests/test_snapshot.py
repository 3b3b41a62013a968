"""Parsing snapshots tolerantly and diffing them section by section."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from inspector.cli import main
from inspector.compaction import snapshot as snap
from inspector.jsjson import JS_WHITESPACE, js_trim
from tests.gemini_server import GeminiServer, reply
from tests.hostile import hostile_copy

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


def test_a_diff_past_the_exact_size_matches_lines_as_a_multiset(monkeypatch: pytest.MonkeyPatch) -> None:
    """A snapshot far longer than any model writes is diffed in time that grows with its length (difflib
    took seconds at 100,000 lines): the same lines added and removed, in reading order; a moved line
    counts as unchanged."""
    lines = [f"- fact {i}" for i in range(60)]
    edited = [*lines[:10], "- fact 10 (checked)", *lines[11:40], *lines[41:], "- fact 40"]  # one changed, one moved

    def section(body: list[str]) -> str:
        return "<state_snapshot>\n<key_knowledge>\n" + "\n".join(body) + "\n</key_knowledge>\n</state_snapshot>"

    exact = snap.diff(section(lines), section(edited)).sections[0]
    monkeypatch.setattr(snap, "DIFF_EXACT_LINES", 5)
    cheap = snap.diff(section(lines), section(edited)).sections[0]
    assert cheap.added == ["- fact 10 (checked)"] and cheap.removed == ["- fact 10"]
    assert exact.added == ["- fact 10 (checked)", "- fact 40"] and exact.removed == ["- fact 10", "- fact 40"]
    assert len(cheap.unchanged) == 59
    ops = [(c.op, c.text) for c in cheap.changes]
    assert ops[9:12] == [("unchanged", "- fact 9"), ("removed", "- fact 10"), ("added", "- fact 10 (checked)")]


def test_diff_ignores_indentation_and_bullet_spacing() -> None:
    a = "<state_snapshot><task_state>\n- Do  it\n</task_state></state_snapshot>"
    b = "<state_snapshot><task_state>\n        -   Do it\n</task_state></state_snapshot>"
    assert not snap.diff(a, b).changed


# Characters Python's str.splitlines takes for line ends; in the JSON text Gemini CLI writes only "\n" is one.
NOT_LINE_ENDS = ["\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029"]


def _with(char: str, *, verified: bool) -> str:
    tail = "- Ran pytest: 3 passed." if verified else "- Ran pytest."
    return (f"<state_snapshot>\n<key_knowledge>\n- The log says a{char}b in one line.\n- {char}{char}.{char}\n"
            f"{tail}\n</key_knowledge>\n</state_snapshot>")


def test_only_newline_ends_a_line_of_a_snapshot() -> None:
    for char in NOT_LINE_ENDS:
        lines = snap.parse(_with(char, verified=True)).lines("key_knowledge")
        end = "" if char in JS_WHITESPACE else char  # a line is trimmed as String.prototype.trim trims
        assert lines == [f"- The log says a{char}b in one line.", f"- {char}{char}.{end}", "- Ran pytest: 3 passed."], \
            repr(char)
        changes = snap.diff(_with(char, verified=False), _with(char, verified=True))
        [section] = changes.sections
        assert section.unchanged == lines[:2] and section.removed == ["- Ran pytest."], repr(char)
        assert section.added == ["- Ran pytest: 3 passed."] and changes.counts()["unchanged"] == 2, repr(char)
    crlf = snap.parse("<state_snapshot>\r\n<task_state>\r\n1. [DONE] one\r\n2. [TODO] two\r\n</task_state>")
    assert crlf.lines("task_state") == ["1. [DONE] one", "2. [TODO] two"]
    assert snap.text_lines("a\r\nb\n\nc\x85d\re\n") == ["a", "b", "", "c\x85d\re", ""]
    assert snap.text_lines("no end\r") == ["no end\r"]  # only "\r\n" ends a line, not a lone "\r"


def test_whole_lines_in_the_draft_final_and_the_previous_new_diff(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A model's draft and verified snapshot holding those characters, and a previous snapshot holding NEL
    (the hostile session's text): the draft -> final diff ``compact`` prints and the previous -> new diff
    the app shows list whole lines, split at "\n" only."""
    path = hostile_copy(tmp_path)
    assert main(["compact", str(path), "--provider", "offline", "--force", "--apply"]) == 0
    capsys.readouterr()
    odd = "".join(NOT_LINE_ENDS)
    draft = f"<state_snapshot>\n<key_knowledge>\n- a{odd}b\n- kept\n</key_knowledge>\n</state_snapshot>"
    final = draft.replace("- kept\n", f"- kept\n- verified{odd}c\n")
    for name in ("GEMINI_API_KEY", "GOOGLE_API_KEY", "GOOGLE_GENAI_USE_VERTEXAI", "GOOGLE_CLOUD_PROJECT"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("GEMINI_API_KEY", "test-key")
    with GeminiServer([reply(draft), reply(final)]) as server:
        assert main(["compact", str(path), "--provider", "gemini", "--model", "gemini-2.5-flash", "--force",
                     "--base-url", server.url, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["draft_snapshot"] == draft and out["snapshot"] == final
    [section] = out["draft_final_diff"]["sections"]
    assert section["unchanged"] == [f"- a{odd}b", "- kept"] and section["added"] == [f"- verified{odd}c"]
    assert section["removed"] == []
    previous = out["previous_snapshot"]
    assert "\x85" in previous
    whole = {js_trim(line) for line in f"{previous}\n{final}".split("\n")}
    texts = [change.text for changed in snap.diff(previous, final).sections for change in changed.changes]
    assert any("\x85" in text for text in texts) and any(odd in text for text in texts)
    assert [text for text in texts if text not in whole] == []


def test_first_lines_of_outputs_and_commands_end_at_newline_only() -> None:
    """Where a tool result or a command is cut to its first line (the offline summariser's lines, the
    app's turn preview), a line holding one of those characters is kept whole."""
    from inspector.compaction.outcomes import first_line
    from inspector.compaction.summarisers.lines import clean, command_line
    from inspector.tui.widgets.snapshot_lines import describe_turn

    for char in NOT_LINE_ENDS:
        assert first_line(f"\n  log a{char}b  \r\nsecond") == f"log a{char}b", repr(char)
        one = clean(f"echo a{char}b")  # a line of the offline snapshot: its spacing made plain
        assert command_line(f"echo a{char}b") == one and one.endswith("b"), repr(char)
        assert command_line(f"echo a{char}b\r\nls\nwc") == f"{one} (+2 more lines)", repr(char)
        turn = {"role": "user", "parts": [{"functionResponse": {"name": "run", "response": {
            "output": f"\nsaid x{char}y\nlater"}}}]}
        preview = describe_turn(3, turn).plain
        assert "said x" in preview and "y" in preview.split("said x", 1)[1] and "later" not in preview, repr(char)


# What a section is, said as one regular expression (a search from every opening tag: quadratic in
# the number of tags never closed, so the parser finds them another way and must agree with it).
_SECTION_AS_A_PATTERN = re.compile(r"<([A-Za-z_][\w.-]*)\s*>(.*?)</\1\s*>", re.S)


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(["<a>", "</a>", "<b >", "</b>", "<a.b>", "</a.b >", "x", "\n", "<", ">", "</",
                                 "<a", "a>", "- line\n"]), max_size=40))
def test_sections_are_what_the_pattern_finds(pieces: list[str]) -> None:
    text = "".join(pieces)
    assert list(snap._tagged(text)) == [(m.group(1), m.group(2)) for m in _SECTION_AS_A_PATTERN.finditer(text)]


def test_many_tags_never_closed_still_parse() -> None:
    """200,000 tags that never close, then a real section: found (the pattern took minutes here)."""
    text = "<state_snapshot>" + "<a>" * 200_000 + "<overall_goal>\n- ship it\n</overall_goal></state_snapshot>"
    assert snap.parse(text).lines("overall_goal") == ["- ship it"]
