// The reference doing the work of `session-inspector analyze --json FILE`:
// load with loadConversationRecord, convert with convertSessionToClientHistory,
// per-turn estimateTokenCountSync and JSON.stringify lengths, the total, the
// split point, and a JSON report on stdout.
//
//   node bench/ref_analyze.mjs <dist/src folder> FILE > /dev/null
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';

const [base, file] = process.argv.slice(2);
const load = (rel) => import(pathToFileURL(path.join(base, rel)).href);
const { loadConversationRecord } = await load('services/chatRecordingService.js');
const { convertSessionToClientHistory } = await load('utils/sessionUtils.js');
const { estimateTokenCountSync } = await load('utils/tokenCalculation.js');
const { findCompressSplitPoint } = await load('context/chatCompressionService.js');

const record = await loadConversationRecord(file);
const history = convertSessionToClientHistory(record.messages);
const contents = history.map((h) => h.content);
const rows = history.map((h, index) => ({
  index,
  role: h.content.role,
  record_id: h.id,
  estimated_tokens: estimateTokenCountSync(h.content.parts || []),
  json_chars: JSON.stringify(h.content).length,
}));
const report = {
  path: file,
  session_id: record.sessionId,
  history: rows,
  total_estimated_tokens: estimateTokenCountSync(contents.flatMap((c) => c.parts || [])),
  split_point: findCompressSplitPoint(contents, 0.7),
};
process.stdout.write(JSON.stringify(report, null, 2) + '\n');
