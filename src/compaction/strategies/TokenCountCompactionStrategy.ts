import { requirePositiveInt } from '../../errors.js';
import { estimateEventTokens, estimateEventsTokens } from '../../tokens/eventTokens.js';
import { defaultTokenCountEstimator } from '../../tokens/TiktokenTokenCountEstimator.js';
import type { TokenCountEstimator } from '../../tokens/TokenCountEstimator.js';
import type { SessionEvent } from '../../session/SessionEvent.js';
import { requireRequest, type CompactionRequest } from '../CompactionRequest.js';
import type { CompactionResult } from '../CompactionResult.js';
import type { CompactionStrategy } from '../CompactionStrategy.js';
import { pinnedIds, planCut, requireCutWithinTurn, type CutPlan, type CutWithinTurn } from '../cutWithinTurn.js';
import { cutResult, partitionSynthetic } from './windowCut.js';

export interface TokenCountCompactionStrategyOptions {
  maxTokens?: number;
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
 * Keeps the newest contiguous suffix of real events that fits the budget left after synthetic and pinned
 * events, snapped forward to a turn start. The scan stops at the first event that does not fit (no
 * skipping). With cutWithinTurn 'never' a leading preamble is archived by the
 * snap even under budget. A turn opener kept by the agent-safe cut is paid for out of the same budget.
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
    const pinned = pinnedIds(real);
    const pinnedTokens = estimateEventsTokens(
      real.filter((e) => pinned.has(e.id)),
      this.tokenCountEstimator,
    );
    const budget = this.maxTokens - estimateEventsTokens(synthetic, this.tokenCountEstimator) - pinnedTokens;
    const rawCut = this.rawCut(real, pinned, budget);
    let plan = planCut(real, rawCut, this.cutWithinTurn);
    // A held-back turn opener costs tokens too: cut again with it taken out of the budget. When the opener
    // and the latest step cannot both fit, the budget wins and the opener goes (the window is still not empty).
    const extra = this.unpaid(plan, pinned);
    if (extra > 0) {
      const recut = planCut(real, this.rawCut(real, pinned, budget - extra), this.cutWithinTurn);
      plan =
        this.unpaid(recut, pinned) + this.unpinnedTokens(recut, pinned) <= budget
          ? recut
          : planCut(real, rawCut, this.cutWithinTurn, { keepTurnOpener: false });
    }
    return cutResult(events, synthetic, plan, this.tokenCountEstimator);
  }

  /** Start of the newest suffix that fits `budget`, pinned events (already paid for) passed over. */
  private rawCut(real: readonly SessionEvent[], pinned: ReadonlySet<string>, budget: number): number {
    let used = 0;
    let rawCut = real.length;
    for (let i = real.length - 1; i >= 0; i--) {
      if (pinned.has(real[i]!.id)) {
        rawCut = i;
        continue;
      }
      const cost = estimateEventTokens(real[i]!, this.tokenCountEstimator);
      if (used + cost > budget) break;
      used += cost;
      rawCut = i;
    }
    return rawCut;
  }

  /** Tokens of the kept suffix, pinned events excluded (they are paid for up front). */
  private unpinnedTokens(plan: CutPlan, pinned: ReadonlySet<string>): number {
    return estimateEventsTokens(
      plan.kept.slice(plan.heldBack.length).filter((e) => !pinned.has(e.id)),
      this.tokenCountEstimator,
    );
  }

  private unpaid(plan: CutPlan, pinned: ReadonlySet<string>): number {
    return estimateEventsTokens(
      plan.heldBack.filter((e) => !pinned.has(e.id)),
      this.tokenCountEstimator,
    );
  }
}
