import type { ModelPrices } from '../tokens/ModelPrices.js';
import {
  addUsage,
  compactionCostNanos,
  emptyUsage,
  priceUsage,
  usageCostNanos,
  type UsageRecord,
} from '../tokens/UsageRecord.js';

/** Session metadata key holding the running total of what the session's turns consumed. */
export const METADATA_USAGE = 'usage';

/** The running total under `metadata.usage`. */
export interface SessionUsageTotals extends UsageRecord {
  /** Chat turns counted. */
  turns: number;
  /**
   * The exact running cost in billionths of the currency unit (`estimatedCost` × 10⁹): each turn's cost is
   * an integer there, so the total never drifts the way a sum of decimal fractions does.
   */
  estimatedCostNanos?: number;
  /** Of `estimatedCostNanos`, what compactions cost (`estimatedCompactionCost` × 10⁹). */
  estimatedCompactionCostNanos?: number;
  currency?: string;
  updatedAt: string;
}

/** The token counts of one model call, as the provider reported them; SessionMemory adds the rest. */
export interface ProviderTokenUsage {
  /** All prompt tokens, cached ones included. */
  inputTokens: number;
  cachedInputTokens: number;
  cacheWriteTokens: number;
  outputTokens: number;
}

/** The totals stored on a session, or null when none (or a malformed value) is there. */
export function sessionUsageTotals(metadata: Readonly<Record<string, unknown>>): SessionUsageTotals | null {
  const value = metadata[METADATA_USAGE];
  if (value === null || typeof value !== 'object') return null;
  const totals = value as Partial<SessionUsageTotals>;
  return typeof totals.turns === 'number' && typeof totals.inputTokens === 'number' ? (totals as SessionUsageTotals) : null;
}

/**
 * One turn's usage record: the model call's tokens, every compaction's summariser tokens, and — with a
 * price table — the estimated cost (the summariser's tokens at `summarizerPrices`, default `prices`).
 */
export function turnUsage(
  call: ProviderTokenUsage | null,
  compactions: readonly (UsageRecord | undefined)[],
  prices: ModelPrices | undefined,
  summarizerPrices: ModelPrices | undefined,
): UsageRecord {
  const usage = stripCost(
    addUsage({ ...emptyUsage(), ...(call ?? {}) }, ...compactions.map((u) => (u === undefined ? u : stripCost(u)))),
  );
  if (prices === undefined) return usage;
  return priceUsage(usage, prices, summarizerPrices ?? prices);
}

function stripCost(usage: UsageRecord): UsageRecord {
  const { estimatedCost: _cost, estimatedCompactionCost: _compaction, ...counts } = usage;
  return counts;
}

/**
 * Adds each turn's usage to the session's `usage` metadata (written by SessionMemory together with the
 * calibration, in one best-effort read-modify-write that never fails the chat request). Atomic when the
 * repository has `updateSessionMetadata` (every built-in one does): concurrent turns of one session all count.
 */
export class SessionUsageRecorder {
  constructor(
    private readonly prices: ModelPrices | undefined,
    private readonly summarizerPrices: ModelPrices | undefined,
  ) {}

  /**
   * `metadata` with `usage` added to its totals. `countTurn` false adds tokens and cost only: the summariser
   * usage of a compaction that ran after the turn was counted.
   */
  apply(metadata: Readonly<Record<string, unknown>>, usage: UsageRecord, countTurn = true): Record<string, unknown> {
    const previous = sessionUsageTotals(metadata);
    const { estimatedCostNanos: _nanos, estimatedCompactionCostNanos: _compactionNanos, ...before } = previous ?? {};
    const counts = stripCost(addUsage(previous === null ? undefined : stripCost(before as UsageRecord), stripCost(usage)));
    const next: SessionUsageTotals = {
      ...counts,
      turns: (previous?.turns ?? 0) + (countTurn ? 1 : 0),
      updatedAt: new Date().toISOString(),
    };
    if (this.prices !== undefined) {
      const summarizerPrices = this.summarizerPrices ?? this.prices;
      const nanos = (previous?.estimatedCostNanos ?? 0) + usageCostNanos(usage, this.prices, summarizerPrices);
      const compactionNanos = (previous?.estimatedCompactionCostNanos ?? 0) + compactionCostNanos(usage, summarizerPrices);
      next.estimatedCostNanos = nanos;
      next.estimatedCost = nanos / 1e9;
      next.estimatedCompactionCostNanos = compactionNanos;
      next.estimatedCompactionCost = compactionNanos / 1e9;
      next.currency = this.prices.currency ?? 'USD';
    }
    return { ...metadata, [METADATA_USAGE]: next };
  }
}
