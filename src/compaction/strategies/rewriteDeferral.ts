import { InvalidArgumentError, requirePositiveInt } from '../../errors.js';
import type { SessionEvent } from '../../session/SessionEvent.js';
import type { CompactionRequest } from '../CompactionRequest.js';
import { CompactionResult } from '../CompactionResult.js';
import { DEFAULT_PROMPT_CACHE_TTL_MS, idleSinceLastModelCall } from '../triggers/CacheAwareTrigger.js';
import { originalIdOf } from './replaceInPlace.js';

/**
 * Cache-aware in-place rewriting (masking in steps). A masked tool result changes a message inside the prompt
 * prefix the provider has cached: that call and every later one miss the cache from the masked message on.
 * Masking one result per turn therefore pays the rest of the prompt again on every turn; masking many at once
 * pays it once. These options hold back a rewrite-only compaction until it is worth that price.
 */
export interface RewriteDeferralOptions {
  /**
   * Mask in steps: a compaction that only rewrites events in place (masked copies, no cut, no summary) is
   * applied only when it saves at least this many tokens at once, or when the cache is cold (`cacheTtlMs`).
   * A compaction that also cuts or summarises rewrites the prefix anyway and is always applied, masks
   * included. Default 0: every rewrite is applied at once (no deferral).
   */
  minSavedTokens?: number;
  /**
   * With `minSavedTokens`: the provider's prompt-cache lifetime. When the newest model call (assistant event)
   * is older than this, the cached prefix has probably expired, the next call pays the prompt in full anyway,
   * and any rewrite is applied. Default 5 minutes (`PROVIDER_PRESETS[name].cache.ttlMs`).
   */
  cacheTtlMs?: number;
  /** Clock, for tests and replays; default `() => new Date()`. */
  now?: () => Date;
}

/** The validated settings, shared by the masking strategy and the pipeline. */
export class RewriteDeferral {
  readonly minSavedTokens: number;
  readonly cacheTtlMs: number;
  private readonly now: () => Date;

  constructor(options: RewriteDeferralOptions) {
    const min = options.minSavedTokens ?? 0;
    if (typeof min !== 'number' || !Number.isInteger(min) || min < 0) {
      throw new InvalidArgumentError('minSavedTokens must be a non-negative integer');
    }
    this.minSavedTokens = min;
    this.cacheTtlMs = requirePositiveInt(options.cacheTtlMs ?? DEFAULT_PROMPT_CACHE_TTL_MS, 'cacheTtlMs');
    if (options.now !== undefined && typeof options.now !== 'function') throw new InvalidArgumentError('now must be a function');
    this.now = options.now ?? (() => new Date());
  }

  /**
   * `result`, or a no-op with skip reason 'deferred' when it only rewrites events in place, saves fewer than
   * `minSavedTokens` and the cache is probably still warm. The summariser's usage, if any, stays on it.
   */
  apply(request: CompactionRequest, result: CompactionResult): CompactionResult {
    if (this.minSavedTokens === 0 || result.isNoop()) return result;
    if (result.tokensEstimatedSaved >= this.minSavedTokens) return result;
    if (!isRewriteOnly(request.events, result.compactedEvents)) return result;
    const idle = idleSinceLastModelCall(request.events, this.now());
    if (idle === null || idle > this.cacheTtlMs) return result;
    return new CompactionResult(request.events, [], 0, 'deferred', result.usage);
  }
}

/**
 * True when `after` is `before` with some events replaced, in place, by masked copies of themselves: the same
 * length, and at every position the same event or a copy standing for the same original.
 */
export function isRewriteOnly(before: readonly SessionEvent[], after: readonly SessionEvent[]): boolean {
  if (before.length !== after.length) return false;
  return before.every((e, i) => e === after[i] || originalIdOf(e) === originalIdOf(after[i]!));
}
