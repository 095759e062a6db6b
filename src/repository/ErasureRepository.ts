import { createHash } from 'node:crypto';
import { IllegalStateError } from '../errors.js';
import type { SessionLike } from '../session/Session.js';
import type { EventKindCounts } from './eventKinds.js';
import { hasMethods } from './hasMethods.js';

/**
 * What stops a deleted session id from being used again. It keeps no content and not the owner's id, only
 * a SHA-256 of it (so the owner, and only the owner, can recreate the id with `allowRecreate`).
 */
export interface Tombstone {
  sessionId: string;
  /** `ownerHash(userId)` of the deleted session's owner. */
  ownerHash: string;
  deletedAt: Date;
  /** When the tombstone stops blocking the id; null: never. */
  expiresAt: Date | null;
}

export interface ErasedSession extends EventKindCounts {
  sessionId: string;
  userId: string;
}

export interface EraseSessionOptions {
  /** Written in the same atomic step as the delete; null: no tombstone. */
  tombstone: { deletedAt: Date; expiresAt: Date | null } | null;
  /**
   * Erase only when the session's last activity (see SessionActivity) is before this instant, checked in
   * the same atomic step, so an append that lands meanwhile keeps the session alive.
   */
  idleBefore?: Date;
}

/**
 * A repository that erases sessions and keeps tombstones, so that a deleted session id cannot be taken over.
 * `save` / `saveIfAbsent` of a tombstoned id must be refused inside the store. Without this capability
 * `delete` reads the counts, then deletes (not atomic), and writes no tombstone.
 */
export interface ErasureRepository {
  /**
   * Deletes the session with its whole log (and everything stored with the rows, such as full-text index
   * entries) and writes the tombstone, atomically. Returns what was removed, or null when there was no
   * such session (or it was not idle). Appends and compactions afterwards fail with "Session not found".
   */
  eraseSession(id: string, options: EraseSessionOptions): Promise<ErasedSession | null>;
  /** The tombstone of `id`, expired or not; null when there is none. */
  findTombstone(id: string): Promise<Tombstone | null>;
  /**
   * Inserts `session` unless its id exists, first removing a tombstone of the same owner, atomically. True
   * when inserted; false when a session has the id; IllegalStateError when another owner's tombstone blocks.
   */
  recreateSession(session: SessionLike): Promise<boolean>;
  /** Removes tombstones whose expiresAt is before `before` (at most `limit`; only `sessionId`'s when given); returns how many. */
  purgeTombstones(before: Date, limit: number, sessionId?: string): Promise<number>;
}

/** Whether `repository` is an ErasureRepository: it has every one of its methods. */
export function isErasureRepository<R>(repository: R): repository is R & ErasureRepository {
  return hasMethods(repository, ['eraseSession', 'findTombstone', 'recreateSession', 'purgeTombstones']);
}

/** SHA-256 hex of a user id: what a tombstone keeps of the owner. */
export function ownerHash(userId: string): string {
  return createHash('sha256').update(userId, 'utf8').digest('hex');
}

/** The one message for an id blocked by a tombstone. */
export function sessionDeletedError(id: string, tombstone?: Tombstone | null): IllegalStateError {
  const when = tombstone ? ` at ${tombstone.deletedAt.toISOString()}` : '';
  const until =
    tombstone === undefined || tombstone === null
      ? ''
      : tombstone.expiresAt === null
        ? '; the id stays blocked'
        : `; the id stays blocked until ${tombstone.expiresAt.toISOString()}`;
  return new IllegalStateError(
    `Session ${id} was deleted${when}${until}: a deleted session id cannot be created again ` +
      '(its original owner may pass allowRecreate: true)',
  );
}

/** The SQL schema version (SQLite and PostgreSQL) that adds tombstones. */
export const TOMBSTONE_SCHEMA_VERSION = 3;

/** Marker a backend puts into its refusal (SQL trigger, Lua reply) when a save hits a tombstone. */
export const TOMBSTONED_MARKER = 'session_compaction: session id is tombstoned';

export function isTombstonedFailure(error: unknown): boolean {
  return error instanceof Error && error.message.includes(TOMBSTONED_MARKER);
}
