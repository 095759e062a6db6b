import { IllegalStateError } from '../errors.js';
import { hasMethods } from './hasMethods.js';

/**
 * A repository that can block new sessions of one user while that user's data is erased. `eraseUser` marks
 * the user before its first sweep and unmarks them after the last one; while the mark holds, every write
 * that would add a session of that user — `save` of a new id, `saveIfAbsent`, `recreateSession`,
 * `forkSession` — is refused inside the store's writing transaction or script (userErasureInProgressError),
 * so nothing the erasure has not seen can appear under the user, whatever the interleaving. The mark keeps
 * only `ownerHash(userId)` and expires by itself at `until` (a crashed erasure never blocks the user for
 * longer).
 */
export interface UserErasureRepository {
  /** Marks `userId` as being erased until `until` (a later call moves it). */
  beginUserErasure(userId: string, until: Date): Promise<void>;
  /** Removes the mark; nothing when there is none. */
  endUserErasure(userId: string): Promise<void>;
}

/** Whether `repository` is a UserErasureRepository: it has every one of its methods. */
export function isUserErasureRepository<R>(repository: R): repository is R & UserErasureRepository {
  return hasMethods(repository, ['beginUserErasure', 'endUserErasure']);
}

/** Marker a backend puts into its refusal (SQL, Lua reply) when a write hits a user erasure in progress. */
export const USER_ERASURE_MARKER = 'session_compaction: user erasure in progress';

/** The one error for a write refused because its user's data is being erased. */
export function userErasureInProgressError(sessionId: string): IllegalStateError {
  return new IllegalStateError(
    `Session ${sessionId} was not written: its user's data is being erased (eraseUser); ` +
      'new sessions of this user are refused until the erasure has finished',
  );
}

/**
 * The SQL schema version (SQLite and PostgreSQL) that keeps the marks in a table of their own, keyed by the
 * owner hash. They were rows of the tombstones table under the id 'user-erasure:<owner hash>', which a session
 * id could spell: such a session was refused as tombstoned while the erasure ran, and its tombstone replaced
 * the mark. The migration moves the marks. Not 7 or 8 (left to other work), as BOUNDED_SEARCH_INDEX_SCHEMA_VERSION
 * explains.
 */
export const USER_ERASURE_SCHEMA_VERSION = 10;
