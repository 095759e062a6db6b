import { CorruptedRecordError } from '../errors.js';
import type { Logger } from '../logging.js';
import { Session } from '../session/Session.js';
import { describeType } from '../validation/inputs.js';

/** A session row as a durable store keeps it; metadata is JSON text, or the object a JSON column returns. */
export interface StoredSession {
  id: string;
  userId: string;
  createdAt: Date;
  expiresAt: Date | null;
  metadata: unknown;
}

/**
 * Rebuilds a session from its row. A row this library cannot have written (metadata that is not a JSON
 * object, an invalid date or owner) throws `CorruptedRecordError` naming the session, never a bare
 * SyntaxError.
 */
export function decodeSession(row: StoredSession): Session {
  const sessionId = String(row.id);
  const corrupted = (field: string, problem: string, cause?: unknown) =>
    new CorruptedRecordError({ sessionId, field, problem }, cause === undefined ? undefined : { cause });
  let metadata: unknown = row.metadata ?? {};
  if (typeof metadata === 'string') {
    try {
      metadata = JSON.parse(metadata);
    } catch (error) {
      throw corrupted('metadata', 'is not JSON', error);
    }
  }
  if (typeof metadata !== 'object' || metadata === null || Array.isArray(metadata)) {
    throw corrupted('metadata', `is ${describeType(metadata)}, not an object`);
  }
  try {
    return Session.create({
      id: sessionId,
      userId: row.userId,
      createdAt: row.createdAt,
      expiresAt: row.expiresAt,
      metadata: metadata as Record<string, unknown>,
    });
  } catch (error) {
    throw corrupted('row', `cannot be read: ${(error as Error).message}`, error);
  }
}

/**
 * A user's sessions for a listing: one corrupted row must not hide the others. Each unreadable session is
 * left out and reported through the logger at error level, with the `CorruptedRecordError` naming it;
 * `findById` of that session throws the same error.
 */
export function readableSessions<R>(rows: readonly R[], decode: (row: R) => Session, logger: Logger, userId: string): Session[] {
  const out: Session[] = [];
  for (const row of rows) {
    try {
      out.push(decode(row));
    } catch (error) {
      if (!(error instanceof CorruptedRecordError)) throw error;
      logger.error('a corrupted session row was left out of the listing', {
        userId,
        sessionId: error.sessionId,
        error: error.message,
      });
    }
  }
  return out;
}
