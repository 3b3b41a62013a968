// A long-lived oracle: Gemini CLI's own modules, answering JSON requests.
//
//   node ref_server.mjs <dist/src folder>
//
// One request per line on stdin, one answer per line on stdout, in order:
//   {"op": "<name>", "id": <anything>, ...arguments}
//   -> {"ok": true, "id": <same>, ...results}  or  {"ok": false, "id": ..., "error": "..."}
// Ops are the functions in OPS below; README.md in this folder lists them and
// says how to add one.  Nothing else is ever written to stdout: console output
// from the reference goes to stderr.

import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as readline from 'node:readline';
import { pathToFileURL } from 'node:url';

for (const name of ['log', 'info', 'debug', 'warn', 'error', 'trace']) {
  console[name] = (...args) => process.stderr.write(args.map(String).join(' ') + '\n');
}

const base = process.argv[2];
if (!base) {
  process.stderr.write('usage: node ref_server.mjs <dist/src folder>\n');
  process.exit(2);
}
const load = (rel) => import(pathToFileURL(path.join(base, rel)).href);

const recording = await load('services/chatRecordingService.js');
const sessionUtils = await load('utils/sessionUtils.js');
const tokenCalc = await load('utils/tokenCalculation.js');
const compression = await load('context/chatCompressionService.js');
const fileUtils = await load('utils/fileUtils.js');
const turn = await load('core/turn.js');
const masking = await load('context/toolOutputMaskingService.js');
const geminiChat = await load('core/geminiChat.js');
const models = await load('config/models.js');

const PRESERVE = 0.3; // COMPRESSION_PRESERVE_THRESHOLD in chatCompressionService.js

// ---------------------------------------------------------------- helpers

/** A /chat save file, read the way Logger.loadCheckpoint reads it. */
function readCheckpoint(text) {
  const parsed = JSON.parse(text);
  if (Array.isArray(parsed)) return { history: parsed };
  if (typeof parsed === 'object' && parsed !== null && 'history' in parsed) return parsed;
  return { history: [] };
}

/** The figures the project reproduces, for one Content[] (``model``: the configured one, default "auto"). */
function measure(contents, model = 'auto') {
  return {
    turns: contents.map((c) => ({
      tokens: tokenCalc.estimateTokenCountSync(c.parts || []),
      json_len: JSON.stringify(c).length,
    })),
    total: tokenCalc.estimateTokenCountSync(contents.flatMap((c) => c.parts || [])),
    split: viewSplit(contents, model),
    raw_split: compression.findCompressSplitPoint(contents, 1 - PRESERVE),
  };
}

/** History as returned to Python: exact JSON text per turn, plus the ids. */
function describeHistory(items) {
  return {
    history: items.map((h) => JSON.stringify(h.content)),
    ids: items.map((h) => h.id ?? null),
  };
}

/**
 * truncateHistoryToBudget is not exported, so drive compress() down the
 * path that returns it: a previous failure, not forced, threshold 0 and an
 * infinite prompt count -> CONTENT_TRUNCATED with the truncated history.
 */
async function budget(contents, maxChars, tempDir) {
  let counter = 0;
  const config = {
    getHookSystem: () => undefined,
    getCompressionThreshold: async () => 0,
    getNextCompressionTruncationId: () => ++counter,
    getTruncateToolOutputThreshold: () => maxChars,
    storage: { getProjectTempDir: () => tempDir },
  };
  const chat = { getHistory: () => contents, getLastPromptTokenCount: () => Infinity };
  const service = new compression.ChatCompressionService();
  const result = await service.compress(chat, 'differential', false, 'gemini-2.5-pro', config, true);
  const truncated = result.newHistory ?? [];
  const status = turn.CompressionStatus[result.info.compressionStatus];
  return { status, truncated, ids_used: counter };
}

function listFiles(dir) {
  const out = [];
  const walk = (d) => {
    if (!fs.existsSync(d)) return;
    for (const entry of fs.readdirSync(d, { withFileTypes: true })) {
      const full = path.join(d, entry.name);
      if (entry.isDirectory()) walk(full);
      else out.push({ path: full, text: fs.readFileSync(full, 'utf8') });
    }
  };
  walk(dir);
  return out.sort((a, b) => (a.path < b.path ? -1 : 1));
}

/**
 * GeminiChat.getHistory(true) of ``contents`` for a configured ``model``: the real method, run on an
 * object holding only what it reads (the history, and a config that names the model and leaves
 * context management off, its default).  Each turn carries the id "t<its index>".
 */
function compressionView(contents, model) {
  const items = contents.map((content, i) => ({ id: `t${i}`, content }));
  const chat = {
    agentHistory: { get: () => items },
    context: { config: { isContextManagementEnabled: () => false, getModel: () => model } },
  };
  return geminiChat.GeminiChat.prototype.getHistoryTurns.call(chat, true);
}

/**
 * Where compression splits ``contents`` for a configured ``model``: findCompressSplitPoint of the
 * view, given as the index in ``contents`` of the first turn the kept part begins with.
 */
function viewSplit(contents, model) {
  const turns = compressionView(contents, model);
  if (turns.length === 0) return 0; // nothing to split (compress stops there)
  const at = compression.findCompressSplitPoint(turns.map((t) => t.content), 1 - PRESERVE);
  if (at === 0) return 0; // all of it kept (with any turn left out before the first)
  return at < turns.length ? Number(String(turns[at].id).slice(1)) : contents.length;
}

/**
 * What compress() does with ``contents`` for the default configured model: getHistory(true), the
 * budget over that, then findCompressSplitPoint, as the first turn of ``contents`` the kept part
 * begins with (the budget changes no turn's place), and the names of the outputs the budget saved.
 */
async function viewBudgetSplit(contents, maxChars) {
  const turns = compressionView(contents, 'auto');
  if (turns.length === 0) return { split: 0, saved: [] };
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ref-view-budget-'));
  try {
    const { truncated } = await budget(turns.map((t) => t.content), maxChars, dir);
    const at = compression.findCompressSplitPoint(truncated, 1 - PRESERVE);
    const saved = listFiles(path.join(dir, fileUtils.TOOL_OUTPUTS_DIR)).map((f) => path.basename(f.path));
    if (at === 0) return { split: 0, saved };
    return { split: at < turns.length ? Number(String(turns[at].id).slice(1)) : contents.length, saved };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

// ---------------------------------------------------------------- ops

const OPS = {
  /** {models} -> {joins}: for each configured model name, whether getHistory(true) joins turns. */
  /**
   * {contents, model} -> {history, first, split}
   * What compression splits: getHistory(true) for a configured ``model``; ``first`` is the index in
   * ``contents`` of each shown turn's first turn, ``split`` findCompressSplitPoint of the view.
   */
  async joins({ models: names }) {
    return { joins: names.map((m) => models.isGemini2Model(m) || models.supportsModernFeatures(m)) };
  },

  async view({ contents, model }) {
    const turns = compressionView(contents, model);
    const shown = turns.map((t) => t.content);
    return {
      history: shown.map((c) => JSON.stringify(c)),
      first: turns.map((t) => Number(String(t.id).slice(1))),
      split: compression.findCompressSplitPoint(shown, 1 - PRESERVE),
    };
  },

  /** {} -> {version, statuses} */
  async ping() {
    return {
      version: process.version,
      statuses: Object.keys(turn.CompressionStatus).filter((k) => Number.isNaN(Number(k))),
    };
  },

  /**
   * {path, measure?} -> {kind, record, messages, history, ids, figures?}
   * kind "session": loadConversationRecord + convertSessionToClientHistory;
   * kind "checkpoint": a /chat save ({history} or a bare array);
   * kind null: the reference could not load it.
   * ``messages`` and ``history`` are JSON texts (exact JSON.stringify output).
   */
  async load({ path: file, measure: wantFigures, as }) {
    let mode = as;
    if (!mode) {
      mode = 'session';
      try {
        const whole = JSON.parse(fs.readFileSync(file, 'utf8'));
        const isCheckpoint =
          Array.isArray(whole) ||
          (typeof whole === 'object' && whole !== null && !('sessionId' in whole) && 'history' in whole);
        if (isCheckpoint) mode = 'checkpoint';
      } catch {
        // not one JSON document: a JSONL recording
      }
    }
    if (mode === 'checkpoint') {
      const contents = readCheckpoint(fs.readFileSync(file, 'utf8')).history;
      const answer = {
        kind: 'checkpoint',
        history: contents.map((c) => JSON.stringify(c)),
        ids: contents.map(() => null),
      };
      if (wantFigures) answer.figures = measure(contents);
      return answer;
    }
    const record = await recording.loadConversationRecord(file);
    if (!record) return { kind: null };
    const { messages, ...rest } = record;
    const items = sessionUtils.convertSessionToClientHistory(messages);
    const answer = {
      kind: 'session',
      record: rest,
      messages: JSON.stringify(messages),
      ...describeHistory(items),
    };
    if (wantFigures) answer.figures = measure(items.map((h) => h.content));
    return answer;
  },

  /** {messages, measure?} -> {history, ids, figures?} (convertSessionToClientHistory) */
  async convert({ messages, measure: wantFigures }) {
    const items = sessionUtils.convertSessionToClientHistory(messages);
    const answer = describeHistory(items);
    if (wantFigures) answer.figures = measure(items.map((h) => h.content));
    return answer;
  },

  /** {contents, model?} -> {turns: [{tokens, json_len}], total, split, raw_split} */
  async measure({ contents, model }) {
    return measure(contents, model ?? 'auto');
  },

  /** {parts} -> {tokens} (estimateTokenCountSync) */
  async estimate({ parts }) {
    return { tokens: tokenCalc.estimateTokenCountSync(parts) };
  },

  /** {value, indent?} -> {text, length} (JSON.stringify) */
  async stringify({ value, indent }) {
    const text = JSON.stringify(value, null, indent ?? undefined);
    return { text, length: text === undefined ? null : text.length };
  },

  /** {content, output_file, max_chars} -> {text} (formatTruncatedToolOutput) */
  async format_truncated({ content, output_file: outputFile, max_chars: maxChars }) {
    return { text: fileUtils.formatTruncatedToolOutput(content, outputFile, maxChars) };
  },

  /**
   * {contents, max_chars, temp_dir?} -> {status, history, split, files, ids_used}
   * truncateHistoryToBudget through compress(); ``files`` are the saved
   * outputs ({path, text}); ``split`` is findCompressSplitPoint on the result.
   */
  async budget({ contents, max_chars: maxChars, temp_dir: tempDir }) {
    const dir = tempDir ?? fs.mkdtempSync(path.join(os.tmpdir(), 'ref-budget-'));
    try {
      const { status, truncated, ids_used } = await budget(contents, maxChars, dir);
      const viewed = await viewBudgetSplit(contents, maxChars);
      return {
        status,
        history: truncated.map((c) => JSON.stringify(c)),
        split: viewed.split,
        view_saved: viewed.saved,
        raw_split: compression.findCompressSplitPoint(truncated, 1 - PRESERVE),
        files: listFiles(path.join(dir, fileUtils.TOOL_OUTPUTS_DIR)),
        ids_used,
      };
    } finally {
      if (!tempDir) fs.rmSync(dir, { recursive: true, force: true });
    }
  },

  /**
   * {contents, settings?, temp_dir?, session_id?, random?, now?}
   *   -> {masked_count, tokens_saved, parts, history, files, tail}
   * ToolOutputMaskingService.mask on ``contents``; ``settings`` are
   * {protectionThresholdTokens, minPrunableThresholdTokens, protectLatestTurn}
   * (the service's defaults when absent).  Math.random returns ``random`` and
   * Date.now ``now`` during the call, so the saved files' names are known;
   * ``tail`` is the random part of the names that gives.  ``parts`` are the
   * [turn, part] the service replaced, newest first.
   */
  async mask({ contents, settings, temp_dir: tempDir, session_id: sessionId, random, now }) {
    const dir = tempDir ?? fs.mkdtempSync(path.join(os.tmpdir(), 'ref-mask-'));
    const maskingConfig = {
      protectionThresholdTokens: masking.DEFAULT_TOOL_PROTECTION_THRESHOLD,
      minPrunableThresholdTokens: masking.DEFAULT_MIN_PRUNABLE_TOKENS_THRESHOLD,
      protectLatestTurn: masking.DEFAULT_PROTECT_LATEST_TURN,
      ...(settings ?? {}),
    };
    const config = {
      getToolOutputMaskingConfig: async () => maskingConfig,
      storage: { getProjectTempDir: () => dir },
      getSessionId: () => sessionId ?? '',
      getUsageStatisticsEnabled: () => false,
    };
    const realRandom = Math.random;
    const realNow = Date.now;
    const fixed = random ?? 0.123456789;
    if (random !== null) Math.random = () => fixed;
    if (now !== null) Date.now = () => now ?? 1111111111111;
    try {
      const result = await new masking.ToolOutputMaskingService().mask(contents, config);
      const parts = [];
      for (let i = contents.length - 1; i >= 0; i--) {
        const before = contents[i].parts || [];
        const after = result.newHistory[i].parts || [];
        for (let j = before.length - 1; j >= 0; j--) if (before[j] !== after[j]) parts.push([i, j]);
      }
      return {
        masked_count: result.maskedCount,
        tokens_saved: result.tokensSaved,
        parts,
        history: result.newHistory.map((c) => JSON.stringify(c)),
        files: listFiles(path.join(dir, masking.TOOL_OUTPUTS_DIR)),
        tail: fixed.toString(36).substring(7),
      };
    } finally {
      Math.random = realRandom;
      Date.now = realNow;
      if (!tempDir) fs.rmSync(dir, { recursive: true, force: true });
    }
  },
};

// ---------------------------------------------------------------- loop

const out = (obj) =>
  new Promise((resolve) => process.stdout.write(JSON.stringify(obj) + '\n', resolve));
const rl = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
await out({ ok: true, id: 'ready', ready: true });
for await (const line of rl) {
  if (!line.trim()) continue;
  let request;
  try {
    request = JSON.parse(line);
  } catch (err) {
    await out({ ok: false, id: null, error: `bad request: ${err.message}` });
    continue;
  }
  const handler = OPS[request.op];
  if (!handler) {
    await out({ ok: false, id: request.id ?? null, error: `unknown op: ${request.op}` });
    continue;
  }
  try {
    const result = await handler(request);
    await out({ ok: true, id: request.id ?? null, ...result });
  } catch (err) {
    await out({ ok: false, id: request.id ?? null, error: `${err?.name ?? 'Error'}: ${err?.message ?? err}` });
  }
}
