import { InvalidArgumentError } from '../errors.js';
import type { SessionEvent } from '../session/SessionEvent.js';
import type { UsageRecord } from '../tokens/UsageRecord.js';

/**
 * Why a compaction changed nothing, when it is known: a strategy's own reason, or the service's when a
 * cross-process compaction lock was held by another holder ('lock-held') or lost before the commit ('lock-lost').
 * 'deferred': a cache-aware strategy held back a small in-place rewrite (masking) while the provider's prompt
 * cache is warm (see `minSavedTokens`).
 */
export type StrategySkipReason = 'nothing-to-archive' | 'summarization-failed' | 'deferred' | 'lock-held' | 'lock-lost';

/**
 * A strategy's verdict: the new active window (`compactedEvents`) and the real events it moves to the
 * archive. Synthetic events are never archived. Nothing here is a write: the service commits it.
 */
export class CompactionResult {
  readonly compactedEvents: readonly SessionEvent[];
  readonly archivedEvents: readonly SessionEvent[];
  readonly tokensEstimatedSaved: number;
  readonly skipReason: StrategySkipReason | undefined;
  /**
   * What the compaction consumed — the summariser's calls and tokens — when the strategy reports it (the
   * summarising strategies do; a failed summary that was billed is still reported on the no-op result).
   */
  readonly usage: UsageRecord | undefined;

  constructor(
    compactedEvents: readonly SessionEvent[],
    archivedEvents: readonly SessionEvent[],
    tokensEstimatedSaved: number,
    skipReason?: StrategySkipReason,
    usage?: UsageRecord,
  ) {
    if (compactedEvents === null || compactedEvents === undefined)
      throw new InvalidArgumentError('compactedEvents must not be null');
    if (archivedEvents === null || archivedEvents === undefined)
      throw new InvalidArgumentError('archivedEvents must not be null');
    this.compactedEvents = Object.freeze([...compactedEvents]);
    this.archivedEvents = Object.freeze([...archivedEvents]);
    this.tokensEstimatedSaved = tokensEstimatedSaved;
    this.skipReason = archivedEvents.length === 0 ? skipReason : undefined;
    this.usage = usage === undefined ? undefined : Object.freeze({ ...usage });
    Object.freeze(this);
  }

  /** The same result carrying `usage` (undefined removes it). */
  withUsage(usage: UsageRecord | undefined): CompactionResult {
    return new CompactionResult(this.compactedEvents, this.archivedEvents, this.tokensEstimatedSaved, this.skipReason, usage);
  }

  /** The unchanged window: nothing archived, nothing saved. */
  static noop(events: readonly SessionEvent[], reason?: StrategySkipReason): CompactionResult {
    return new CompactionResult(events, [], 0, reason);
  }

  get eventsRemoved(): number {
    return this.archivedEvents.length;
  }

  isNoop(): boolean {
    return this.archivedEvents.length === 0;
  }
}
