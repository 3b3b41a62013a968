"""compress() against the reference's ChatCompressionService.compress(), run in Node.

Every sample session is compressed by both sides with the same fixed summary
texts: the reference gets a fake chat (its history and a chosen last prompt
count) and a fake config whose base LLM client answers with those texts; the
Python side gets a summariser that answers with the same texts and the same
original token count (``original_tokens=``).  Statuses, token counts, the new
history (kept turns included, byte for byte as JSON.stringify writes them) and
the history each summariser call received must be equal.  All cases go to one
Node process in one request.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from inspector.analysis import analyze_turns
from inspector.compaction.compress import CompressionStatus, CompressOptions, compress
from inspector.compaction.view import HistoryView
from inspector.context import ContextFigures, Verdict, verdict
from inspector.jsjson import js_stringify
from inspector.session import SessionError, history, load
from inspector.session.history import contents_to_turns
from inspector.tokens import estimate_contents
from tests.conftest import write_agent_run
from tests.reference.install import Missing, reference_src

pytestmark = pytest.mark.differential

REPO = Path(__file__).resolve().parents[1]
SAMPLES = sorted(p for p in (REPO / "sample_sessions").glob("*") if p.suffix in (".json", ".jsonl"))
SNAPSHOT = (
    "<state_snapshot>\n<overall_goal>\nFix the thing.\n</overall_goal>\n<active_constraints>\n- Keep it small.\n"
    "</active_constraints>\n<key_knowledge>\n- `make test` runs the tests.\n</key_knowledge>\n</state_snapshot>"
)
MODEL = "gemini-2.5-pro"

NODE_SCRIPT = r"""
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
const chunks = [];
for await (const chunk of process.stdin) chunks.push(chunk);
const request = JSON.parse(Buffer.concat(chunks).toString('utf8'));
const load = (rel) => import(pathToFileURL(path.join(request.base, rel)).href);
const compression = await load('context/chatCompressionService.js');
const turn = await load('core/turn.js');
const envMod = await load('utils/environmentContext.js');
const geminiChat = await load('core/geminiChat.js');
for (const name of ['log', 'info', 'debug', 'warn', 'error']) console[name] = () => {};

function fakeConfig(c, calls) {
  let counter = 0;
  const config = {
    getHookSystem: () => undefined,
    getCompressionThreshold: async () => c.threshold,
    getNextCompressionTruncationId: () => ++counter,
    getTruncateToolOutputThreshold: () => c.truncate_chars,
    storage: { getProjectTempDir: () => c.temp_dir },
    getContentGenerator: () => ({ countTokens: async () => { throw new Error('offline'); } }),
    getIncludeDirectoryTree: () => false,
    getSessionMemory: () => '',
    getActiveModel: () => c.model,
    getApprovedPlanPath: () => undefined,
    getUsageStatisticsEnabled: () => false,
    getSessionId: () => 'differential',
    getExperiments: () => undefined,
    getContentGeneratorConfig: () => undefined,
    isInteractive: () => false,
    getTelemetryEnabled: () => false,
    getTelemetryLogPromptsEnabled: () => false,
    getBaseLlmClient: () => ({
      generateContent: async (req) => {
        calls.push({ contents: JSON.stringify(req.contents), system: req.systemInstruction.text });
        const text = c.replies[calls.length - 1] ?? '';
        return { candidates: [{ content: { role: 'model', parts: [{ text }] } }] };
      },
    }),
  };
  config.config = config;
  return config;
}

const answers = [];
for (const c of request.cases) {
  const calls = [];
  const config = fakeConfig(c, calls);
  // The real getHistory, for a configured model that keeps the turns as recorded (the joined view's
  // split is compared in test_history_view.py); compress() gets this chat's curated history.
  const items = c.history.map((content, i) => ({ id: `t${i}`, content }));
  const holder = {
    agentHistory: { get: () => items },
    context: { config: { isContextManagementEnabled: () => false, getModel: () => 'auto-gemini-2.5' } },
  };
  const turnsOf = geminiChat.GeminiChat.prototype.getHistoryTurns;
  const chat = {
    getHistory: (curated) => turnsOf.call(holder, curated).map((t) => t.content),
    getLastPromptTokenCount: () => c.last_prompt,
  };
  try {
    const service = new compression.ChatCompressionService();
    const r = await service.compress(chat, 'diff', c.force, c.model, config, c.has_failed);
    const env = (await envMod.getInitialChatHistory(config, []))[0].content;
    answers.push({
      ok: true,
      status: turn.CompressionStatus[r.info.compressionStatus],
      original: r.info.originalTokenCount,
      new: r.info.newTokenCount,
      history: r.newHistory ? r.newHistory.map((x) => JSON.stringify(x)) : null,
      env,
      calls,
    });
  } catch (e) {
    answers.push({ ok: false, error: String(e && e.stack || e) });
  }
}
process.stdout.write(JSON.stringify(answers));
"""


class Fixed:
    """A summariser answering with fixed texts, recording what it was sent."""

    name = "fixed"
    model = None

    def __init__(self, replies: list[str]) -> None:
        self.replies = list(replies)
        self.calls: list[list[dict[str, Any]]] = []

    async def summarise(self, system_prompt: str, contents: list[dict[str, Any]]) -> str:
        self.calls.append(contents)
        return self.replies[len(self.calls) - 1] if len(self.calls) <= len(self.replies) else ""


def _cases(tmp: Path) -> list[dict[str, Any]]:
    cases: list[dict[str, Any]] = []
    for path in SAMPLES:
        try:
            contents = [t.content for t in history(load(path))]
        except SessionError:
            continue
        estimate = estimate_contents(contents)
        base = {"file": path.name, "history": contents, "model": MODEL, "threshold": 0.5,
                "truncate_chars": 40_000, "temp_dir": str(tmp / path.stem)}
        cases += [
            {**base, "what": "forced", "force": True, "has_failed": False, "last_prompt": estimate + 500,
             "replies": [SNAPSHOT, SNAPSHOT + "\n"]},
            {**base, "what": "under threshold", "force": False, "has_failed": False, "last_prompt": 1_000,
             "replies": [SNAPSHOT, SNAPSHOT]},
            {**base, "what": "over threshold", "force": False, "has_failed": False, "last_prompt": 600_000,
             "replies": ["  draft only  ", "   \n "]},
            {**base, "what": "failed before", "force": False, "has_failed": True, "last_prompt": 600_000,
             "replies": []},
            {**base, "what": "failed before, small", "force": False, "has_failed": True, "last_prompt": 0,
             "threshold": 1e-9, "replies": []},
            {**base, "what": "blank", "force": True, "has_failed": False, "last_prompt": estimate,
             "replies": ["", " "]},
            {**base, "what": "inflated", "force": True, "has_failed": False, "last_prompt": 3,
             "replies": [SNAPSHOT, SNAPSHOT]},
        ]
    # One prompt and an agent still calling tools, over the threshold: nothing comes before the split.
    run = [t.content for t in history(load(write_agent_run(tmp / "agent-run" / "agent-run.jsonl")))]
    cases.append({"file": "agent-run (made here)", "what": "over threshold, one prompt", "history": run,
                  "model": MODEL, "threshold": 0.5, "truncate_chars": 40_000, "temp_dir": str(tmp / "agent-run"),
                  "force": False, "has_failed": False, "last_prompt": 600_000, "replies": [SNAPSHOT, SNAPSHOT]})
    return cases


@pytest.fixture(scope="module")
def reference_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    found = reference_src()
    if isinstance(found, Missing):
        pytest.skip(found.reason)
    tmp = tmp_path_factory.mktemp("differential-compress")
    cases = _cases(tmp)
    if not cases:
        pytest.skip("no sample sessions in sample_sessions/")
    script = tmp / "compress_cases.mjs"
    script.write_text(NODE_SCRIPT, encoding="utf-8")
    home = tmp / "home"
    home.mkdir()
    done = subprocess.run(
        ["node", str(script)], input=json.dumps({"base": str(found), "cases": cases}).encode(),
        capture_output=True, timeout=120, env={**os.environ, "HOME": str(home), "GEMINI_CLI_HOME": str(home)},
    )
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    return cases, json.loads(done.stdout)


def _json_history(contents: list[dict[str, Any]] | None) -> list[str] | None:
    return None if contents is None else [js_stringify(c) for c in contents]


async def test_compress_matches_the_reference(reference_run: tuple[list[dict[str, Any]], list[dict[str, Any]]]) -> None:
    cases, answers = reference_run
    assert len(answers) == len(cases)
    seen_statuses = set()
    seen_verdicts: set[Verdict] = set()
    # the reference's acknowledgement turn (its own wording), so that token counts compare exactly
    ack = next(json.loads(a["history"][1])["parts"][0]["text"] for a in answers
               if a.get("status") == "COMPRESSED")
    for case, ref in zip(cases, answers, strict=True):
        label = f"{case['file']} / {case['what']}"
        assert ref["ok"], f"{label}: the reference threw: {ref.get('error')}"
        fixed = Fixed(case["replies"])
        result = await compress(case["history"], fixed, CompressOptions(model=case["model"], force=case["force"],
                                                                        threshold=case["threshold"],
                                                                        has_failed_attempt=case["has_failed"],
                                                                        original_tokens=case["last_prompt"],
                                                                        environment=ref["env"],
                                                                        temp_dir=case["temp_dir"], acknowledgement=ack,
                                                                        view=HistoryView.AS_RECORDED))
        seen_statuses.add(ref["status"])
        assert result.status == CompressionStatus[ref["status"]], label
        assert result.original_token_count == ref["original"], label
        assert result.new_token_count == ref["new"], label
        assert _json_history(result.new_history) == ref["history"], label
        # what each summariser call received: the same history, the same shape of request
        assert len(fixed.calls) == len(ref["calls"]), label
        for ours, theirs in zip(fixed.calls, ref["calls"], strict=True):
            sent = json.loads(theirs["contents"])
            assert [js_stringify(c) for c in ours[:-1]][: len(sent) - 1] == \
                [js_stringify(c) for c in sent[:-1]][: len(ours) - 1], label
            assert [c["role"] for c in ours] == [c["role"] for c in sent], label
            assert "<state_snapshot>" in theirs["system"]
        if not case["force"] and not case["has_failed"]:
            # what analyze and the app say Gemini CLI would do before the next prompt: try to compress,
            # or nothing (NOOP) because the prompt is under the threshold or nothing comes before the split
            figures = analyze_turns(contents_to_turns(case["history"]), model=case["model"],
                                    threshold=case["threshold"], temp_dir=Path(case["temp_dir"]))
            context = ContextFigures(case["last_prompt"], figures.context.estimated_tokens, figures.token_limit,
                                     case["threshold"])
            said = verdict(context, figures.compress_split_point)
            seen_verdicts.add(said)
            assert (said is Verdict.COMPRESS) == (ref["status"] != "NOOP"), f"{label}: {said}"
    assert seen_verdicts == set(Verdict)
    # the sample sessions drive every branch the fixed replies can reach
    assert {"COMPRESSED", "NOOP", "CONTENT_TRUNCATED", "COMPRESSION_FAILED_EMPTY_SUMMARY",
            "COMPRESSION_FAILED_INFLATED_TOKEN_COUNT"} <= seen_statuses
