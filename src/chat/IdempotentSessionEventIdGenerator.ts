import { createHash } from 'node:crypto';
import { InvalidArgumentError } from '../errors.js';
import { messageName, messageText, type Message } from '../session/Message.js';
import { SESSION_ID_CONTEXT_KEY, type EventIdContext, type SessionEventIdGenerator } from './eventIdGenerators.js';

/** The Java enum names (`MessageType.USER` ...), so ids derived here equal the Java design's ids. */
const JAVA_MESSAGE_TYPE = { user: 'USER', assistant: 'ASSISTANT', system: 'SYSTEM', tool: 'TOOL' } as const;

/**
 * Deterministic event ids, so that a retried request appends nothing new (the repository ignores an id it
 * already holds). The fingerprint is built from the listed context keys in order:
 * `key + ":" + value` joined with ",", a missing key rendering as "null". Then:
 * - assistant message with tool calls → `fp + ":toolcall:" + callIds.join(",")`;
 * - tool message → `fp + ":toolresp:" + responseIds.join(",")`;
 * - else → `fp + ":" + TYPE + ":" + sha256hex(fp + ":" + TYPE + ":" + text)`.
 *
 * Limitation (as in Java): the same text twice under one fingerprint collides and the second is dropped as a
 * replay. Add a per-request key (e.g. an idempotency key the client sends) to the key list to avoid it.
 */
export class IdempotentSessionEventIdGenerator implements SessionEventIdGenerator {
  readonly contextKeys: readonly string[];

  /** The complete, ordered key list (not appended to the default `[SESSION_ID_CONTEXT_KEY]`). */
  constructor(contextKeys: readonly string[] = [SESSION_ID_CONTEXT_KEY]) {
    if (!Array.isArray(contextKeys) || contextKeys.length === 0) throw new InvalidArgumentError('contextKeys must not be empty');
    for (const key of contextKeys) {
      if (typeof key !== 'string' || key.trim() === '') throw new InvalidArgumentError('contextKeys must not contain blank keys');
    }
    this.contextKeys = Object.freeze([...contextKeys]);
  }

  fingerprint(context: EventIdContext): string {
    return this.contextKeys.map((key) => `${key}:${render(context[key])}`).join(',');
  }

  generate(context: EventIdContext, message: Message): string {
    const fp = this.fingerprint(context);
    if (message.type === 'assistant' && (message.toolCalls?.length ?? 0) > 0) {
      return `${fp}:toolcall:${message.toolCalls!.map((c) => c.id).join(',')}`;
    }
    if (message.type === 'tool') return `${fp}:toolresp:${message.responses.map((r) => r.id).join(',')}`;
    const type = JAVA_MESSAGE_TYPE[message.type];
    // Two participants saying the same words are two messages; an unnamed message keeps the id it always had.
    const name = messageName(message);
    const speaker = name === undefined ? '' : `@${name}`;
    const digest = createHash('sha256')
      .update(`${fp}:${type}${speaker}:${messageText(message) ?? ''}`, 'utf8')
      .digest('hex');
    return `${fp}:${type}:${digest}`;
  }
}

/** Java's `String.valueOf`: null and undefined render as "null". */
function render(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}
