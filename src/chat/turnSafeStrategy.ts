import type { CompactionRequest } from '../compaction/CompactionRequest.js';
import { CompactionResult } from '../compaction/CompactionResult.js';
import type { CompactionStrategy } from '../compaction/CompactionStrategy.js';
import type { Logger } from '../logging.js';
import type { SessionEvent } from '../session/SessionEvent.js';

function callIds(events: readonly SessionEvent[]): { calls: Set<string>; results: Set<string> } {
  const calls = new Set<string>();
  const results = new Set<string>();
  for (const e of events) {
    const m = e.message;
    if (m.type === 'assistant') for (const c of m.toolCalls ?? []) calls.add(c.id);
    else if (m.type === 'tool') for (const r of m.responses) results.add(r.id);
  }
  return { calls, results };
}

/**
 * Why `result` must not be committed inside a turn, or null: it archives (or drops) an event of `keep` — the
 * turn's input — or it keeps a tool result whose call it archived, or a call whose only result it archived.
 */
export function turnSafetyViolation(
  window: readonly SessionEvent[],
  result: CompactionResult,
  keep: ReadonlySet<string>,
): string | null {
  const kept = new Set(result.compactedEvents.map((e) => e.id));
  for (const e of window) if (keep.has(e.id) && !kept.has(e.id)) return `it would archive the turn's input (${e.id})`;
  const archived = callIds(result.archivedEvents);
  const retained = callIds(result.compactedEvents);
  for (const id of retained.results) {
    if (archived.calls.has(id) && !retained.calls.has(id)) return `it would keep the result of tool call ${id} without the call`;
  }
  for (const id of retained.calls) {
    if (archived.results.has(id) && !retained.results.has(id)) return `it would keep tool call ${id} without its result`;
  }
  return null;
}

/**
 * `strategy` for a compaction inside a turn (before a tool loop's next model call): a result that would
 * separate a tool call from its result or archive the turn's input (`keep`) is not committed — nothing
 * changes, and it is logged. Everything else is inherited from `strategy` (its name in compaction records
 * and telemetry, its summariser), so that the service sees the configured strategy.
 */
export function turnSafeStrategy(
  strategy: CompactionStrategy,
  keep: ReadonlySet<string>,
  logger: Logger,
): CompactionStrategy {
  const safe = Object.create(strategy) as CompactionStrategy;
  safe.compact = async (request: CompactionRequest) => {
    const result = await strategy.compact(request);
    if (result.archivedEvents.length === 0) return result;
    const violation = turnSafetyViolation(request.events, result, keep);
    if (violation === null) return result;
    logger.warn('a compaction inside a turn was not committed', { sessionId: request.session.id, reason: violation });
    // A summariser that ran was paid: its usage stays on the no-op.
    return CompactionResult.noop(request.events).withUsage(result.usage);
  };
  return safe;
}
