import { requirePositiveInt } from '../../errors.js';
import { estimateEventTokens, estimateEventsTokens } from '../../tokens/eventTokens.js';
import { defaultTokenCountEstimator } from '../../tokens/TiktokenTokenCountEstimator.js';
import type { TokenCountEstimator } from '../../tokens/TokenCountEstimator.js';
import { requireRequest, type CompactionRequest } from '../CompactionRequest.js';
import type { CompactionResult } from '../CompactionResult.js';
import type { CompactionStrategy } from '../CompactionStrategy.js';
import { cutAt, requireCutWithinTurn, type CutWithinTurn } from '../cutWithinTurn.js';
import { cutResult, partitionSynthetic } from './windowCut.js';

export interface TokenCountCompactionStrategyOptions {
  maxTokens?: number;
  tokenCountEstimator?: TokenCountEstimator;
  /**
   * 'never' (default): the Java cut, which archives the whole window when no turn starts after the cut.
   * 'tool-pair-safe': then cut at the first later step start instead (see compaction/cutWithinTurn.ts).
   */
  cutWithinTurn?: CutWithinTurn;
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
  readonly cutWithinTurn: CutWithinTurn;

  constructor(options: TokenCountCompactionStrategyOptions = {}) {
    this.maxTokens = requirePositiveInt(options.maxTokens ?? TokenCountCompactionStrategy.DEFAULT_MAX_TOKENS, 'maxTokens');
    this.tokenCountEstimator = options.tokenCountEstimator ?? defaultTokenCountEstimator();
    this.cutWithinTurn = requireCutWithinTurn(options.cutWithinTurn);
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
    return cutResult(events, synthetic, real, cutAt(real, rawCut, this.cutWithinTurn), this.tokenCountEstimator);
  }
}
