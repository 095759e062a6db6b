import type { SessionEvent } from '../../session/SessionEvent.js';
import { estimateEventsTokens } from '../../tokens/eventTokens.js';
import type { TokenCountEstimator } from '../../tokens/TokenCountEstimator.js';
import { CompactionResult } from '../CompactionResult.js';
import type { CutPlan } from '../cutWithinTurn.js';

/** Synthetic events (summaries) are never archived by a cut; real events are what strategies trim. */
export function partitionSynthetic(events: readonly SessionEvent[]): { synthetic: SessionEvent[]; real: SessionEvent[] } {
  const synthetic: SessionEvent[] = [];
  const real: SessionEvent[] = [];
  for (const e of events) (e.isSynthetic() ? synthetic : real).push(e);
  return { synthetic, real };
}

/**
 * Raw cut that keeps the last `keep` root real events (branch events use no slot): the index just after
 * the (rootCount − keep)-th root event, or -1 when there are no more than `keep` root events.
 */
export function rootCountCut(real: readonly SessionEvent[], keep: number): number {
  let rootCount = 0;
  for (const e of real) if (e.isRootEvent()) rootCount++;
  if (rootCount <= keep) return -1;
  let toArchive = rootCount - keep;
  for (let i = 0; i < real.length; i++) {
    if (real[i]!.isRootEvent() && --toArchive === 0) return i + 1;
  }
  return real.length;
}

/** Archive what the plan archives; synthetic events first, then what it keeps. */
export function cutResult(
  events: readonly SessionEvent[],
  synthetic: readonly SessionEvent[],
  plan: CutPlan,
  estimator: TokenCountEstimator,
): CompactionResult {
  if (plan.archived.length === 0) return CompactionResult.noop(events);
  return new CompactionResult([...synthetic, ...plan.kept], plan.archived, estimateEventsTokens(plan.archived, estimator));
}
