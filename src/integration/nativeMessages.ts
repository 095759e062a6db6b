import { createHash } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import type { Message } from '../session/Message.js';
import { SessionEvent } from '../session/SessionEvent.js';
import type { PersistableMessage } from './ChatProvider.js';

/**
 * Metadata key of a framework's own form of a message, kept next to the neutral Message when the Message
 * cannot say everything (content blocks, signatures, provider options, images...). It holds
 * `{ format, value, of }`: the framework (e.g. 'anthropic'), its JSON form, and a fingerprint of the Message
 * it was stored with.
 */
export const METADATA_NATIVE = 'native';

export interface NativeRecord {
  format: string;
  value: unknown;
  /** Fingerprint of the Message the value stands for; a strategy that rewrites the Message makes it stale. */
  of: string;
}

/**
 * A stable digest of a message's content. A compaction strategy that rewrites an event (e.g. masking a tool
 * result) keeps the metadata but changes the message, so the stored native form no longer matches and the
 * converters fall back to the rewritten Message instead of resurrecting what was masked.
 */
export function messageFingerprint(message: Message): string {
  return createHash('sha256').update(stableJson(message)).digest('base64url').slice(0, 22);
}

function stableJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value ?? null);
  if (Array.isArray(value)) return `[${value.map(stableJson).join(',')}]`;
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, v]) => v !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${stableJson(v)}`).join(',')}}`;
}

/**
 * The log entry for one framework message: the neutral Message, plus the framework's own form in metadata
 * only when converting the Message back would not give the original (`derived` is that conversion). The
 * value is deep-copied, so a caller changing its object afterwards cannot change the log.
 */
export function withNative(message: Message, format: string, original: unknown, derived: unknown): PersistableMessage {
  if (isDeepStrictEqual(original, derived)) return { message };
  const record: NativeRecord = { format, value: structuredClone(original), of: messageFingerprint(message) };
  return { message, metadata: { [METADATA_NATIVE]: record } };
}

/** The stored native form of `item` in `format`, if it has one and it still stands for the item's Message. */
export function nativeValue(item: SessionEvent | Message, format: string): unknown {
  if (!(item instanceof SessionEvent)) return undefined;
  const record = item.metadata[METADATA_NATIVE] as Partial<NativeRecord> | undefined;
  if (record === undefined || record === null || typeof record !== 'object' || record.format !== format) return undefined;
  // A copy: the caller may hand it to an SDK that mutates its arguments.
  return record.of === messageFingerprint(item.message) ? structuredClone(record.value) : undefined;
}

export function messageOf(item: SessionEvent | Message): Message {
  return item instanceof SessionEvent ? item.message : item;
}
