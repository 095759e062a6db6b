import type { RecordedDataset, RecordedEvent, RecordedProbe, RecordedSession } from '../recorded/RecordedSession.js';
import { asArray, asRecord, readJson } from './readJson.js';

/** Shorter values ("yes", "3") would match by accident almost anywhere. */
const MIN_PROBE_VALUE_LENGTH = 5;

/** τ-bench airline trajectories (`gpt-4o-airline.json`), with fact probes derived from the ground-truth actions. */
export function loadTauBench(path: string): RecordedDataset {
  const root = asArray(readJson(path), `${path}: τ-bench root`);
  return {
    name: 'tau-bench',
    source: 'τ-bench airline, GPT-4o trajectories (sierra-research/tau-bench, MIT)',
    sessions: root.map((raw, i) => convertTrajectory(asRecord(raw, `${path}[${i}]`), `${path}[${i}]`)),
  };
}

export function convertTrajectory(item: Record<string, unknown>, where: string): RecordedSession {
  const events: RecordedEvent[] = asArray(item.traj, `${where}.traj`).map((rawMessage, j) => {
    const m = asRecord(rawMessage, `${where}.traj[${j}]`);
    const role = String(m.role) as RecordedEvent['role'];
    const event: RecordedEvent = { role, content: typeof m.content === 'string' ? m.content : '' };
    if (role === 'assistant' && Array.isArray(m.tool_calls) && m.tool_calls.length > 0) {
      event.toolCalls = m.tool_calls.map((rawCall, k) => {
        const call = asRecord(rawCall, `${where}.traj[${j}].tool_calls[${k}]`);
        const fn = asRecord(call.function, `${where}.traj[${j}].tool_calls[${k}].function`);
        return { id: String(call.id), name: String(fn.name), arguments: String(fn.arguments) };
      });
    }
    if (role === 'tool') {
      event.toolCallId = String(m.tool_call_id);
      if (typeof m.name === 'string') event.name = m.name;
    }
    return event;
  });
  const info = asRecord(item.info ?? {}, `${where}.info`);
  const task = asRecord(info.task ?? {}, `${where}.info.task`);
  return {
    sessionId: `tau-airline-gpt4o-t${String(item.task_id)}-r${String(item.trial)}`,
    events,
    probes: deriveTauProbes(events, asArray(task.actions ?? [], `${where}.info.task.actions`)),
    meta: { task_id: item.task_id, trial: item.trial, reward: item.reward, user_id: task.user_id },
  };
}

/**
 * The τ-bench probes: every string leaf (≥ 5 characters) of the ground-truth action arguments becomes a probe
 * whose evidence is the user or tool events that state it verbatim; values nobody stated are skipped.
 */
function deriveTauProbes(events: readonly RecordedEvent[], actions: readonly unknown[]): RecordedProbe[] {
  const probes: RecordedProbe[] = [];
  const seen = new Set<string>();
  for (const rawAction of actions) {
    if (rawAction === null || typeof rawAction !== 'object') continue;
    const action = rawAction as { name?: unknown; kwargs?: unknown };
    const actionName = String(action.name);
    for (const [key, value] of stringLeaves(action.kwargs, '')) {
      // One probe per value: a user id or date needed by two actions is still one thing to remember.
      if (value.length < MIN_PROBE_VALUE_LENGTH || seen.has(value)) continue;
      seen.add(value);
      const evidence: number[] = [];
      events.forEach((e, i) => {
        if ((e.role === 'user' || e.role === 'tool') && e.content.includes(value)) evidence.push(i);
      });
      if (evidence.length === 0) continue;
      probes.push({
        question: `What ${key} is needed for ${actionName}?`,
        answer: value,
        evidenceEventIndexes: evidence,
        category: key,
      });
    }
  }
  return probes;
}

/** [key of the nearest enclosing property, value] for every string leaf. */
function* stringLeaves(value: unknown, key: string): Generator<[string, string]> {
  if (typeof value === 'string') yield [key, value];
  else if (Array.isArray(value)) for (const v of value) yield* stringLeaves(v, key);
  else if (value !== null && typeof value === 'object') for (const [k, v] of Object.entries(value)) yield* stringLeaves(v, k);
}
