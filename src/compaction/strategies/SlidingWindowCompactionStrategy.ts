import { requirePositiveInt } from '../../errors.js';
import { defaultTokenCountEstimator } from '../../tokens/TiktokenTokenCountEstimator.js';
import type { TokenCountEstimator } from '../../tokens/TokenCountEstimator.js';
import { requireRequest, type CompactionRequest } from '../CompactionRequest.js';
import { CompactionResult } from '../CompactionResult.js';
import type { CompactionStrategy } from '../CompactionStrategy.js';
import { cutAt, requireCutWithinTurn, type CutWithinTurn } from '../cutWithinTurn.js';
import { cutResult, partitionSynthetic, rootCountCut } from './windowCut.js';

export interface SlidingWindowCompactionStrategyOptions {
  maxEvents?: number;
  tokenCountEstimator?: TokenCountEstimator;
  /**
   * 'never' (default): the Java cut, which archives the whole window when no turn starts after the cut.
   * 'tool-pair-safe': then cut at the first later step start instead (see compaction/cutWithinTurn.ts).
   */
  cutWithinTurn?: CutWithinTurn;
}

/**
 * Keeps the last `maxEvents` root real events, with the cut moved forward to a turn start. When no turn
 * starts after the cut (one long turn) the whole real window is archived: that is the Java behaviour.
 */
export class SlidingWindowCompactionStrategy implements CompactionStrategy {
  static readonly DEFAULT_MAX_EVENTS = 20;
  readonly maxEvents: number;
  readonly tokenCountEstimator: TokenCountEstimator;
  readonly cutWithinTurn: CutWithinTurn;

  constructor(options: SlidingWindowCompactionStrategyOptions = {}) {
    this.maxEvents = requirePositiveInt(options.maxEvents ?? SlidingWindowCompactionStrategy.DEFAULT_MAX_EVENTS, 'maxEvents');
    this.tokenCountEstimator = options.tokenCountEstimator ?? defaultTokenCountEstimator();
    this.cutWithinTurn = requireCutWithinTurn(options.cutWithinTurn);
  }

  getMaxEvents(): number {
    return this.maxEvents;
  }

  async compact(request: CompactionRequest): Promise<CompactionResult> {
    const { events } = requireRequest(request);
    const { synthetic, real } = partitionSynthetic(events);
    const rawCut = rootCountCut(real, this.maxEvents);
    if (rawCut < 0) return CompactionResult.noop(events);
    return cutResult(events, synthetic, real, cutAt(real, rawCut, this.cutWithinTurn), this.tokenCountEstimator);
  }
}
