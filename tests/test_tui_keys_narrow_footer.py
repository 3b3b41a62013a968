"""At 80 columns the session view's footer keeps "? Help" in view however many keys are offered."""

from __future__ import annotations

import json
import shutil
from itertools import pairwise
from pathlib import Path
from typing import Any

from textual.screen import Screen
from textual.widgets import Footer
from textual.widgets._footer import FooterKey

from tests.snapshot_app import SAMPLES, build_app, session_read, settle

SIZE = (80, 24)


def with_subagent(chats: Path) -> Path:
    """coding-task.jsonl with one subagent session, where and as Gemini CLI writes them
    (``chats/<parent session id>/<id>.jsonl``, ``kind: subagent``)."""
    chats.mkdir(parents=True)
    parent = chats / "coding-task.jsonl"
    shutil.copyfile(SAMPLES / "coding-task.jsonl", parent)
    parent_id = json.loads(parent.read_text(encoding="utf-8").splitlines()[0])["sessionId"]
    lines = (SAMPLES / "gemini-cli-0.61-tool-calls.jsonl").read_text(encoding="utf-8").splitlines()
    meta = {**json.loads(lines[0]), "sessionId": "5b0e7c2a-subagent", "kind": "subagent"}
    agent = chats / parent_id / "5b0e7c2a.jsonl"
    agent.parent.mkdir()
    agent.write_text("\n".join([json.dumps(meta), *lines[1:]]) + "\n", encoding="utf-8")
    return parent


def shown_keys(screen: Screen[Any]) -> dict[str, FooterKey]:
    footer = screen.query_one(Footer)
    keys = {key.description or key.action: key for key in footer.query(FooterKey)
            if all(node.display for node in key.ancestors_with_self if node is not footer.parent)}
    for name, key in keys.items():  # every key shown is whole inside the footer, none past its right edge
        assert footer.region.contains_region(key.region), f"{name!r} is cut off: {key.region} in {footer.region}"
    placed = sorted(keys.items(), key=lambda item: item[1].region.x)
    for (name, key), (after, following) in pairwise(placed):  # nor under another (^p palette sits on top)
        assert key.region.right <= following.region.x, f"{name!r} runs under {after!r}"
    return keys


async def test_help_stays_in_view_with_apply_undo_and_subagents_offered(tmp_path: Path) -> None:
    parent = with_subagent(tmp_path / "chats")
    app = build_app(parent)
    async with app.run_test(size=SIZE) as pilot:
        view = await session_read(pilot)
        await pilot.press("c")
        await settle(pilot)
        await pilot.press("a")
        await settle(pilot)
        await pilot.press("y")  # applied: u can undo it
        await settle(pilot)
        assert app.screen is view and view.can_undo
        await pilot.press("c")  # a new preview: a can apply it
        await settle(pilot)
        await pilot.press("escape")
        await settle(pilot)
        assert app.screen is view and view.preview is not None
        keys = shown_keys(view)
        assert {"Apply", "Undo", "Subagents", "Help", "Compact"} <= set(keys), sorted(keys)
        assert "Detail" not in keys  # it gave way first, and still works
        await pilot.press("d")
        await settle(pilot)
        assert view.has_class("-detail")
        await pilot.press("escape")
        await settle(pilot)
        await pilot.resize_terminal(160, 45)  # room for every key again
        await settle(pilot)
        assert "Detail" in shown_keys(view)

