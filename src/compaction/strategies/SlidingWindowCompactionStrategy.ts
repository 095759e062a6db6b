import { requirePositiveInt } from '../../errors.js';
import { defaultTokenCountEstimator } from '../../tokens/TiktokenTokenCountEstimator.js';
import type { TokenCountEstimator } from '../../tokens/TokenCountEstimator.js';
import { requireRequest, type CompactionRequest } from '../CompactionRequest.js';
import { CompactionResult } from '../CompactionResult.js';
import type { CompactionStrategy } from '../CompactionStrategy.js';
import { planCut, requireCutWithinTurn, type CutWithinTurn } from '../cutWithinTurn.js';
import { cutResult, partitionSynthetic, rootCountCut } from './windowCut.js';

export interface SlidingWindowCompactionStrategyOptions {
  maxEvents?: number;
  tokenCountEstimator?: TokenCountEstimator;
  /**
   * 'agent-safe' (default): never empties the window, never splits a tool call from its result, and keeps
   * the turn's opening user message when it cuts inside a turn. 'tool-pair-safe': cut at the first later
   * step start. 'never': snap to the next turn start, which archives the whole window when no turn starts after the cut.
   * See compaction/cutWithinTurn.ts.
   */
  cutWithinTurn?: CutWithinTurn;
}

/**
 * Keeps the last `maxEvents` root real events, with the cut moved forward to a turn start. When no turn
 * starts after the cut (one long turn), the `cutWithinTurn` mode decides; pinned events are always kept.
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
    return cutResult(events, synthetic, planCut(real, rawCut, this.cutWithinTurn), this.tokenCountEstimator);
  }
}
