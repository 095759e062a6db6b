import { InvalidArgumentError } from '../errors.js';
import type { SessionEvent } from '../session/SessionEvent.js';

/** Why a strategy proposed no change, when it knows (lets the service report a precise skip reason). */
export type StrategySkipReason = 'nothing-to-archive' | 'summarization-failed';

/**
 * A strategy's verdict: the new active window (`compactedEvents`) and the real events it moves to the
 * archive. Synthetic events are never archived. Nothing here is a write: the service commits it.
 */
export class CompactionResult {
  readonly compactedEvents: readonly SessionEvent[];
  readonly archivedEvents: readonly SessionEvent[];
  readonly tokensEstimatedSaved: number;
  readonly skipReason: StrategySkipReason | undefined;

  constructor(
    compactedEvents: readonly SessionEvent[],
    archivedEvents: readonly SessionEvent[],
    tokensEstimatedSaved: number,
    skipReason?: StrategySkipReason,
  ) {
    if (compactedEvents === null || compactedEvents === undefined)
      throw new InvalidArgumentError('compactedEvents must not be null');
    if (archivedEvents === null || archivedEvents === undefined)
      throw new InvalidArgumentError('archivedEvents must not be null');
    this.compactedEvents = Object.freeze([...compactedEvents]);
    this.archivedEvents = Object.freeze([...archivedEvents]);
    this.tokensEstimatedSaved = tokensEstimatedSaved;
    this.skipReason = archivedEvents.length === 0 ? skipReason : undefined;
    Object.freeze(this);
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
