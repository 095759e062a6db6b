import type { CompactionRequest } from '../compaction/CompactionRequest.js';
import { CompactionResult } from '../compaction/CompactionResult.js';
import type { CompactionStrategy } from '../compaction/CompactionStrategy.js';
import type { Logger } from '../logging.js';
import { coveredIds } from '../compaction/coverage.js';
import type { SessionEvent } from '../session/SessionEvent.js';
import { isTurnStart } from '../session/turns.js';
import { estimateEventsTokens } from '../tokens/eventTokens.js';
import type { TokenCountEstimator } from '../tokens/TokenCountEstimator.js';

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
 * `strategy` for a compaction inside a turn (before a tool loop's next model call, or after a reply whose
 * tool calls are still to be answered). The turn's input — its opening user message, and `keep` (what this
 * request brought, the pending calls) — stays: a result that merely archives it gets it back in place (it is
 * a message of its own, no tool pair is involved); a result that would summarise it away, or separate a tool
 * call from its result, is not committed: nothing changes, and it is logged. Everything else is inherited
 * from `strategy` (its name in compaction records and telemetry, its summariser), so that the service sees
 * the configured strategy.
 */
export function turnSafeStrategy(
  strategy: CompactionStrategy,
  keep: ReadonlySet<string>,
  logger: Logger,
  estimator: TokenCountEstimator,
): CompactionStrategy {
  const safe = Object.create(strategy) as CompactionStrategy;
  safe.compact = async (request: CompactionRequest) => {
    const proposed = await strategy.compact(request);
    if (proposed.archivedEvents.length === 0) return proposed;
    const opener = [...request.events].reverse().find(isTurnStart);
    const protect = opener === undefined ? keep : new Set([...keep, opener.id]);
    const result = restored(request.events, proposed, protect, estimator);
    const violation =
      result === null ? "it would summarise the turn's input away" : turnSafetyViolation(request.events, result, protect);
    if (violation === null && result !== null) return result;
    logger.warn('a compaction inside a turn was not committed', { sessionId: request.session.id, reason: violation });
    // A summariser that ran was paid: its usage stays on the no-op.
    return CompactionResult.noop(request.events).withUsage(proposed.usage);
  };
  return safe;
}

/**
 * `result` with the protected events it merely archived put back in their place in the window; null when a
 * summary it writes covers one of them (putting it back would tell the model the same thing twice).
 */
function restored(
  window: readonly SessionEvent[],
  result: CompactionResult,
  protect: ReadonlySet<string>,
  estimator: TokenCountEstimator,
): CompactionResult | null {
  const back = result.archivedEvents.filter((e) => protect.has(e.id) && !e.isSynthetic());
  if (back.length === 0) return result;
  const before = new Set(window.map((e) => e.id));
  const covered = new Set(result.compactedEvents.filter((e) => e.isSynthetic() && !before.has(e.id)).flatMap(coveredIds));
  if (back.some((e) => covered.has(e.id))) return null;
  const archived = result.archivedEvents.filter((e) => !protect.has(e.id));
  if (archived.length === 0) return CompactionResult.noop(window).withUsage(result.usage);
  const position = new Map(window.map((e, i) => [e.id, i]));
  const compacted = [...result.compactedEvents];
  for (const e of back) {
    const at = compacted.findIndex((c) => !c.isSynthetic() && (position.get(c.id) ?? -1) > position.get(e.id)!);
    compacted.splice(at < 0 ? compacted.length : at, 0, e);
  }
  const saved = Math.max(0, result.tokensEstimatedSaved - estimateEventsTokens(back, estimator));
  return new CompactionResult(compacted, archived, saved, undefined, result.usage);
}
