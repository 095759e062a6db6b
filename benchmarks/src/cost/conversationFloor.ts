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
    return {
      preset: name,
      sendOnce,
      withSystem: sendOnce + (rereads * (prices.cachedInputPerMTok ?? prices.inputPerMTok)) / 1e6,
    };
  });
}
