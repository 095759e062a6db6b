import { InvalidArgumentError, requirePositiveInt } from '../errors.js';
import type { Logger } from '../logging.js';
import type { ChatClient } from '../summarization/ChatClient.js';
import type { TokenCountEstimator } from '../tokens/TokenCountEstimator.js';
import type { CompactionStrategy } from './CompactionStrategy.js';
import { AdditiveSummarizationCompactionStrategy } from './strategies/AdditiveSummarizationCompactionStrategy.js';
import { CompactionPipeline } from './strategies/CompactionPipeline.js';
import { ObservationMaskingCompactionStrategy } from './strategies/ObservationMaskingCompactionStrategy.js';
import { TokenCountCompactionStrategy } from './strategies/TokenCountCompactionStrategy.js';
import { CacheAwareTrigger, DEFAULT_PROMPT_CACHE_TTL_MS } from './triggers/CacheAwareTrigger.js';

export interface CacheAwareCompactionOptions {
  /** The window never exceeds it: at this size the trigger fires whatever the cache. */
  budgetTokens: number;
  /** With a summariser, archived turns become appended summaries; without, they are only archived. */
  chatClient?: ChatClient;
  /**
   * Share of the budget kept verbatim after a compaction; default 0.5 with a summariser, 0.8 without (0.6
   * without a summariser but with `maskToolResults`).
   */
  keptRatio?: number;
  /**
   * Agent loops: mask the tool results the model has already answered (ObservationMaskingCompactionStrategy)
   * at each compaction, before anything is cut or summarised, so the kept window holds more of the run. The
   * masks are made only when a compaction is due anyway — at the budget, or from `coldRatio` once the cache is
   * cold — never one result per turn inside the cached prefix. Default false.
   */
  maskToolResults?: boolean | { maxChars?: number };
  /** With a summariser: share of the budget the appended summaries may take before they are merged; default 0.35. */
  summaryRatio?: number;
  /** Share of the budget from which a cold cache is a reason to compact; default keptRatio + summaryRatio (≤ 1). */
  coldRatio?: number;
  /** The provider's cache lifetime; default 5 minutes (`PROVIDER_PRESETS[name].cache.ttlMs`). */
  cacheTtlMs?: number;
  now?: () => Date;
  tokenCountEstimator?: TokenCountEstimator;
  logger?: Logger;
}

/** What to spread into SessionMemory's options (or to pass to `service.compact`). */
export interface CacheAwareCompactionProfile {
  compactionTrigger: CacheAwareTrigger;
  compactionStrategy: CompactionStrategy;
  /** The trigger must also run after the user's pause, before the call, to see a cold cache. */
  compactBeforeCall: true;
}

function ratio(value: number | undefined, fallback: number, name: string): number {
  const r = value ?? fallback;
  if (typeof r !== 'number' || !(r > 0 && r <= 1)) throw new InvalidArgumentError(`${name} must be in (0, 1]`);
  return r;
}

/**
 * The prompt-cache-friendly setting, measured in docs/cost.md: compact rarely and preferably when the
 * provider's cache has expired (CacheAwareTrigger), keep whole recent turns up to `keptRatio` of the budget,
 * and append summaries instead of rewriting them, so the summaries and the kept turns stay a cached prefix
 * from one call to the next. With `maskToolResults`, consumed tool results are masked in the same step.
 */
export function cacheAwareCompaction(options: CacheAwareCompactionOptions): CacheAwareCompactionProfile {
  if (options === null || options === undefined) throw new InvalidArgumentError('options must not be null');
  const budget = requirePositiveInt(options.budgetTokens, 'budgetTokens');
  const summarising = options.chatClient !== undefined;
  const masking = options.maskToolResults ?? false;
  if (typeof masking !== 'boolean' && (masking === null || typeof masking !== 'object')) {
    throw new InvalidArgumentError('maskToolResults must be a boolean or { maxChars }');
  }
  const kept = ratio(options.keptRatio, summarising ? 0.5 : masking === false ? 0.8 : 0.6, 'keptRatio');
  const summaries = summarising ? ratio(options.summaryRatio, 0.35, 'summaryRatio') : 0;
  if (kept + summaries > 1) throw new InvalidArgumentError('keptRatio + summaryRatio must not exceed 1');
  const cold = ratio(options.coldRatio, Math.min(1, kept + summaries), 'coldRatio');
  const estimator = options.tokenCountEstimator;
  const share = (r: number) => Math.max(1, Math.floor(budget * r));
  const compactionTrigger = new CacheAwareTrigger({
    maxTokens: budget,
    coldTokens: share(cold),
    cacheTtlMs: options.cacheTtlMs ?? DEFAULT_PROMPT_CACHE_TTL_MS,
    ...(options.now !== undefined ? { now: options.now } : {}),
    ...(estimator !== undefined ? { tokenCountEstimator: estimator } : {}),
  });
  const base: CompactionStrategy = summarising
    ? new AdditiveSummarizationCompactionStrategy({
        chatClient: options.chatClient!,
        // Whole turns up to the token cap: the cap, not a turn count, decides what stays.
        keepTurns: Number.MAX_SAFE_INTEGER,
        maxKeptTokens: share(kept),
        maxSummaryTokens: share(summaries),
        ...(estimator !== undefined ? { tokenCountEstimator: estimator } : {}),
        ...(options.logger !== undefined ? { logger: options.logger } : {}),
      })
    : new TokenCountCompactionStrategy({
        maxTokens: share(kept),
        ...(estimator !== undefined ? { tokenCountEstimator: estimator } : {}),
      });
  const compactionStrategy: CompactionStrategy =
    masking === false
      ? base
      : new CompactionPipeline({
          stages: [
            {
              name: 'mask',
              strategy: new ObservationMaskingCompactionStrategy({
                ...(masking !== true && masking.maxChars !== undefined ? { maxChars: masking.maxChars } : {}),
                ...(estimator !== undefined ? { tokenCountEstimator: estimator } : {}),
              }),
            },
            { name: summarising ? 'summarize' : 'cut', strategy: base },
          ],
          // Masking alone is enough when it brings the window to what a cut or summary would leave.
          maxTokens: share(summarising ? Math.min(1, kept + summaries) : kept),
          ...(estimator !== undefined ? { tokenCountEstimator: estimator } : {}),
        });
  return { compactionTrigger, compactionStrategy, compactBeforeCall: true };
}
