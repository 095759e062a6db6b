import { requireRequest, type CompactionRequest } from '../compaction/CompactionRequest.js';
import { CompactionResult } from '../compaction/CompactionResult.js';
import type { CompactionStrategy } from '../compaction/CompactionStrategy.js';
import { pinnedIds, planCut } from '../compaction/cutWithinTurn.js';
import { cutResult, partitionSynthetic } from '../compaction/strategies/windowCut.js';
import { requirePositiveInt } from '../errors.js';
import { estimateEventTokens, estimateEventsTokens } from '../tokens/eventTokens.js';
import type { TokenCountEstimator } from '../tokens/TokenCountEstimator.js';

/**
 * The mechanical last resort when a provider refused a prompt as too long: no model call, so it cannot fail
 * the way a summariser can and costs nothing. It archives the oldest real events until the window fits
 * `maxTokens`, with the agent-safe cut — never a tool call without its result, the turn's opening message kept
 * when the cut falls inside a turn, at least the latest step kept — and never archives a summary, a pinned
 * event or one of `keep` (the turn's current input). Archived events stay in the log; recall can find them.
 */
export class EmergencyCompactionStrategy implements CompactionStrategy {
  /** The window's budget in estimated tokens. */
  readonly maxTokens: number;
  private lastProposed = 0;

  constructor(
    maxTokens: number,
    private readonly estimator: TokenCountEstimator,
    private readonly keep: ReadonlySet<string> = new Set(),
  ) {
    this.maxTokens = requirePositiveInt(maxTokens, 'maxTokens');
  }

  /** Events the last `compact` proposed to archive (committed or not: a concurrent append may have won). */
  get proposed(): number {
    return this.lastProposed;
  }

  /** The oldest events archived until the window fits `maxTokens`; see the class. */
  async compact(request: CompactionRequest): Promise<CompactionResult> {
    const { events } = requireRequest(request);
    const { synthetic, real } = partitionSynthetic(events);
    const pinned = pinnedIds(real);
    const budget =
      this.maxTokens -
      estimateEventsTokens(synthetic, this.estimator) -
      estimateEventsTokens(
        real.filter((e) => pinned.has(e.id)),
        this.estimator,
      );
    let used = 0;
    let rawCut = real.length;
    for (let i = real.length - 1; i >= 0; i--) {
      const e = real[i]!;
      if (!pinned.has(e.id)) {
        const cost = estimateEventTokens(e, this.estimator);
        if (used + cost > budget) break;
        used += cost;
      }
      rawCut = i;
    }
    // The turn's current input stays, whatever it costs: the agent-safe cut holds back the turn's opening
    // message; an input elsewhere (tool results a run has gone past) bounds the cut instead.
    let plan = planCut(real, rawCut, 'agent-safe');
    const firstKept = real.findIndex((e) => this.keep.has(e.id));
    if (firstKept >= 0 && plan.archived.some((e) => this.keep.has(e.id))) {
      plan = planCut(real, Math.min(rawCut, firstKept), 'agent-safe');
    }
    const result = plan.archived.some((e) => this.keep.has(e.id))
      ? CompactionResult.noop(events)
      : cutResult(events, synthetic, plan, this.estimator);
    this.lastProposed = result.archivedEvents.length;
    return result;
  }
}
