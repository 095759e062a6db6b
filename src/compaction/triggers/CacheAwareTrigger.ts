import { InvalidArgumentError, requirePositiveInt } from '../../errors.js';
import { defaultTokenCountEstimator } from '../../tokens/TiktokenTokenCountEstimator.js';
import type { TokenCountEstimator } from '../../tokens/TokenCountEstimator.js';
import type { SessionEvent } from '../../session/SessionEvent.js';
import type { CompactionRequest } from '../CompactionRequest.js';
import type { CompactionTrigger } from '../CompactionTrigger.js';
import { CompositeCompactionTrigger } from './CompositeCompactionTrigger.js';
import { TokenCountTrigger } from './TokenCountTrigger.js';

/** Five minutes: the default lifetime of both OpenAI's and Anthropic's prompt caches. */
export const DEFAULT_PROMPT_CACHE_TTL_MS = 5 * 60_000;

export interface CacheAwareTriggerOptions {
  /** Compact at this many tokens whatever the cache: the window is about to overflow. */
  maxTokens: number;
  /**
   * Compact at this many tokens when the provider's cache has probably expired (a compaction then rewrites
   * a prefix that would have been billed in full anyway). Default `maxTokens`: compact only when needed,
   * but prefer a cold moment; set it lower to compact ahead, at the start of a session after a pause.
   */
  coldTokens?: number;
  /** How long the provider keeps an unused prefix; default 5 minutes. */
  cacheTtlMs?: number;
  /** Clock, for tests and replays; default `() => new Date()`. */
  now?: () => Date;
  /** Defaults to the shared js-tiktoken (o200k_base) estimator. */
  tokenCountEstimator?: TokenCountEstimator;
}

/**
 * Milliseconds from the newest model call in `events` (the newest non-synthetic assistant event: when the
 * provider last read the prompt prefix) to `now`, or null when the window has none (it was never cached).
 */
export function idleSinceLastModelCall(events: readonly SessionEvent[], now: Date): number | null {
  let newest = -Infinity;
  for (const e of events) {
    if (e.messageType === 'assistant' && !e.isSynthetic()) newest = Math.max(newest, e.timestamp.getTime());
  }
  return newest === -Infinity ? null : now.getTime() - newest;
}

/**
 * Defers compaction while the provider's prompt cache probably holds the conversation's prefix and does it
 * when the cache is probably cold: `maxTokens` OR (`coldTokens` AND idle for longer than `cacheTtlMs`).
 *
 * "Idle" is the time since the newest assistant event — the last model call, when the provider last read
 * the prefix. Evaluated after a reply it is ~0 (warm: only `maxTokens` fires); evaluated before the next call
 * (SessionMemory's `compactBeforeCall`, or a replay) it is the user's pause. A window without an assistant
 * event was never cached: cold.
 */
export class CacheAwareTrigger implements CompactionTrigger {
  readonly maxTokens: number;
  readonly coldTokens: number;
  readonly cacheTtlMs: number;
  private readonly now: () => Date;
  private readonly composite: CompositeCompactionTrigger;

  constructor(options: CacheAwareTriggerOptions) {
    if (options === null || options === undefined) throw new InvalidArgumentError('options must not be null');
    this.maxTokens = requirePositiveInt(options.maxTokens, 'maxTokens');
    this.coldTokens = requirePositiveInt(options.coldTokens ?? this.maxTokens, 'coldTokens');
    if (this.coldTokens > this.maxTokens) throw new InvalidArgumentError('coldTokens must not exceed maxTokens');
    this.cacheTtlMs = requirePositiveInt(options.cacheTtlMs ?? DEFAULT_PROMPT_CACHE_TTL_MS, 'cacheTtlMs');
    if (options.now !== undefined && typeof options.now !== 'function') throw new InvalidArgumentError('now must be a function');
    this.now = options.now ?? (() => new Date());
    const estimator = options.tokenCountEstimator ?? defaultTokenCountEstimator();
    const tokens = (threshold: number) => new TokenCountTrigger({ threshold, tokenCountEstimator: estimator });
    this.composite = CompositeCompactionTrigger.anyOf(
      tokens(this.maxTokens),
      CompositeCompactionTrigger.allOf((request) => this.isCacheCold(request), tokens(this.coldTokens)),
    );
  }

  /** Milliseconds since the last model call (the newest assistant event), or null when there was none. */
  idleSinceLastCall(request: CompactionRequest): number | null {
    return idleSinceLastModelCall(request.events, this.now());
  }

  /** Whether the provider has probably dropped the cached prefix by now. */
  isCacheCold(request: CompactionRequest): boolean {
    const idle = this.idleSinceLastCall(request);
    return idle === null || idle > this.cacheTtlMs;
  }

  shouldCompact(request: CompactionRequest): Promise<boolean> {
    return this.composite.shouldCompact(request);
  }
}
