import { InvalidArgumentError } from '../errors.js';
import { hasMethods } from './hasMethods.js';

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

/**
 * A repository that retention (`applyRetention`) can walk and trim: it lists every session with its last
 * activity and removes old archived events. Without it `applyRetention` throws IllegalStateError.
 */
export interface RetentionRepository {
  /** One page of every session with its last activity; a retention pass walks all pages. */
  listSessionActivity(cursor: string | null, limit: number): Promise<SessionActivityPage>;
  /**
   * Removes archived, non-synthetic events matching `criteria`, oldest first, at most `limit`; returns
   * their ids. Never touches the active window, so it does not change the version (no compaction loses
   * its CAS to retention). [] when the session is missing.
   */
  purgeArchivedEvents(id: string, criteria: ArchivePurgeCriteria): Promise<string[]>;
}

/** Whether `repository` is a RetentionRepository: it has every one of its methods. */
export function isRetentionRepository<R>(repository: R): repository is R & RetentionRepository {
  return hasMethods(repository, ['listSessionActivity', 'purgeArchivedEvents']);
}

/** A session's last activity: its newest event's time, or its creation time when that is later. */
export function lastActivity(createdAt: Date, newestEventTimestamp: Date | number | null | undefined): Date {
  if (newestEventTimestamp === null || newestEventTimestamp === undefined) return createdAt;
  const t = typeof newestEventTimestamp === 'number' ? newestEventTimestamp : newestEventTimestamp.getTime();
  return new Date(Math.max(createdAt.getTime(), t));
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
