import { SessionEvent } from '../session/SessionEvent.js';
import type { ChatUsage } from '../summarization/ChatClient.js';

/**
 * Metadata key of a provider-native compaction carried by a summary pair. On the assistant half (the summary)
 * it holds a `NativeCompactionRecord`: the provider's opaque output, kept as the exact JSON text received,
 * replayed verbatim to that provider; on the user half (the shadow prompt) only `{ provider }`, so that a
 * converter replaying the native form knows to leave the shadow prompt out. The summary's own text (the
 * assistant message) is the library's summary of the same range: what every other provider reads.
 */
export const METADATA_NATIVE_COMPACTION = 'nativeCompaction';

/** `summaryMethod` of a summary pair that carries a native compaction. */
export const NATIVE_SUMMARY_METHOD = 'native';

/** The provider tag of an OpenAI Responses API compaction (`/responses/compact`: user messages, then a `compaction` item). */
export const OPENAI_NATIVE_COMPACTION = 'openai-responses';
/** The provider tag of an Anthropic Messages API compaction (an assistant message holding one `compaction` block). */
export const ANTHROPIC_NATIVE_COMPACTION = 'anthropic-messages';

export interface NativeCompactionRecord {
  /** Which provider (and wire format) the payload is for, e.g. 'openai-responses' or 'anthropic-messages'. */
  provider: string;
  /**
   * The provider's output as JSON text, exactly as received and stored: stored as text, not as a JSON value,
   * so that no database normalises it (PostgreSQL's jsonb reorders keys) and the replay is byte-exact.
   */
  payload: string;
  /** The model that compacted, when known. */
  model?: string;
}

/** What a `NativeCompactor` is asked to compact: the events a summary would replace, in log order. */
export interface NativeCompactionInput {
  sessionId: string;
  /**
   * Prior summaries of the window first (a prior native compaction of this provider is sent back verbatim,
   * others as their text), then the events to compact (originals of masked copies).
   */
  events: readonly SessionEvent[];
  /** Extra instructions for this summary (from `beforeCompaction` hooks); empty when none. */
  instructions: readonly string[];
}

/** What the provider returned. */
export interface NativeCompactionOutput {
  /** The provider's output, JSON-serialisable; stored as `JSON.stringify(payload)` (see NativeCompactionRecord). */
  payload: unknown;
  /** A readable summary the provider returned with it (Anthropic's block `content`), or null (OpenAI's is encrypted). */
  text: string | null;
  usage: ChatUsage | null;
  model?: string;
}

/**
 * Asks a provider to compact a range of the conversation (OpenAI `/responses/compact`, Anthropic's
 * `compaction` request). Implementations: `OpenAIResponsesCompactor` (`session-compaction/openai`),
 * `AnthropicCompactor` (`session-compaction/anthropic`). A failure is a rejected promise; the strategy then
 * falls back to the library's summariser.
 */
export interface NativeCompactor {
  /** The provider tag stored with the payload; converters replay only payloads of their own provider. */
  readonly provider: string;
  readonly model?: string;
  compact(input: NativeCompactionInput): Promise<NativeCompactionOutput>;
}

/** The record on a summary event, or undefined (not a native compaction, or a malformed record). */
export function nativeCompactionRecord(event: SessionEvent): NativeCompactionRecord | undefined {
  const r = event.metadata[METADATA_NATIVE_COMPACTION] as Partial<NativeCompactionRecord> | undefined | null;
  if (r === undefined || r === null || typeof r !== 'object' || typeof r.provider !== 'string') return undefined;
  if (typeof r.payload !== 'string') return undefined;
  return r as NativeCompactionRecord;
}

/**
 * The native payload of `event` for `provider`, parsed from its stored text (a fresh copy each call), or
 * undefined: not a live native summary of that provider. A summary awaiting regeneration after a redaction
 * has no payload (redaction removes it), so it is never replayed.
 */
export function nativeCompactionPayload(event: SessionEvent, provider: string): unknown {
  if (!event.isSynthetic() || event.messageType !== 'assistant') return undefined;
  const record = nativeCompactionRecord(event);
  if (record === undefined || record.provider !== provider) return undefined;
  try {
    return JSON.parse(record.payload) as unknown;
  } catch {
    return undefined;
  }
}

/** True for the shadow prompt (user half) of a native summary pair of `provider`. */
export function isNativeCompactionShadow(event: SessionEvent, provider: string): boolean {
  if (!event.isSynthetic() || event.messageType !== 'user') return false;
  const r = event.metadata[METADATA_NATIVE_COMPACTION] as { provider?: unknown } | undefined | null;
  return r !== undefined && r !== null && typeof r === 'object' && r.provider === provider;
}

/** The metadata without any native payload (redaction): the summary falls back to its text everywhere. */
export function withoutNativeCompaction(metadata: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const copy = { ...metadata };
  delete copy[METADATA_NATIVE_COMPACTION];
  return copy;
}

/**
 * How a converter for `provider` renders `items` (events or plain messages, in prompt order): for each native
 * summary of that provider, its index → the parsed payload; for its shadow prompt right before it, its index →
 * null (left out: the provider's output replaces the whole range, with no prompt of ours before it). Any other
 * item, and a shadow whose summary has no live payload, is absent: rendered from its Message as usual.
 */
export function nativeCompactionPlan(items: readonly unknown[], provider: string): Map<number, unknown> {
  const plan = new Map<number, unknown>();
  const asEvent = (item: unknown): SessionEvent | undefined => (item instanceof SessionEvent ? item : undefined);
  items.forEach((item, i) => {
    const event = asEvent(item);
    if (event === undefined) return;
    const payload = nativeCompactionPayload(event, provider);
    if (payload === undefined) return;
    plan.set(i, payload);
    const before = asEvent(items[i - 1]);
    if (before !== undefined && isNativeCompactionShadow(before, provider)) plan.set(i - 1, null);
  });
  return plan;
}
