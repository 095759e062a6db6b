import { createHash } from 'node:crypto';
import { IllegalStateError, InvalidArgumentError, requireText } from '../errors.js';
import type { SessionLike } from '../session/Session.js';
import { SessionEvent } from '../session/SessionEvent.js';

/**
 * The data-lifecycle part of the persistence SPI: erasure with tombstones, in-place rewrites (redaction),
 * archive retention. Every method is optional so that a custom repository keeps compiling; the service
 * refuses the operations that need a missing method with an IllegalStateError naming it.
 */

/** Metadata key of a masked copy (kept in sync with compaction/coverage.ts, which sits above this layer). */
const MASKED_FROM = 'maskedFrom';

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

/** Events of a log by kind; every event is exactly one kind. */
export interface EventKindCounts {
  /** Original events of the active window. */
  activeEvents: number;
  /** Original events of the archive. */
  archivedEvents: number;
  /** Synthetic events: summary pairs (both halves) and other compaction output. */
  summaries: number;
  /** Masked copies standing in for archived originals (observation masking, content policies). */
  maskedCopies: number;
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

/** Which archived events a retention pass removes from one session. Synthetic events are never removed. */
export interface ArchivePurgeCriteria {
  /** Archived events with a timestamp before this instant. */
  before?: Date;
  /** The newest N archived events stay; older ones go (synthetic ones count toward N but always stay). */
  keepLast?: number;
  /** At most this many events per call: a call is one short transaction. */
  limit: number;
}

export interface SessionActivity {
  id: string;
  userId: string;
  /** The timestamp of the newest event in log order, or the creation time when later or without events. */
  lastActiveAt: Date;
}

export interface SessionActivityPage {
  sessions: SessionActivity[];
  /** Pass back to read the next page; null when this was the last one. */
  cursor: string | null;
}

/** The optional lifecycle methods of SessionRepository. */
export interface SessionLifecycleOperations {
  /**
   * Deletes the session with its whole log (and everything stored with the rows, such as full-text index
   * entries) and writes the tombstone, atomically. Returns what was removed, or null when there was no
   * such session (or it was not idle). Appends and compactions afterwards fail with "Session not found".
   */
  eraseSession?(id: string, options: EraseSessionOptions): Promise<ErasedSession | null>;
  /** The tombstone of `id`, expired or not; null when there is none. */
  findTombstone?(id: string): Promise<Tombstone | null>;
  /**
   * Inserts `session` unless its id exists, first removing a tombstone of the same owner, atomically. True
   * when inserted; false when a session has the id; IllegalStateError when another owner's tombstone blocks.
   */
  recreateSession?(session: SessionLike): Promise<boolean>;
  /** Removes tombstones whose expiresAt is before `before` (at most `limit`; only `sessionId`'s when given); returns how many. */
  purgeTombstones?(before: Date, limit: number, sessionId?: string): Promise<number>;
  /**
   * Replaces events of the log in place, matched by id: same position, same archived flag, new content and
   * metadata. CAS: on a version mismatch nothing changes and it returns false; otherwise the version is
   * bumped. "Session not found: <id>" / "Event not found: <eventId>" (InvalidArgumentError) change nothing.
   */
  rewriteEvents?(id: string, events: readonly SessionEvent[], expectedVersion: number): Promise<boolean>;
  /**
   * Removes archived, non-synthetic events matching `criteria`, oldest first, at most `limit`; returns
   * their ids. Never touches the active window, so it does not change the version (no compaction loses
   * its CAS to retention). [] when the session is missing.
   */
  purgeArchivedEvents?(id: string, criteria: ArchivePurgeCriteria): Promise<string[]>;
  /** One page of every session with its last activity; a retention pass walks all pages. */
  listSessionActivity?(cursor: string | null, limit: number): Promise<SessionActivityPage>;
  /**
   * Makes the bytes of what was just erased, rewritten or purged unrecoverable from the store's files where
   * the backend can do that itself (SQLite with `secureDelete`); a no-op elsewhere. The service calls it once
   * after each lifecycle operation.
   */
  reclaimStorage?(): Promise<void>;
}

/** SHA-256 hex of a user id: what a tombstone keeps of the owner. */
export function ownerHash(userId: string): string {
  return createHash('sha256').update(userId, 'utf8').digest('hex');
}

export type EventKind = keyof EventKindCounts;

/** The kind an event counts as in erasure reports. */
export function eventKind(event: Pick<SessionEvent, 'archived' | 'metadata'>): EventKind {
  if (event.metadata[SessionEvent.METADATA_SYNTHETIC] === true) return 'summaries';
  if (typeof event.metadata[MASKED_FROM] === 'string') return 'maskedCopies';
  return event.archived ? 'archivedEvents' : 'activeEvents';
}

export function emptyKindCounts(): EventKindCounts {
  return { activeEvents: 0, archivedEvents: 0, summaries: 0, maskedCopies: 0 };
}

export function countKinds(events: Iterable<Pick<SessionEvent, 'archived' | 'metadata'>>): EventKindCounts {
  const counts = emptyKindCounts();
  for (const e of events) counts[eventKind(e)]++;
  return counts;
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

/** A session's last activity: its newest event's time, or its creation time when that is later. */
export function lastActivity(createdAt: Date, newestEventTimestamp: Date | number | null | undefined): Date {
  if (newestEventTimestamp === null || newestEventTimestamp === undefined) return createdAt;
  const t = typeof newestEventTimestamp === 'number' ? newestEventTimestamp : newestEventTimestamp.getTime();
  return new Date(Math.max(createdAt.getTime(), t));
}

/** Checks a rewriteEvents batch: events of session `id`, each id once. */
export function requireRewriteBatch(id: string, events: readonly SessionEvent[]): void {
  requireText(id, 'sessionId');
  if (!Array.isArray(events) || events.length === 0) throw new InvalidArgumentError('events must not be empty');
  const seen = new Set<string>();
  for (const e of events) {
    if (!(e instanceof SessionEvent)) throw new InvalidArgumentError('event must not be null');
    if (e.sessionId !== id) throw new InvalidArgumentError(`event ${e.id} belongs to session ${e.sessionId}, not ${id}`);
    if (seen.has(e.id)) throw new InvalidArgumentError(`event ${e.id} appears twice`);
    seen.add(e.id);
  }
}

/** Checks retention criteria before any backend sees them. */
export function requirePurgeCriteria(criteria: ArchivePurgeCriteria): ArchivePurgeCriteria {
  if (criteria === null || criteria === undefined) throw new InvalidArgumentError('criteria must not be null');
  const { before, keepLast, limit } = criteria;
  if (before !== undefined && !(before instanceof Date && !Number.isNaN(before.getTime())))
    throw new InvalidArgumentError('before must be a valid Date');
  if (keepLast !== undefined && !(Number.isInteger(keepLast) && keepLast >= 0))
    throw new InvalidArgumentError('keepLast must be an integer >= 0');
  if (!Number.isInteger(limit) || limit <= 0) throw new InvalidArgumentError('limit must be greater than 0');
  return criteria;
}
