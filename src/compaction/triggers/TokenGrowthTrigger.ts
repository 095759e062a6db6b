import { InvalidArgumentError, requirePositiveInt } from '../../errors.js';
import type { SessionEvent } from '../../session/SessionEvent.js';
import { calibrationRatio } from '../../tokens/calibration.js';
import { estimateEventsTokens } from '../../tokens/eventTokens.js';
import { defaultTokenCountEstimator } from '../../tokens/TiktokenTokenCountEstimator.js';
import type { TokenCountEstimator } from '../../tokens/TokenCountEstimator.js';
import type { CompactionRequest } from '../CompactionRequest.js';
import type { CompactionTrigger } from '../CompactionTrigger.js';
import { originalIdOf } from '../strategies/replaceInPlace.js';

export interface TokenGrowthTriggerOptions {
  /** Fire once this many tokens were added since the last compaction. */
  tokens: number;
  tokenCountEstimator?: TokenCountEstimator;
  /** Sessions whose anchor is remembered; the least recently fired are forgotten first. Default 10,000. */
  maxTrackedSessions?: number;
}

/**
 * Fires when the conversation has grown by `tokens` since the last compaction — a cadence ("summarise
 * every ~2K new tokens") rather than a ceiling (TokenCountTrigger, ContextWindowTrigger).
 *
 * "Since the last compaction" is measured from an anchor:
 * 1. the last event of the window when this trigger last fired for the session, if still in the window
 *    (the trigger instance remembers it in memory; firing is taken as "a compaction follows");
 * 2. otherwise — a fresh instance, a restarted process, or an anchor that got archived — the last
 *    synthetic event (summary) of the window, i.e. everything after the newest summary counts;
 * 3. with neither, the whole window counts (the session was never summarised).
 * After a mechanical compaction (no summary left) in a fresh process, rule 3 counts the retained window
 * too, so the first firing may come early; from then on rule 1 applies.
 */
export class TokenGrowthTrigger implements CompactionTrigger {
  static readonly DEFAULT_MAX_TRACKED_SESSIONS = 10_000;
  readonly tokens: number;
  readonly tokenCountEstimator: TokenCountEstimator;
  private readonly maxTracked: number;
  private readonly anchors = new Map<string, string>();

  constructor(options: TokenGrowthTriggerOptions) {
    if (options === null || options === undefined) throw new InvalidArgumentError('options must not be null');
    this.tokens = requirePositiveInt(options.tokens, 'tokens');
    if (options.tokenCountEstimator === null) throw new InvalidArgumentError('tokenCountEstimator must not be null');
    this.tokenCountEstimator = options.tokenCountEstimator ?? defaultTokenCountEstimator();
    this.maxTracked = requirePositiveInt(
      options.maxTrackedSessions ?? TokenGrowthTrigger.DEFAULT_MAX_TRACKED_SESSIONS,
      'maxTrackedSessions',
    );
  }

  /** Calibrated tokens of the events after the anchor. */
  growth(request: CompactionRequest): number {
    return estimateEventsTokens(this.sinceAnchor(request), this.tokenCountEstimator) * calibrationRatio(request.session);
  }

  shouldCompact(request: CompactionRequest): boolean {
    if (this.growth(request) < this.tokens) return false;
    const last = request.events[request.events.length - 1];
    if (last !== undefined) {
      this.anchors.delete(request.session.id);
      this.anchors.set(request.session.id, last.id);
      if (this.anchors.size > this.maxTracked) this.anchors.delete(this.anchors.keys().next().value as string);
    }
    return true;
  }

  /** Forgets the anchor of a session (e.g. after deleting it). */
  reset(sessionId: string): void {
    this.anchors.delete(sessionId);
  }

  private sinceAnchor(request: CompactionRequest): readonly SessionEvent[] {
    const { events } = request;
    const anchor = this.anchors.get(request.session.id);
    if (anchor !== undefined) {
      // A masked copy of the anchor stands where the anchor stood.
      const at = events.findIndex((e) => originalIdOf(e) === anchor);
      if (at >= 0) return events.slice(at + 1);
    }
    for (let i = events.length - 1; i >= 0; i--) if (events[i]!.isSynthetic()) return events.slice(i + 1);
    return events;
  }
}
