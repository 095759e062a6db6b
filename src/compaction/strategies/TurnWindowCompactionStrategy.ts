import { requirePositiveInt } from '../../errors.js';
import { splitTurns } from '../../session/turns.js';
import { estimateEventsTokens } from '../../tokens/eventTokens.js';
import { defaultTokenCountEstimator } from '../../tokens/TiktokenTokenCountEstimator.js';
import type { TokenCountEstimator } from '../../tokens/TokenCountEstimator.js';
import { requireRequest, type CompactionRequest } from '../CompactionRequest.js';
import { CompactionResult } from '../CompactionResult.js';
import type { CompactionStrategy } from '../CompactionStrategy.js';
import { pinnedIds } from '../cutWithinTurn.js';
import { partitionSynthetic } from './windowCut.js';

export interface TurnWindowCompactionStrategyOptions {
  maxTurns?: number;
  tokenCountEstimator?: TokenCountEstimator;
}

/**
 * Keeps the last `maxTurns` whole turns; the preamble (events before the first turn) is never archived, and
 * pinned events of older turns stay in the window (before the kept turns).
 */
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
    const pinned = pinnedIds(real);
    const leaving = turns.slice(0, cut).flat();
    const archived = leaving.filter((e) => !pinned.has(e.id));
    const heldBack = leaving.filter((e) => pinned.has(e.id));
    if (archived.length === 0) return CompactionResult.noop(events);
    const kept = turns.slice(cut).flat();
    return new CompactionResult(
      [...synthetic, ...preamble, ...heldBack, ...kept],
      archived,
      estimateEventsTokens(archived, this.tokenCountEstimator),
    );
  }
}
