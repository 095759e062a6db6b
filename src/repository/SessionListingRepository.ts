import { InvalidArgumentError } from '../errors.js';
import type { Session } from '../session/Session.js';
import type { SessionEvent } from '../session/SessionEvent.js';
import { hasMethods } from './hasMethods.js';

/** The default and the largest page of `listSessions`. */
export const DEFAULT_SESSION_LISTING_LIMIT = 50;
export const MAX_SESSION_LISTING_LIMIT = 1000;

/** What `listSessions` lists: a page after `cursor`, optionally of one user or of ids with a prefix. */
export interface ListSessionsOptions {
  /** From the previous page; absent or null for the first page. */
  cursor?: string | null;
  /** Page size; default 50, at most 1000. */
  limit?: number;
  /** Only this user's sessions (exact match). */
  userId?: string;
  /** Only sessions whose id starts with this text (compared as text: no wildcard is interpreted). */
  idPrefix?: string;
  /**
   * Also read each listed session's active window (`activeWindow`), in one more query for the whole page
   * rather than one per session: for callers that count its tokens. Default false.
   */
  withActiveEvents?: boolean;
}

/** One session with the sizes an operator looks at first, read in the same query as the session. */
export interface SessionListing {
  /** The session as `findById` reads it. */
  session: Session;
  /** The log's CAS version. */
  version: number;
  /** Events of the active window (summaries and masked copies included). */
  activeEvents: number;
  /** Events archived by compactions, kept in the log. */
  archivedEvents: number;
  /** The timestamp of the last event in log order; null for an empty log. */
  lastEventAt: Date | null;
  /** Committed compactions that stand (reverted ones not counted); 0 on a store without compaction records. */
  compactions: number;
  /** With `withActiveEvents`: the active window in log order (as `findEvents(id, EventFilter.active())`). */
  activeWindow?: readonly SessionEvent[];
}

/** One page of `listSessions`. */
export interface SessionListingPage {
  /** In ascending id order. */
  sessions: SessionListing[];
  /** Pass to the next call; null when this was the last page. */
  cursor: string | null;
}

/**
 * A repository that lists its sessions with their sizes, page by page in id order (keyset paging: the cost of
 * a page does not grow with the number of sessions before it), for admin views over large stores.
 */
export interface SessionListingRepository {
  /** A page of sessions in ascending id order, after `cursor`; see ListSessionsOptions. */
  listSessions(options?: ListSessionsOptions): Promise<SessionListingPage>;
}

/** Whether `repository` is a SessionListingRepository: it has every one of its methods. */
export function isSessionListingRepository<R>(repository: R): repository is R & SessionListingRepository {
  return hasMethods(repository, ['listSessions']);
}

/** The options checked and defaulted, as every implementation reads them. */
export function resolveListSessionsOptions(options: ListSessionsOptions | undefined): {
  cursor: string | null;
  limit: number;
  userId: string | null;
  idPrefix: string | null;
  withActiveEvents: boolean;
} {
  const limit = options?.limit ?? DEFAULT_SESSION_LISTING_LIMIT;
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_SESSION_LISTING_LIMIT) {
    throw new InvalidArgumentError(`limit must be an integer from 1 to ${MAX_SESSION_LISTING_LIMIT} (got ${String(limit)})`);
  }
  const text = (value: unknown, name: string): string | null => {
    if (value === undefined || value === null || value === '') return null;
    if (typeof value !== 'string') throw new InvalidArgumentError(`${name} must be a string`);
    return value;
  };
  return {
    cursor: text(options?.cursor, 'cursor'),
    limit,
    userId: text(options?.userId, 'userId'),
    idPrefix: text(options?.idPrefix, 'idPrefix'),
    withActiveEvents: options?.withActiveEvents === true,
  };
}
