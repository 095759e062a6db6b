import { InvalidArgumentError, requirePositiveInt } from '../../errors.js';
import type { CompactionRequest } from '../CompactionRequest.js';
import type { CompactionTrigger } from '../CompactionTrigger.js';

export interface IdleTimeTriggerOptions {
  /** Fire once the newest conversation event is at least this old. */
  idleMs: number;
  /** Clock, for tests and replays; default `() => new Date()`. */
  now?: () => Date;
}

/**
 * Fires when the session has been quiet for `idleMs`: the newest non-synthetic event of the window is at
 * least that old. Summaries are ignored (they are written by compactions, not by the conversation). An
 * empty window never fires. Meant for background sweeps — compact idle sessions while nobody waits — and
 * usually combined, e.g. `CompositeCompactionTrigger.allOf(new IdleTimeTrigger({ idleMs }), tokenTrigger)`.
 */
export class IdleTimeTrigger implements CompactionTrigger {
  readonly idleMs: number;
  private readonly now: () => Date;

  constructor(options: IdleTimeTriggerOptions) {
    if (options === null || options === undefined) throw new InvalidArgumentError('options must not be null');
    this.idleMs = requirePositiveInt(options.idleMs, 'idleMs');
    if (options.now !== undefined && typeof options.now !== 'function') throw new InvalidArgumentError('now must be a function');
    this.now = options.now ?? (() => new Date());
  }

  /** Milliseconds since the newest conversation event, or null for an empty window. */
  idleFor(request: CompactionRequest): number | null {
    let newest = -Infinity;
    for (const e of request.events) if (!e.isSynthetic()) newest = Math.max(newest, e.timestamp.getTime());
    return newest === -Infinity ? null : this.now().getTime() - newest;
  }

  shouldCompact(request: CompactionRequest): boolean {
    const idle = this.idleFor(request);
    return idle !== null && idle >= this.idleMs;
  }
}
