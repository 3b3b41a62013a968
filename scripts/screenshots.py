"""Drive the real app on the sample sessions and save screenshots to screenshots/.

    python scripts/screenshots.py [NAME ...]     (default: every screenshot)
    python scripts/screenshots.py --browser      screenshots/browser.png: the app served by
                                                 ``--serve``, in headless Chromium (tests/browser.py),
                                                 and screenshots/export-html.png: ``export --format html``

Writes SVG (Textual's own export) and, when a converter is available, PNG:
``rsvg-convert`` (Debian: librsvg2-bin) first, else ``cairosvg`` (PyPI), else
headless Chromium (the one ``tests/browser.py`` uses).  The
SVG's non-breaking spaces are turned into plain spaces with
``xml:space="preserve"`` for the conversion, because both converters collapse
runs of ``&#160;`` and misalign the columns otherwise.
"""

from __future__ import annotations

import asyncio
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Awaitable, Callable
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from scripts.make_antigravity_sample import OUT as ANTIGRAVITY_SAMPLE  # noqa: E402
from tests.snapshot_app import build_app, settle  # noqa: E402

OUT = REPO / "screenshots"
SIZE = (160, 45)
Steps = Callable[[object], Awaitable[None]]


def keys(*names: str) -> Steps:
    async def run(pilot) -> None:  # type: ignore[no-untyped-def]
        await settle(pilot)
        for name in names:
            await pilot.press(name)
            await settle(pilot)

    return run


def to_png(svg: Path) -> str | None:
    png = svg.with_suffix(".png")
    text = svg.read_text(encoding="utf-8").replace("&#160;", " ").replace("<svg ", '<svg xml:space="preserve" ', 1)
    with tempfile.NamedTemporaryFile("w", suffix=".svg", delete=False, encoding="utf-8") as handle:
        handle.write(text)
        fixed = Path(handle.name)
    try:
        if shutil.which("rsvg-convert"):
            subprocess.run(["rsvg-convert", "-w", "1280", str(fixed), "-o", str(png)], check=True)
            return "rsvg-convert"
        try:
            import cairosvg  # type: ignore[import-not-found]
        except ImportError:
            return chromium_png(svg, png)  # a browser draws &#160; right: the original SVG
        cairosvg.svg2png(url=str(fixed), write_to=str(png), output_width=1280)
        return "cairosvg"
    finally:
        fixed.unlink()


def chromium_png(svg: Path, png: Path, width: int = 1280) -> str | None:
    """The SVG drawn by headless Chromium at ``width`` pixels (its viewBox gives the height)."""
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    view_box = re.search(r'viewBox="0 0 ([\d.]+) ([\d.]+)"', svg.read_text(encoding="utf-8"))
    if chromium is None or view_box is None:
        return None
    height = math.ceil(width * float(view_box.group(2)) / float(view_box.group(1)))
    page = svg.with_suffix(".html")
    page.write_text(f'<html><body style="margin:0"><img src="{svg.name}" style="width:{width}px;display:block">'
                    "</body></html>", encoding="utf-8")
    try:
        with tempfile.TemporaryDirectory(prefix="shot-profile-") as profile:
            subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                            f"--user-data-dir={profile}", f"--window-size={width},{height}",
                            f"--screenshot={png}", page.as_uri()],
                           check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=120)
    finally:
        page.unlink()
    return "chromium"


async def shoot(name: str, path: Path | str, steps: Steps, size: tuple[int, int] = SIZE) -> Path:
    app = build_app(path)
    async with app.run_test(size=size) as pilot:
        await steps(pilot)
        svg = OUT / f"{name}.svg"
        svg.write_text(app.export_screenshot(title=f"session-inspector - {name}"), encoding="utf-8")
    return svg


async def main() -> int:
    os.chdir(REPO)  # sample paths stay relative, so titles read the same everywhere
    OUT.mkdir(exist_ok=True)
    samples = Path("sample_sessions")
    work = Path(tempfile.mkdtemp(prefix="shots-"))
    os.environ["XDG_CACHE_HOME"] = str(work / "cache")  # the search index of this run, not the user's
    copy = work / "chats" / "coding-task.jsonl"
    copy.parent.mkdir(parents=True)
    shutil.copyfile(REPO / samples / "coding-task.jsonl", copy)
    parent = with_subagent(work / "delegating" / "chats", samples)
    shots = [
        ("session-view", samples / "long-migration.jsonl", keys()),
        ("split-moved", samples / "long-migration.jsonl", keys("right_square_bracket", "right_square_bracket")),
        ("turn-detail", samples / "coding-task.jsonl", keys("home", "down", "down", "down", "down")),
        ("compaction-final", samples / "coding-task.jsonl", keys("c")),
        ("compaction-diff", samples / "coding-task.jsonl", keys("c", "3")),
        ("compaction-facts", samples / "long-migration.jsonl", keys("c", "5")),
        ("previous-to-new", samples / "after-compression.jsonl", keys("c", "4")),
        ("apply-confirm", copy, keys("c", "a")),
        ("agentic-split", samples / "coding-task.jsonl", keys("left_curly_bracket")),
        ("run-dialog", samples / "coding-task.jsonl", keys("f", *"the parser", "tab", "enter", "down", "enter")),
        ("staged-stages", samples / "coding-task.jsonl", keys("S", "c")),
        ("compare", samples / "coding-task.jsonl", keys("C")),
        ("help", samples / "coding-task.jsonl", keys("question_mark")),
        ("palette", samples / "coding-task.jsonl", keys("ctrl+p")),
        ("session-list", samples, keys()),
        ("search", samples / "long-migration.jsonl", keys("slash", *"auth", "enter")),
        ("filter-largest", samples / "long-migration.jsonl", keys("F", *"tool result", "enter", "o")),
        ("session-search", samples, keys("s", *"CHANGELOG", "enter")),
        ("figures", samples / "long-migration.jsonl", keys("i")),
        ("subagents", parent, keys("b")),
        ("masking", samples / "long-migration.jsonl",
         keys("colon", *str(first_masked_turn(samples / "long-migration.jsonl")), "enter")),
    ]
    antigravity = ANTIGRAVITY_SAMPLE.relative_to(REPO)  # scripts/make_antigravity_sample.py writes it
    shots.append(("antigravity-checkpoints", antigravity, keys("t", "down")))
    small = [  # the smallest terminal the app is made for
        ("session-view-80x24", samples / "long-migration.jsonl", keys()),
        ("turn-detail-80x24", samples / "coding-task.jsonl", keys("home", "down", "d")),
        ("antigravity-80x24", antigravity, keys()),
        ("antigravity-checkpoints-80x24", antigravity, keys("t", "down")),
        ("antigravity-preview-80x24", antigravity, keys("t", "down", "tab", "pagedown")),
        ("context-view-80x24", samples / "long-migration.jsonl", keys("v")),
        ("session-browser-80x24", samples, keys()),
    ]
    large = [  # a big terminal
        ("context-view-200x50", samples / "long-migration.jsonl", keys("v", "f")),
        ("session-browser-200x50", samples, keys()),
    ]
    wanted = set(sys.argv[1:])
    converter = None
    try:
        for name, path, steps, size in [(*shot, SIZE) for shot in shots] + [(*shot, (80, 24)) for shot in small] + \
                [(*shot, (200, 50)) for shot in large]:
            if wanted and name not in wanted:
                continue
            svg = await shoot(name, path, steps, size)
            converter = to_png(svg) or converter
            print(f"wrote {svg.relative_to(REPO)}" + (" (+ .png)" if svg.with_suffix(".png").exists() else ""))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"PNG converter: {converter or 'none found (install librsvg2-bin or cairosvg)'}")
    return 0


def browser_shot() -> int:
    """The real page of ``session-inspector --serve``, taken the way tests/test_serve.py loads it."""
    from tests.browser import CHROMIUM, Chromium, free_port, served, served_url

    if not CHROMIUM.is_file():
        print(f"{CHROMIUM} is absent (Debian: apt-get install chromium)", file=sys.stderr)
        return 2
    sample = REPO / "sample_sessions" / "coding-task.jsonl"
    work = Path(tempfile.mkdtemp(prefix="browser-shot-"))
    port = free_port()
    try:
        with served(sample, port, work / "serve.log", "--no-watch", "--threshold", "0.5"):
            browser = Chromium(work / "chromium", width=1600, height=1000)
            try:
                page = browser.open(served_url(work / "serve.log"))  # the printed URL, with its token
                # the split line is drawn once the session is read (the table's header comes before it)
                found, screen = browser.wait_for_text(page, [sample.name, "est. tok", "Compact", "summarise 0-"])
                if not found:
                    print(f"the page never showed the session:\n{screen}", file=sys.stderr)
                    return 1
                browser.screenshot(page, OUT / "browser.png")
            finally:
                browser.close()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"wrote {(OUT / 'browser.png').relative_to(REPO)}")
    return export_shot()


def export_shot() -> int:
    """``session-inspector export --format html --compaction`` of a sample, as Chromium draws the page."""
    from tests.browser import Chromium

    sample = REPO / "sample_sessions" / "coding-task.jsonl"
    work = Path(tempfile.mkdtemp(prefix="export-shot-"))
    try:
        page_file = work / "coding-task.html"
        subprocess.run([sys.executable, "-m", "inspector", "export", str(sample), "--format", "html", "--compaction",
                        "--threshold", "0.5", "--out", str(page_file)], check=True, cwd=REPO)
        browser = Chromium(work / "chromium", width=1280, height=900)
        try:
            browser.screenshot(browser.open(page_file.as_uri()), OUT / "export-html.png")
        finally:
            browser.close()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"wrote {(OUT / 'export-html.png').relative_to(REPO)}")
    return 0


def with_subagent(chats: Path, samples: Path) -> Path:
    """A copy of coding-task.jsonl in ``chats`` with one subagent session under it, written where and
    as Gemini CLI writes them (``chats/<parent session id>/<id>.jsonl``, ``kind: subagent``)."""
    import json

    chats.mkdir(parents=True)
    parent = chats / "coding-task.jsonl"
    shutil.copyfile(REPO / samples / "coding-task.jsonl", parent)
    parent_id = json.loads(parent.read_text(encoding="utf-8").splitlines()[0])["sessionId"]
    lines = (REPO / samples / "gemini-cli-0.61-tool-calls.jsonl").read_text(encoding="utf-8").splitlines()
    meta = {**json.loads(lines[0]), "sessionId": "5b0e7c2a-subagent", "kind": "subagent"}
    agent = chats / parent_id / "5b0e7c2a.jsonl"
    agent.parent.mkdir()
    agent.write_text("\n".join([json.dumps(meta), *lines[1:]]) + "\n", encoding="utf-8")
    return parent


def first_masked_turn(path: Path) -> int:
    """The first turn whose tool output masking would replace next turn (the masking shot's cursor)."""
    from inspector.analysis import analyze
    from inspector.compaction.masking import masking_of
    from inspector.session import load

    session = load(path)
    plan = masking_of(session, analyze(session, threshold=0.5).turns)
    if not plan.parts:
        raise SystemExit(f"{path}: masking would replace nothing; pick another sample for the masking shot")
    return min(part.turn for part in plan.parts)


if __name__ == "__main__":
    if "--browser" in sys.argv[1:]:
        raise SystemExit(browser_shot())
    raise SystemExit(asyncio.run(main()))
