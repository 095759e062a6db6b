import type { ProviderPreset } from 'session-compaction/spi';

/** What a conversation's lower bounds are made of, in tokens. */
export interface ConversationShape {
  /** Every message of the conversation (each is input to at least one call). */
  inputTokens: number;
  /** The recorded replies (output). */
  outputTokens: number;
  /** The leading system messages: the instructions a stateless API needs in every request. */
  systemTokens: number;
  /** Model calls (requests) in the replay. */
  calls: number;
  /** Tokens of the whole history sent at each call (growing); for the perfect-cache reference. */
  historyTokensAtCall?: readonly number[];
}

/** Per provider preset, the two lower bounds of one conversation's cost (money in the preset's currency). */
export interface ConversationFloor {
  preset: string;
  /** Every message sent exactly once, uncached, plus the replies. */
  sendOnce: number;
  /**
   * `sendOnce` plus the system messages re-read on every call after the first at the cache-read price —
   * the least any policy can pay that keeps the agent's instructions in its prompts, as every strategy of
   * this library and every peer does.
   */
  withSystem: number;
  /**
   * The whole history sent at every call with perfect caching: each message billed once when first sent (at
   * the cache-write price where the provider bills writes) and re-read at the cached price on every later call,
   * plus the replies. Not a bound: a reference for what keeping everything costs when the cache never misses.
   * NaN without `historyTokensAtCall`.
   */
  perfectCache: number;
}

/**
 * Lower bounds, not estimates: expiry, minimum cacheable lengths and cache writes only make a real
 * conversation dearer, so they are left out. A context policy can only lower what it sends; the replies and
 * each message's first reading are paid whatever it does.
 */
export function conversationFloors(shape: ConversationShape, presets: readonly ProviderPreset[]): ConversationFloor[] {
  return presets.map(({ name, prices }) => {
    const sendOnce = (shape.inputTokens * prices.inputPerMTok + shape.outputTokens * prices.outputPerMTok) / 1e6;
    const rereads = Math.max(0, shape.calls - 1) * shape.systemTokens;
    const cached = prices.cachedInputPerMTok ?? prices.inputPerMTok;
    let perfectCache = Number.NaN;
    if (shape.historyTokensAtCall !== undefined) {
      let previous = 0;
      let micro = shape.outputTokens * prices.outputPerMTok;
      for (const tokens of shape.historyTokensAtCall) {
        micro += Math.max(0, tokens - previous) * (prices.cacheWritePerMTok ?? prices.inputPerMTok) + previous * cached;
        previous = Math.max(previous, tokens);
      }
      perfectCache = micro / 1e6;
    }
    return {
      preset: name,
      sendOnce,
      withSystem: sendOnce + (rereads * cached) / 1e6,
      perfectCache,
    };
  });
}
