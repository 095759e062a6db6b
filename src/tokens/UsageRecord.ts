import type { ModelPrices } from './ModelPrices.js';

/**
 * Tokens one unit of work consumed — a chat turn, a compaction — and, when a price table is configured,
 * what they cost. For a compaction the model-call fields are 0 and the summariser fields carry its calls.
 */
export interface UsageRecord {
  /** Prompt tokens of the model call, cached ones included (the provider's `prompt_tokens`). */
  inputTokens: number;
  /** Of `inputTokens`, those read from the provider's prompt cache (`prompt_tokens_details.cached_tokens`). */
  cachedInputTokens: number;
  /** Of `inputTokens`, those written to the prompt cache where the provider reports and bills it apart. */
  cacheWriteTokens: number;
  outputTokens: number;
  summarizerCalls: number;
  summarizerInputTokens: number;
  /** Of `summarizerInputTokens`, those the summariser's endpoint read from its cache. */
  summarizerCachedInputTokens: number;
  summarizerOutputTokens: number;
  /** In the price table's currency; absent when no price table is configured. Compactions included. */
  estimatedCost?: number;
  /**
   * Of `estimatedCost`, what compactions cost: the summariser's calls (or any model call a strategy reports
   * in the summariser fields, such as a provider's native compaction endpoint). The turn's own model call is
   * `estimatedCost - estimatedCompactionCost`. Present whenever `estimatedCost` is.
   */
  estimatedCompactionCost?: number;
}

/** A record with every count 0 and no cost. */
export function emptyUsage(): UsageRecord {
  return {
    inputTokens: 0,
    cachedInputTokens: 0,
    cacheWriteTokens: 0,
    outputTokens: 0,
    summarizerCalls: 0,
    summarizerInputTokens: 0,
    summarizerCachedInputTokens: 0,
    summarizerOutputTokens: 0,
  };
}

const COUNTS = [
  'inputTokens',
  'cachedInputTokens',
  'cacheWriteTokens',
  'outputTokens',
  'summarizerCalls',
  'summarizerInputTokens',
  'summarizerCachedInputTokens',
  'summarizerOutputTokens',
] as const;

/** Field-wise sum; the cost is kept only when every part had one (or the part with none had no tokens). */
export function addUsage(...records: readonly (UsageRecord | undefined)[]): UsageRecord {
  const total = emptyUsage();
  let nanos = 0;
  let compactionNanos = 0;
  let priced = true;
  for (const r of records) {
    if (r === undefined) continue;
    for (const key of COUNTS) total[key] += r[key];
    if (r.estimatedCost === undefined) priced &&= COUNTS.every((key) => r[key] === 0);
    else {
      nanos += Math.round(r.estimatedCost * 1e9);
      compactionNanos += Math.round((r.estimatedCompactionCost ?? 0) * 1e9);
    }
  }
  if (priced && records.some((r) => r?.estimatedCost !== undefined)) {
    total.estimatedCost = nanos / 1e9;
    total.estimatedCompactionCost = compactionNanos / 1e9;
  }
  return total;
}

/** Price per token in billionths of the currency unit, so that sums of many small costs stay exact. */
function nanosPerToken(pricePerMTok: number): number {
  return Math.round(pricePerMTok * 1000);
}

/**
 * The cost of `usage` in billionths of the price table's currency unit (an integer, so that costs add up
 * exactly). Uncached input is `inputTokens - cachedInputTokens - cacheWriteTokens`. Prices with more than
 * three decimals per million tokens are rounded to three.
 */
export function usageCostNanos(usage: UsageRecord, prices: ModelPrices, summarizerPrices: ModelPrices = prices): number {
  const input = nanosPerToken(prices.inputPerMTok);
  const cached = nanosPerToken(prices.cachedInputPerMTok ?? prices.inputPerMTok);
  const write = nanosPerToken(prices.cacheWritePerMTok ?? prices.inputPerMTok);
  const uncached = Math.max(0, usage.inputTokens - usage.cachedInputTokens - usage.cacheWriteTokens);
  return (
    uncached * input +
    usage.cachedInputTokens * cached +
    usage.cacheWriteTokens * write +
    usage.outputTokens * nanosPerToken(prices.outputPerMTok) +
    compactionCostNanos(usage, summarizerPrices)
  );
}

/**
 * Of `usageCostNanos`, what the compactions cost: the summariser fields at `summarizerPrices` (billionths of
 * the currency unit, an integer).
 */
export function compactionCostNanos(usage: UsageRecord, summarizerPrices: ModelPrices): number {
  const summarizerUncached = Math.max(0, usage.summarizerInputTokens - usage.summarizerCachedInputTokens);
  return (
    summarizerUncached * nanosPerToken(summarizerPrices.inputPerMTok) +
    usage.summarizerCachedInputTokens * nanosPerToken(summarizerPrices.cachedInputPerMTok ?? summarizerPrices.inputPerMTok) +
    usage.summarizerOutputTokens * nanosPerToken(summarizerPrices.outputPerMTok)
  );
}

/**
 * `usage` with its `estimatedCost` and, apart, `estimatedCompactionCost` from the price tables (the
 * summariser's default to the chat model's).
 */
export function priceUsage(usage: UsageRecord, prices: ModelPrices, summarizerPrices: ModelPrices = prices): UsageRecord {
  return {
    ...usage,
    estimatedCost: usageCostNanos(usage, prices, summarizerPrices) / 1e9,
    estimatedCompactionCost: compactionCostNanos(usage, summarizerPrices) / 1e9,
  };
}
