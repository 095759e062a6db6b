import { formatEvent, SessionEvent, type Message } from 'session-compaction';
import { coveredIds, estimateEventTokens, isIncompleteReply, METADATA_MASKED_FROM } from 'session-compaction/spi';
import { readSnapshot, type SessionSnapshot } from '../admin/sessionSnapshot.js';
import type { StudioContext } from './StudioContext.js';

/** An error a view answers with a status of its own (400 bad input, 404 no such session, 403 writes off). */
export class StudioError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** Metadata key of a redaction (`service.redactEvent`): the event's content was replaced with a marker. */
const METADATA_REDACTION = 'redaction';
/** Metadata key of a framework's own form of a message (the agent integrations keep it beside the Message). */
const METADATA_NATIVE = 'native';

export function requireParam(params: URLSearchParams, name: string): string {
  const v = params.get(name);
  if (v === null || v.trim() === '') throw new StudioError(400, `the parameter '${name}' is missing`);
  return v;
}

/** The session and its whole log (one consistent read), or 404. */
export async function requireSnapshot(ctx: StudioContext, sessionId: string): Promise<SessionSnapshot> {
  const snapshot = await readSnapshot(ctx.repository, sessionId);
  if (snapshot === null) throw new StudioError(404, `no session '${sessionId}' in ${ctx.where}`);
  return snapshot;
}

/**
 * Whether the framework's stored form of the message is a provider-native compaction item (an OpenAI
 * `compaction` item, an Anthropic `compaction` block): the provider's own summary of earlier turns.
 */
function isNativeCompaction(e: SessionEvent): boolean {
  const native = e.metadata[METADATA_NATIVE] as { value?: unknown } | undefined;
  if (native === undefined || native === null || typeof native !== 'object') return false;
  const found = (v: unknown, depth: number): boolean => {
    if (depth > 6 || v === null || typeof v !== 'object') return false;
    if (Array.isArray(v)) return v.some((x) => found(x, depth + 1));
    const o = v as Record<string, unknown>;
    if (o.type === 'compaction' || o.type === 'compaction_summary') return true;
    return Object.values(o).some((x) => found(x, depth + 1));
  };
  return found(native.value, 0);
}

export type Badge =
  'active' | 'archived' | 'pinned' | 'masked' | 'summary' | 'native compaction' | 'incomplete' | 'redacted' | 'synthetic';

export function badgesOf(e: SessionEvent): Badge[] {
  const badges: Badge[] = [e.archived ? 'archived' : 'active'];
  if (e.isPinned()) badges.push('pinned');
  const masked = typeof e.metadata[METADATA_MASKED_FROM] === 'string';
  if (masked) badges.push('masked');
  if (e.isSynthetic() && !masked) {
    badges.push(typeof e.metadata[SessionEvent.METADATA_COMPACTION_SOURCE] === 'string' ? 'summary' : 'synthetic');
  }
  if (isNativeCompaction(e)) badges.push('native compaction');
  if (isIncompleteReply(e)) badges.push('incomplete');
  if (e.metadata[METADATA_REDACTION] !== undefined) badges.push('redacted');
  return badges;
}

export function roleOf(message: Message): string {
  return message.type;
}

/** The text shown for an event: the library's one rendering (what is counted and sent). */
export function textOf(e: SessionEvent): string {
  return formatEvent(e);
}

export interface ToolLinks {
  /** Per event index: the calls it makes, each with the index of the event holding its result (or null). */
  calls: Map<number, { id: string; name: string; result: number | null }[]>;
  /** Per event index: the results it holds, each with the index of the event that made the call (or null). */
  results: Map<number, { id: string; name: string; call: number | null }[]>;
}

/** Tool calls paired with their results by call id, in log order (the first result after the call answers it). */
export function pairToolCalls(events: readonly SessionEvent[]): ToolLinks {
  const calls: ToolLinks['calls'] = new Map();
  const results: ToolLinks['results'] = new Map();
  const open = new Map<string, { index: number; entry: { id: string; name: string; result: number | null } }>();
  events.forEach((e, index) => {
    const m = e.message;
    if (m.type === 'assistant' && m.toolCalls !== undefined && m.toolCalls.length > 0) {
      const entries = m.toolCalls.map((c) => ({ id: c.id, name: c.name, result: null as number | null }));
      calls.set(index, entries);
      for (const entry of entries) open.set(entry.id, { index, entry });
    } else if (m.type === 'tool') {
      results.set(
        index,
        m.responses.map((r) => {
          const call = open.get(r.id);
          if (call !== undefined && call.entry.result === null) call.entry.result = index;
          return { id: r.id, name: r.name, call: call === undefined ? null : call.index };
        }),
      );
    }
  });
  return { calls, results };
}

/** Token count of one event, as every trigger and strategy counts it. */
export function tokensOf(ctx: StudioContext, e: SessionEvent): number {
  return estimateEventTokens(e, ctx.estimator);
}

export { coveredIds };
