import { createHash } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import type { Message } from '../session/Message.js';
import { SessionEvent } from '../session/SessionEvent.js';
import type { PersistableMessage } from './ChatProvider.js';

import { METADATA_NATIVE } from '../session/nativeMetadata.js';

/**
 * Metadata key of a framework's own form of a message, kept next to the neutral Message when the Message
 * cannot say everything (content blocks, signatures, provider options, images...). It holds
 * `{ format, value, of }`: the framework (e.g. 'anthropic'), its JSON form, and a fingerprint of the Message
 * it was stored with. Redaction removes it with the content.
 */
export { METADATA_NATIVE };

export interface NativeRecord {
  format: string;
  /** JSON (bytes and URLs tagged, see `encodeNative`). */
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

/** JSON with object keys in sorted order and `undefined` members left out: equal values, equal text. */
export function stableJson(value: unknown): string {
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
 * stored form is JSON (see `encodeNative`) and a copy, so a caller changing its object afterwards cannot
 * change the log.
 */
export function withNative(message: Message, format: string, original: unknown, derived: unknown): PersistableMessage {
  const value = encodeNative(original);
  if (isDeepStrictEqual(value, encodeNative(derived))) return { message };
  const record: NativeRecord = { format, value, of: messageFingerprint(message) };
  return { message, metadata: { [METADATA_NATIVE]: record } };
}

/** The stored native form of `item` in `format`, if it has one and it still stands for the item's Message. */
export function nativeValue(item: SessionEvent | Message, format: string): unknown {
  if (!(item instanceof SessionEvent)) return undefined;
  const record = item.metadata[METADATA_NATIVE] as Partial<NativeRecord> | undefined;
  if (record === undefined || record === null || typeof record !== 'object' || record.format !== format) return undefined;
  // Decoding builds a fresh copy: the caller may hand it to an SDK that mutates its arguments.
  return record.of === messageFingerprint(item.message) ? decodeNative(record.value) : undefined;
}

export function messageOf(item: SessionEvent | Message): Message {
  return item instanceof SessionEvent ? item.message : item;
}

const BINARY = '$sc:binary';
const URL_TAG = '$sc:url';

/**
 * The JSON form of a message as stored in event metadata: `Uint8Array`, `ArrayBuffer` and `Buffer` become
 * `{ "$sc:binary": kind, base64 }`, `URL` objects `{ "$sc:url": href }`, and keys whose value is `undefined`
 * are left out (as JSON leaves them out).
 */
export function encodeNative(value: unknown): unknown {
  if (value instanceof URL) return { [URL_TAG]: value.href };
  if (value instanceof Uint8Array) {
    const kind = Buffer.isBuffer(value) ? 'buffer' : 'uint8array';
    return { [BINARY]: kind, base64: Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('base64') };
  }
  if (value instanceof ArrayBuffer) return { [BINARY]: 'arraybuffer', base64: Buffer.from(value).toString('base64') };
  if (Array.isArray(value)) return value.map(encodeNative);
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) if (v !== undefined) out[k] = encodeNative(v);
    return out;
  }
  return value;
}

export function decodeNative(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(decodeNative);
  if (value === null || typeof value !== 'object') return value;
  const record = value as Record<string, unknown>;
  if (typeof record[URL_TAG] === 'string') return new URL(record[URL_TAG]);
  if (typeof record[BINARY] === 'string' && typeof record.base64 === 'string') {
    const bytes = Buffer.from(record.base64, 'base64');
    if (record[BINARY] === 'buffer') return bytes;
    const copy = new Uint8Array(bytes.byteLength);
    copy.set(bytes);
    return record[BINARY] === 'arraybuffer' ? copy.buffer : copy;
  }
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(record)) out[k] = decodeNative(v);
  return out;
}
