import type { CompactionRequest } from '../compaction/CompactionRequest.js';
import { CompactionResult } from '../compaction/CompactionResult.js';
import type { CompactionStrategy } from '../compaction/CompactionStrategy.js';
import type { CompactionTrigger } from '../compaction/CompactionTrigger.js';
import type { SessionEvent } from '../session/SessionEvent.js';
import { estimateEventsTokens } from '../tokens/eventTokens.js';
import { addUsage, type UsageRecord } from '../tokens/UsageRecord.js';
import type { TokenCountEstimator } from '../tokens/TokenCountEstimator.js';
import { EmergencyCompactionStrategy } from './EmergencyCompactionStrategy.js';

/** Shares of the window's tokens the mechanical fallback tries, until the trigger stops firing. */
const FALLBACK_SHARES = [0.75, 0.5, 0.35, 0.25, 0.15, 0.1, 0.05];

/** What one escalating compaction did, for the circuit breaker. */
export interface EscalationReport {
  /** The configured strategy ran (not skipped by an open breaker). */
  primaryRan: boolean;
  /** It archived something. */
  primaryArchived: boolean;
  /** The fallback ran because the trigger still fired. */
  escalated: boolean;
}

/**
 * The mechanical fallback for a trigger we cannot look into: the agent-safe cut of EmergencyCompactionStrategy
 * at shrinking budgets (a share of the window's tokens) until the trigger no longer fires on what is left —
 * no model call, so trying several budgets costs only counting. Summaries, pinned events and the turn's
 * opening message stay.
 */
export function mechanicalFallback(trigger: CompactionTrigger, estimator: TokenCountEstimator): CompactionStrategy {
  return {
    async compact(request: CompactionRequest): Promise<CompactionResult> {
      const tokens = estimateEventsTokens(request.events, estimator);
      let best = CompactionResult.noop(request.events);
      for (const share of FALLBACK_SHARES) {
        const result = await new EmergencyCompactionStrategy(Math.max(1, Math.floor(tokens * share)), estimator).compact(request);
        if (result.archivedEvents.length === 0) continue;
        best = result;
        if (!(await trigger.shouldCompact(request.withEvents(result.compactedEvents)))) break;
      }
      return best;
    },
  };
}

/**
 * `primary`, escalating to `fallback` when it cannot reach the trigger's target: when, after it ran (or
 * archived nothing), the trigger still fires on the window it leaves, `fallback` runs on that window — in the
 * same compaction, one commit — instead of the same compaction being tried again on the next turn with the
 * same result. Archived events are those of the original window only (a copy made by the primary and
 * archived by the fallback was never stored), as in CompactionPipeline. `skipPrimary`: an open circuit
 * breaker goes straight to the fallback. Everything else is inherited from `primary` (its name in records).
 */
export function escalatingStrategy(
  primary: CompactionStrategy,
  trigger: CompactionTrigger,
  fallback: CompactionStrategy,
  estimator: TokenCountEstimator,
  options: { skipPrimary?: boolean; report?: (report: EscalationReport) => void } = {},
): CompactionStrategy {
  const escalating = Object.create(primary) as CompactionStrategy;
  escalating.compact = async (request: CompactionRequest) => {
    const first = options.skipPrimary === true ? CompactionResult.noop(request.events) : await primary.compact(request);
    const window = first.isNoop() ? request.events : first.compactedEvents;
    const stillFires = await trigger.shouldCompact(request.withEvents(window));
    options.report?.({ primaryRan: options.skipPrimary !== true, primaryArchived: !first.isNoop(), escalated: stillFires });
    if (!stillFires) return first;
    const known = [...request.originals.values(), ...request.events];
    const second = await fallback.compact(request.withEvents(window, known));
    if (second.isNoop()) return first;
    return merge(request.events, first, second, estimator);
  };
  return escalating;
}

function merge(
  original: readonly SessionEvent[],
  first: CompactionResult,
  second: CompactionResult,
  estimator: TokenCountEstimator,
): CompactionResult {
  const archived = new Set([...first.archivedEvents, ...second.archivedEvents].map((e) => e.id));
  const archivedEvents = original.filter((e) => archived.has(e.id));
  const usages = [first.usage, second.usage].filter((u): u is UsageRecord => u !== undefined);
  const saved = estimateEventsTokens(original, estimator) - estimateEventsTokens(second.compactedEvents, estimator);
  return new CompactionResult(
    second.compactedEvents,
    archivedEvents,
    Math.max(0, saved),
    undefined,
    usages.length === 0 ? undefined : addUsage(...usages),
  );
}
