import { InvalidArgumentError, requirePositiveInt } from '../../errors.js';
import type { Message } from '../../session/Message.js';
import { defaultTokenCountEstimator } from '../../tokens/TiktokenTokenCountEstimator.js';
import type { TokenCountEstimator } from '../../tokens/TokenCountEstimator.js';
import { requireRequest, type CompactionRequest } from '../CompactionRequest.js';
import type { CompactionResult } from '../CompactionResult.js';
import type { CompactionStrategy } from '../CompactionStrategy.js';
import { consumedToolMessages, replaceInPlace } from './replaceInPlace.js';
import { RewriteDeferral, type RewriteDeferralOptions } from './rewriteDeferral.js';

export interface ObservationMaskingCompactionStrategyOptions extends RewriteDeferralOptions {
  /** Length of each masked tool response, marker included; default 300 characters. */
  maxChars?: number;
  /**
   * When a tool result counts as consumed: 'assistant' (default) — any later assistant message on the same
   * branch, i.e. the model has seen it; 'assistant-text' — a later assistant message with text.
   */
  consumedBy?: 'assistant' | 'assistant-text';
  tokenCountEstimator?: TokenCountEstimator;
}

/** The `compactionSource` of the masked copies. */
export const OBSERVATION_MASKING_SOURCE = 'observation-masking';

/** Below this an excerpt is all marker and no content. */
const MIN_MAX_CHARS = 80;

/**
 * A head + tail excerpt of `text` at most `maxChars` long (marker included), or `text` itself when it is
 * short enough. Because the result never exceeds `maxChars`, masking an excerpt again changes nothing.
 */
export function maskExcerpt(text: string, maxChars: number): string {
  if (text.length <= maxChars) return text;
  const marker = (omitted: number) => `\n[… ${omitted} of ${text.length} characters masked …]\n`;
  // The widest marker (omitted = text.length) bounds the real one, so the total stays within maxChars.
  const budget = Math.max(0, maxChars - marker(text.length).length);
  const head = Math.ceil(budget / 2);
  const tail = budget - head;
  return text.slice(0, head) + marker(text.length - budget) + (tail > 0 ? text.slice(text.length - tail) : '');
}

/**
 * Observation masking (the cheapest first measure): tool results the model has already answered are
 * replaced by a head + tail excerpt with a marker. Unconsumed results, assistant and user messages and
 * synthetic events are never changed. Each masked event's original is archived (still readable with
 * `EventFilter.all()`) and a copy with `maskedFrom: <original id>` takes its place in the window, so the
 * conversation keeps its shape: every tool call still has its result.
 *
 * Masking rewrites messages inside the prompt prefix the provider has cached. With `minSavedTokens` it masks in
 * steps — only when that many tokens are saved at once, or when the cache has probably expired (`cacheTtlMs`) —
 * instead of one result per turn, each of which would make every later call miss the cache from there on.
 */
export class ObservationMaskingCompactionStrategy implements CompactionStrategy {
  static readonly DEFAULT_MAX_CHARS = 300;
  readonly maxChars: number;
  readonly consumedBy: 'assistant' | 'assistant-text';
  readonly tokenCountEstimator: TokenCountEstimator;
  /** The in-place rewrite deferral (`minSavedTokens` 0: none). */
  readonly deferral: RewriteDeferral;

  constructor(options: ObservationMaskingCompactionStrategyOptions = {}) {
    const opts = options ?? {};
    this.maxChars = requirePositiveInt(opts.maxChars ?? ObservationMaskingCompactionStrategy.DEFAULT_MAX_CHARS, 'maxChars');
    if (this.maxChars < MIN_MAX_CHARS) throw new InvalidArgumentError(`maxChars must be at least ${MIN_MAX_CHARS}`);
    const consumedBy = opts.consumedBy ?? 'assistant';
    if (consumedBy !== 'assistant' && consumedBy !== 'assistant-text') {
      throw new InvalidArgumentError("consumedBy must be 'assistant' or 'assistant-text'");
    }
    this.consumedBy = consumedBy;
    this.tokenCountEstimator = opts.tokenCountEstimator ?? defaultTokenCountEstimator();
    this.deferral = new RewriteDeferral(opts);
  }

  async compact(request: CompactionRequest): Promise<CompactionResult> {
    const { events } = requireRequest(request);
    const replacements = new Map<number, Message>();
    for (const i of consumedToolMessages(events, this.consumedBy === 'assistant-text')) {
      const event = events[i]!;
      if (event.isSynthetic() || event.isPinned() || event.message.type !== 'tool') continue;
      let changed = false;
      const responses = event.message.responses.map((r) => {
        const responseData = maskExcerpt(r.responseData, this.maxChars);
        if (responseData === r.responseData) return r;
        changed = true;
        return { ...r, responseData };
      });
      if (changed) replacements.set(i, { type: 'tool', responses });
    }
    return this.deferral.apply(
      request,
      replaceInPlace(events, replacements, OBSERVATION_MASKING_SOURCE, this.tokenCountEstimator),
    );
  }
}
