import { requirePositiveInt } from '../../errors.js';
import { estimateEventTokens, estimateEventsTokens } from '../../tokens/eventTokens.js';
import { defaultTokenCountEstimator } from '../../tokens/TiktokenTokenCountEstimator.js';
import type { TokenCountEstimator } from '../../tokens/TokenCountEstimator.js';
import { requireRequest, type CompactionRequest } from '../CompactionRequest.js';
import type { CompactionResult } from '../CompactionResult.js';
import type { CompactionStrategy } from '../CompactionStrategy.js';
import { snapToTurnStart } from '../snapToTurnStart.js';
import { cutResult, partitionSynthetic } from './windowCut.js';

export interface TokenCountCompactionStrategyOptions {
  maxTokens?: number;
  tokenCountEstimator?: TokenCountEstimator;
}

/**
 * Keeps the newest contiguous suffix of real events that fits the budget left after synthetic events,
 * snapped forward to a turn start. The scan stops at the first event that does not fit (no skipping),
 * and — as in the Java design — a leading preamble is archived by the snap even under budget.
 */
export class TokenCountCompactionStrategy implements CompactionStrategy {
  static readonly DEFAULT_MAX_TOKENS = 4000;
  readonly maxTokens: number;
  readonly tokenCountEstimator: TokenCountEstimator;

  constructor(options: TokenCountCompactionStrategyOptions = {}) {
    this.maxTokens = requirePositiveInt(options.maxTokens ?? TokenCountCompactionStrategy.DEFAULT_MAX_TOKENS, 'maxTokens');
    this.tokenCountEstimator = options.tokenCountEstimator ?? defaultTokenCountEstimator();
  }

  getMaxTokens(): number {
    return this.maxTokens;
  }

  async compact(request: CompactionRequest): Promise<CompactionResult> {
    const { events } = requireRequest(request);
    const { synthetic, real } = partitionSynthetic(events);
    const remaining = this.maxTokens - estimateEventsTokens(synthetic, this.tokenCountEstimator);
    let used = 0;
    let rawCut = real.length;
    for (let i = real.length - 1; i >= 0; i--) {
      const cost = estimateEventTokens(real[i]!, this.tokenCountEstimator);
      if (used + cost > remaining) break;
      used += cost;
      rawCut = i;
    }
    return cutResult(events, synthetic, real, snapToTurnStart(real, rawCut), this.tokenCountEstimator);
  }
}
