import { randomUUID } from 'node:crypto';
import { InvalidArgumentError } from '../errors.js';
import type { Message } from '../session/Message.js';

/** Context key holding the session id (the Java `ChatMemory.CONVERSATION_ID`), so fingerprints match the Java design. */
export const SESSION_ID_CONTEXT_KEY = 'chat_memory_conversation_id';
/** Context key holding the caller's user id. */
export const USER_ID_CONTEXT_KEY = 'chat_memory_user_id';

/**
 * What an id generator sees of one request: the trusted session and user ids under the two keys above,
 * plus whatever the application put in the request's `context` (e.g. an HTTP idempotency key).
 */
export type EventIdContext = Readonly<Record<string, unknown>>;

/** Chooses the id of an event SessionMemory is about to append (a request message or a model reply). */
export interface SessionEventIdGenerator {
  generate(context: EventIdContext, message: Message): string;
}

export type SessionEventIdGeneratorFunction = (context: EventIdContext, message: Message) => string;
export type SessionEventIdGeneratorLike = SessionEventIdGenerator | SessionEventIdGeneratorFunction;

/** A fresh random UUID per event: never deduplicates (the default). */
export function randomEventIdGenerator(): SessionEventIdGenerator {
  return { generate: () => randomUUID() };
}

export function toEventIdGenerator(generator: SessionEventIdGeneratorLike | undefined, name: string): SessionEventIdGenerator {
  if (generator === undefined) return randomEventIdGenerator();
  if (typeof generator === 'function') return { generate: generator };
  if (generator !== null && typeof generator === 'object' && typeof generator.generate === 'function') return generator;
  throw new InvalidArgumentError(`${name} must not be null`);
}
