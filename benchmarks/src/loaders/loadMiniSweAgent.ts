import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { InvalidArgumentError } from 'session-compaction';
import type { RecordedDataset, RecordedEvent, RecordedProbe, RecordedSession } from '../recorded/RecordedSession.js';
import { asArray, asRecord, readJson } from './readJson.js';

/**
 * mini-swe-agent + DeepSeek runs: `<dir>/output/<run>/<id>/<id>.traj.json`, with the SWE-bench harness
 * verdicts in `<dir>/logs/run_evaluation/<eval run>/<model>/<id>/report.json`.
 */
export function loadMiniSweAgent(dir: string): RecordedDataset {
  const outputDir = join(dir, 'output');
  if (!existsSync(outputDir)) throw new InvalidArgumentError(`${dir} has no output/ directory of mini-swe-agent runs`);
  const resolved = readResolvedFlags(join(dir, 'logs', 'run_evaluation'));
  const sessions: RecordedSession[] = [];
  for (const run of readdirSync(outputDir).sort()) {
    const runDir = join(outputDir, run);
    for (const id of readdirSync(runDir).sort()) {
      const file = join(runDir, id, `${id}.traj.json`);
      if (!existsSync(file)) continue;
      sessions.push(convertMiniSweTrajectory(asRecord(readJson(file), file), run, resolved.get(id), file));
    }
  }
  return {
    name: 'mini-swe-agent',
    source: 'mini-swe-agent + deepseek-chat runs (SWE-agent/mini-swe-agent PR #814, MIT)',
    sessions,
  };
}

function readResolvedFlags(evalRoot: string): Map<string, boolean> {
  const out = new Map<string, boolean>();
  if (!existsSync(evalRoot)) return out;
  for (const evalRun of readdirSync(evalRoot)) {
    for (const model of readdirSync(join(evalRoot, evalRun))) {
      for (const id of readdirSync(join(evalRoot, evalRun, model))) {
        const file = join(evalRoot, evalRun, model, id, 'report.json');
        if (!existsSync(file)) continue;
        const entry = asRecord(readJson(file), file)[id];
        if (entry !== null && typeof entry === 'object') out.set(id, (entry as { resolved?: unknown }).resolved === true);
      }
    }
  }
  return out;
}

/** As the recording defines it: the `exit` record becomes the tool result of the dangling submit call. */
export function convertMiniSweTrajectory(
  traj: Record<string, unknown>,
  run: string,
  resolved: boolean | undefined,
  where: string,
): RecordedSession {
  const instanceId = String(traj.instance_id);
  const info = asRecord(traj.info ?? {}, `${where}.info`);
  const messages = asArray(traj.messages, `${where}.messages`).map((m, i) => asRecord(m, `${where}.messages[${i}]`));
  const events: RecordedEvent[] = [];
  const callNames = new Map<string, string>();
  let lastCallId: string | undefined;
  let firstCreated: string | undefined;
  for (const m of messages) {
    const extra = (m.extra ?? {}) as { timestamp?: unknown; response?: { created?: unknown } };
    if (firstCreated === undefined && m.role === 'assistant' && typeof extra.response?.created === 'number') {
      firstCreated = new Date(extra.response.created * 1000).toISOString();
    }
  }
  for (const [j, m] of messages.entries()) {
    const extra = (m.extra ?? {}) as { timestamp?: unknown };
    const timestamp = typeof extra.timestamp === 'number' ? new Date(extra.timestamp * 1000).toISOString() : firstCreated;
    const content = typeof m.content === 'string' ? m.content : '';
    if (m.role === 'exit') {
      if (lastCallId !== undefined && !events.some((e) => e.role === 'tool' && e.toolCallId === lastCallId)) {
        events.push({ role: 'tool', content, toolCallId: lastCallId, name: callNames.get(lastCallId) ?? 'bash' });
      }
      continue;
    }
    const event: RecordedEvent = { role: String(m.role) as RecordedEvent['role'], content };
    if (timestamp !== undefined) event.timestamp = timestamp;
    if (m.role === 'assistant' && Array.isArray(m.tool_calls) && m.tool_calls.length > 0) {
      event.toolCalls = m.tool_calls.map((rawCall, k) => {
        const call = asRecord(rawCall, `${where}.messages[${j}].tool_calls[${k}]`);
        const fn = asRecord(call.function, `${where}.messages[${j}].tool_calls[${k}].function`);
        const id = String(call.id);
        callNames.set(id, String(fn.name));
        lastCallId = id;
        return { id, name: String(fn.name), arguments: String(fn.arguments) };
      });
    }
    if (m.role === 'tool') {
      event.toolCallId = String(m.tool_call_id);
      event.name = callNames.get(event.toolCallId) ?? 'bash';
    }
    events.push(event);
  }
  const submission = typeof info.submission === 'string' ? info.submission : '';
  const stats = (info.model_stats ?? {}) as { instance_cost?: unknown; api_calls?: unknown };
  return {
    sessionId: `${run}/${instanceId}`,
    events,
    probes: deriveMiniSweProbes(events, submission),
    meta: {
      exit_status: info.exit_status,
      submission,
      instance_cost: stats.instance_cost,
      api_calls: stats.api_calls,
      resolved: resolved ?? null,
    },
  };
}

/** One probe per file the submitted patch touches; evidence = tool outputs that mention the path. */
function deriveMiniSweProbes(events: readonly RecordedEvent[], submission: string): RecordedProbe[] {
  const probes: RecordedProbe[] = [];
  const paths = new Set<string>();
  for (const m of submission.matchAll(/^diff --git a\/(\S+) b\//gm)) paths.add(m[1]!);
  for (const path of paths) {
    const evidence: number[] = [];
    events.forEach((e, i) => {
      if (e.role === 'tool' && e.content.includes(path)) evidence.push(i);
    });
    if (evidence.length > 0)
      probes.push({
        question: 'Which file did the fix modify?',
        answer: path,
        evidenceEventIndexes: evidence,
        category: 'patched-file',
      });
  }
  return probes;
}
