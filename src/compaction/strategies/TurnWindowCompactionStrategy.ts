import { requirePositiveInt } from '../../errors.js';
import { splitTurns } from '../../session/turns.js';
import { estimateEventsTokens } from '../../tokens/eventTokens.js';
import { defaultTokenCountEstimator } from '../../tokens/TiktokenTokenCountEstimator.js';
import type { TokenCountEstimator } from '../../tokens/TokenCountEstimator.js';
import { requireRequest, type CompactionRequest } from '../CompactionRequest.js';
import { CompactionResult } from '../CompactionResult.js';
import type { CompactionStrategy } from '../CompactionStrategy.js';
import { partitionSynthetic } from './windowCut.js';

export interface TurnWindowCompactionStrategyOptions {
  maxTurns?: number;
  tokenCountEstimator?: TokenCountEstimator;
}

/** Keeps the last `maxTurns` whole turns; the preamble (events before the first turn) is never archived. */
export class TurnWindowCompactionStrategy implements CompactionStrategy {
  static readonly DEFAULT_MAX_TURNS = 10;
  readonly maxTurns: number;
  readonly tokenCountEstimator: TokenCountEstimator;

  constructor(options: TurnWindowCompactionStrategyOptions = {}) {
    this.maxTurns = requirePositiveInt(options.maxTurns ?? TurnWindowCompactionStrategy.DEFAULT_MAX_TURNS, 'maxTurns');
    this.tokenCountEstimator = options.tokenCountEstimator ?? defaultTokenCountEstimator();
  }

  getMaxTurns(): number {
    return this.maxTurns;
  }

  async compact(request: CompactionRequest): Promise<CompactionResult> {
    const { events } = requireRequest(request);
    const { synthetic, real } = partitionSynthetic(events);
    const { preamble, turns } = splitTurns(real);
    if (turns.length <= this.maxTurns) return CompactionResult.noop(events);
    const cut = turns.length - this.maxTurns;
    const archived = turns.slice(0, cut).flat();
    const kept = turns.slice(cut).flat();
    return new CompactionResult(
      [...synthetic, ...preamble, ...kept],
      archived,
      estimateEventsTokens(archived, this.tokenCountEstimator),
    );
  }
}
