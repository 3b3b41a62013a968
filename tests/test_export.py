"""``export``: a session as Markdown and as one HTML page, the page checked in headless Chromium.

The figures in an export are the figures ``analyze --json`` prints; session
text is written literally (hostile markup never runs, control characters are
visible escapes); ``--out`` is written atomically and never over the session.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
from pathlib import Path

import pytest

from inspector.analysis import analyze
from inspector.cli import main
from inspector.format import uncut_split_words
from inspector.session import load
from tests.browser import CHROMIUM, Chromium
from tests.conftest import SAMPLES, write_agent_run
from tests.gemini_server import GeminiServer, error

SESSIONS = sorted(p for p in SAMPLES.iterdir() if p.suffix in (".json", ".jsonl"))
HOSTILE_TEXT = ('<script>window.__pwned = 1</script><img src=x onerror="window.__pwned = 2">'
                "\x1b]2;title\x07 ```` </pre></section> | pipe")


def analyze_json(path: Path, capsys: pytest.CaptureFixture[str]) -> dict:
    assert main(["analyze", str(path), "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def hostile_session(folder: Path) -> Path:
    path = folder / "hostile.jsonl"
    records = [
        {"sessionId": "s-1", "projectHash": "p", "startTime": "2026-01-01T00:00:00.000Z", "kind": "main"},
        {"id": "u1", "timestamp": "2026-01-01T00:00:01.000Z", "type": "user", "content": [{"text": HOSTILE_TEXT}]},
        {"id": "g1", "timestamp": "2026-01-01T00:00:02.000Z", "type": "gemini", "content": HOSTILE_TEXT,
         "model": "gemini-2.5-pro", "tokens": {"input": 120, "output": 8, "cached": 0, "total": 128}},
    ]
    path.write_text("\n".join(json.dumps(r) for r in records) + "\n", encoding="utf-8")
    return path


@pytest.mark.parametrize("source", SESSIONS, ids=lambda p: p.name)
def test_markdown_holds_every_turn_and_the_figures_analyze_prints(
    source: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    figures = analyze_json(source, capsys)
    assert main(["export", str(source), "--format", "md"]) == 0
    text = capsys.readouterr().out
    headings = [line for line in text.splitlines() if line.startswith("### Turn ")]
    assert len(headings) == len(figures["history"])
    assert f"| turns | {len(figures['history']):,} |" in text
    assert f"| estimated tokens | {figures['total_estimated_tokens']:,} |" in text
    split = figures["compress_split_point"]  # where a compaction splits: after the tool-output budget
    assert f"| split point | turn {split:,}" in text
    marker = text.find("*Gemini CLI's split point: the turns above would be summarised.*")
    if 0 < split < len(headings):
        assert text.index(f"### Turn {split - 1:,}:") < marker < text.index(f"### Turn {split:,}:")
    recorded = figures["recorded_prompt_tokens"]
    shown = f"{recorded:,}" if recorded is not None else (
        "none since the last compaction" if analyze(load(source)).fresh_from else "none recorded")
    assert f"| last recorded prompt | {shown} |" in text


def test_the_export_marks_the_split_compact_summarises_at(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """Where the tool-output budget moves Gemini CLI's split, the export marks the split a compaction
    uses (the one compact reports) and names the other."""
    monkeypatch.setenv("GEMINI_MODEL", "auto-gemini-2.5")  # splits the turns as recorded: mid-history
    session = SAMPLES / "long-migration.jsonl"
    figures = analyze_json(session, capsys)
    moved, raw = figures["compress_split_point"], figures["split_point"]
    assert moved != raw  # the case: the budget moves the split
    assert figures["split"]["split"] == moved  # analyze --json's split figures describe the same split
    assert main(["compact", str(session), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["split_point"] == moved
    assert main(["export", str(session), "--format", "md"]) == 0
    text = capsys.readouterr().out
    assert f"| split point | turn {moved:,} ({uncut_split_words(raw)}) |" in text
    assert f"split {raw:,} without the tool-output budget's cuts" in text  # the words analyze and the app use
    assert text.index(f"### Turn {moved - 1:,}:") < text.index("*Gemini CLI's split point") < \
        text.index(f"### Turn {moved:,}:")


def test_the_export_gives_the_same_verdict_as_analyze(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Over the threshold with nothing before the split, the export's "would compress now" says no, and
    why, in analyze --json's own words; a sample under the threshold says it is below."""
    run = write_agent_run(tmp_path / "agent-run.jsonl")
    for path, expected in ((run, "nothing before the split"), (SAMPLES / "coding-task.jsonl", "below threshold")):
        figures = analyze_json(path, capsys)
        assert (figures["would_compress"], figures["verdict"]) == (False, expected)
        assert main(["export", str(path), "--format", "md"]) == 0
        assert f"| would compress now | no ({expected}) |" in capsys.readouterr().out


def test_markdown_keeps_hostile_text_inside_its_fence(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = hostile_session(tmp_path)
    assert main(["export", str(path)]) == 0
    text = capsys.readouterr().out
    assert "\x1b" not in text and "\x07" not in text and "\\e]2;title\\x07" in text
    assert "`````text" in text  # a fence longer than the four backticks in the text


def test_markdown_header_cells_run_no_html_and_link_nowhere(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The title (the file's name), the session id and the model sit outside any fence: a renderer
    must show them, not run them."""
    path = hostile_session(tmp_path)
    records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    records[0]["sessionId"] = "<img src=x onerror=alert(1)>"
    records[2]["model"] = "[click](javascript:alert(1))<script>x</script>"
    named = tmp_path / "s<b>[x](javascript:y)`c`.jsonl"
    named.write_text("\n".join(json.dumps(r) for r in records) + "\n", encoding="utf-8")
    assert main(["export", str(named)]) == 0
    text = capsys.readouterr().out
    head = text[:text.index("```")]  # the title and the facts table, before the first fence
    assert "<" not in head and ">" not in head.replace("-&gt;", "")  # every angle bracket an entity
    assert "&lt;img src=x onerror=alert(1)&gt;" in head and "&lt;script&gt;" in head
    assert "](" not in head.replace("\\](", "")  # no link: its brackets escaped
    assert "\\[click\\](javascript:alert(1))" in head and "\\`c\\`" in head


def test_out_that_is_not_a_regular_file_is_refused_and_left_as_it_is(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The export is renamed over its target: over a pipe, a device or a link it would replace them."""
    session = tmp_path / "coding-task.jsonl"
    shutil.copyfile(SAMPLES / "coding-task.jsonl", session)
    pipe = tmp_path / "pipe"
    os.mkfifo(pipe)
    kept = tmp_path / "kept.md"
    kept.write_text("mine", encoding="utf-8")
    link = tmp_path / "link.md"
    link.symlink_to(kept)
    for target, words in ((pipe, "not a regular file"), (link, "symbolic link")):
        assert main(["export", str(session), "--out", str(target)]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and str(target) in err[0] and words in err[0], err
    assert stat.S_ISFIFO(pipe.lstat().st_mode) and link.is_symlink() and kept.read_text(encoding="utf-8") == "mine"


def unwritable_targets(root: Path) -> list[tuple[Path, str]]:
    """Paths an export cannot be written to, each with the reason it must give."""
    a_file = root / "notes.txt"
    a_file.write_text("mine", encoding="utf-8")
    missing = root / "no" / "such"
    cases = [(root, "that is a folder"), (a_file / "x.md", f"{a_file} is not a folder"),
             (missing / "x.md", f"there is no folder {missing}")]
    if Path("/proc/version").is_file():  # a kernel file: /proc takes no file of ours, root's neither
        cases.append((Path("/proc/version"), "no file can be created in /proc"))
    if Path("/dev/full").exists():
        cases.append((Path("/dev/full"), "that is a character device, not a regular file"))
    if os.geteuid() != 0:  # root writes in a folder whatever its mode says
        locked = root / "locked"
        locked.mkdir()
        (locked / "old.md").write_text("old", encoding="utf-8")
        locked.chmod(0o555)
        cases.append((locked / "old.md", f"permission denied: no file can be created in {locked}"))
    return cases


def test_out_that_cannot_be_written_says_why_and_writes_nothing(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The reason the file system gives is put in a person's words, never "No such file or directory"
    for a path that is there."""
    session = tmp_path / "coding-task.jsonl"
    shutil.copyfile(SAMPLES / "coding-task.jsonl", session)
    root = tmp_path / "root"
    root.mkdir()
    cases = unwritable_targets(root)

    def tree() -> list[tuple[str, bytes | None]]:
        return sorted((str(p), p.read_bytes() if p.is_file() else None) for p in tmp_path.rglob("*"))

    before = tree()
    for target, words in cases:
        assert main(["export", str(session), "--out", str(target)]) == 2, target
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and err[0].startswith(f"session-inspector: {target}: {words}"), err
    assert tree() == before


def test_out_is_written_atomically_and_never_over_the_session(tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    session = tmp_path / "coding-task.jsonl"
    shutil.copyfile(SAMPLES / "coding-task.jsonl", session)
    before = session.read_bytes()
    assert main(["export", str(session), "--out", str(session)]) == 2
    assert "that is the session itself" in capsys.readouterr().err and session.read_bytes() == before
    out = tmp_path / "export.html"
    out.write_text("old", encoding="utf-8")
    assert main(["export", str(session), "--format", "html", "--out", str(out)]) == 0
    assert out.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["coding-task.jsonl", "export.html"]  # no temp left
    assert main(["export", str(tmp_path / "missing.jsonl")]) == 2


def test_compaction_adds_the_snapshot_and_writes_nothing_to_the_session(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    session = tmp_path / "coding-task.jsonl"
    shutil.copyfile(SAMPLES / "coding-task.jsonl", session)
    before = session.read_bytes()
    assert main(["export", str(session), "--compaction"]) == 0
    text = capsys.readouterr().out
    assert "## Compaction snapshot" in text and "<state_snapshot>" in text and "| status | COMPRESSED |" in text
    assert "| written by | offline digest (no model was called) |" in text  # no model named: none was called
    environment = analyze(load(session), threshold=0.5).context.environment_tokens
    assert environment > 0 and f"| environment turn | {environment:,} tokens," in text
    assert session.read_bytes() == before and sorted(p.name for p in tmp_path.iterdir()) == ["coding-task.jsonl"]


def test_a_compaction_that_fails_is_said_in_the_export_not_left_out(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The real SDK against the loopback server, which refuses: the export still comes out, its
    compaction section says why there is no snapshot, stderr says so too, and the exit is 1."""
    for name in ("GOOGLE_API_KEY", "GOOGLE_GENAI_USE_VERTEXAI", "GOOGLE_GENAI_USE_ENTERPRISE"):
        monkeypatch.delenv(name, raising=False)
    session = tmp_path / "coding-task.jsonl"
    shutil.copyfile(SAMPLES / "coding-task.jsonl", session)
    refusal = error(403, "PERMISSION_DENIED", "API key not valid for this project")
    with GeminiServer([refusal] * 8) as server:
        monkeypatch.setenv("GEMINI_API_KEY", "test-key-not-real")
        monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", server.url)
        code = main(["export", str(session), "--compaction", "--provider", "gemini"])
        assert server.requests, "the export did not call the summariser"
    captured = capsys.readouterr()
    assert code == 1
    section = captured.out.split("## Compaction snapshot", 1)[1].split("## Turns", 1)[0]
    assert "| status | COMPRESSION_FAILED_SUMMARISER_ERROR |" in section and "| no snapshot |" in section
    assert "<state_snapshot>" not in section
    assert "no snapshot (COMPRESSION_FAILED_SUMMARISER_ERROR" in captured.err and len(captured.err.splitlines()) == 1
    assert "test-key-not-real" not in captured.out + captured.err

    monkeypatch.delenv("GEMINI_API_KEY")  # asked for by name with no key: refused before anything
    assert main(["export", str(session), "--compaction", "--provider", "gemini"]) == 2
    captured = capsys.readouterr()
    assert not captured.out and captured.err.startswith("session-inspector: Gemini cannot run")


@pytest.mark.skipif(not CHROMIUM.exists(), reason=f"{CHROMIUM} is absent (Debian: apt-get install chromium)")
def test_the_html_page_opens_in_chromium_shows_turns_and_figures_and_runs_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pages = []
    for source in (SAMPLES / "coding-task.jsonl", hostile_session(tmp_path)):
        figures = analyze_json(source, capsys)
        out = tmp_path / f"{source.stem}.html"
        assert main(["export", str(source), "--format", "html", "--out", str(out)]) == 0
        capsys.readouterr()
        pages.append((out, figures))
    browser = Chromium(tmp_path / "chromium")
    try:
        for out, figures in pages:
            session = browser.open(out.as_uri())
            probe = """(() => ({
                turns: document.querySelectorAll("section.turn").length,
                title: document.querySelector("h1").textContent,
                facts: Object.fromEntries([...document.querySelectorAll("table.facts tr")]
                    .map(tr => [tr.cells[0].textContent, tr.cells[1].textContent])),
                pwned: window.__pwned === undefined ? null : window.__pwned,
                scripts: document.querySelectorAll("script, img").length,
                text: document.body.innerText,
            }))()"""
            answer = browser.command("Runtime.evaluate", {"expression": probe, "returnByValue": True},
                                     session=session)
            seen = answer["result"]["value"]
            assert seen["turns"] == len(figures["history"]), out
            assert out.stem in seen["title"]
            assert seen["facts"]["estimated tokens"] == f"{figures['total_estimated_tokens']:,}"
            assert seen["pwned"] is None and seen["scripts"] == 0
            if out.stem == "hostile":
                assert "<script>window.__pwned = 1</script>" in seen["text"] and "\\e]2;title\\x07" in seen["text"]
    finally:
        browser.close()


def test_a_turn_of_one_token_says_one_token(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Counts read as a person writes them: "1 token", "2 tokens" (in the export and analyze's report)."""
    path = tmp_path / "tiny.jsonl"
    stamp = "2026-01-01T00:00:00Z"
    records = [{"sessionId": "s", "projectHash": "p", "startTime": stamp, "kind": "main"},
               {"id": "u", "timestamp": stamp, "type": "user", "content": [{"text": "abcd"}]},
               {"id": "g", "timestamp": stamp, "type": "gemini", "content": "abcdefgh"}]
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    assert main(["export", str(path), "--format", "md"]) == 0
    text = capsys.readouterr().out
    assert "### Turn 0: user (text, 1 token)" in text and "### Turn 1: model (text, 2 tokens)" in text
    assert main(["analyze", str(path)]) == 0
    report = capsys.readouterr().out
    assert "1 tokens" not in report and "3 tokens" in report
