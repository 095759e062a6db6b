import type { Session } from '../session/Session.js';
import { hasMethods } from './hasMethods.js';

/**
 * A synchronous, pure function from a session's metadata to its new metadata. A backend that applies it with an
 * optimistic compare-and-set calls it again, on the metadata it re-read, when another writer got in first.
 */
export type SessionMetadataUpdate = (metadata: Readonly<Record<string, unknown>>) => Record<string, unknown>;

/**
 * A repository that updates a session's metadata atomically. `SessionService.updateMetadata` (and through it
 * usage totals, token calibration and compaction stats) uses it; without it the service reads then saves,
 * and a concurrent update may be lost.
 */
export interface MetadataUpdatingRepository {
  /**
   * Replaces the session's metadata with `update(metadata)` atomically — no concurrent metadata update of the
   * session, from this process or another, is lost between the read and the write. `update` may run more than
   * once (an optimistic backend retries it on the metadata it re-reads), so it must be pure; a throw from it
   * (or an invalid result) changes nothing and is rethrown. Returns the session as written, or null when it is
   * missing. Leaves the event log and its version alone. Once it resolves, `update` has taken effect exactly
   * once: a store that repeats its write after a lost connection recognises a repeat of a write it applied,
   * even with another write in between. A RepositoryConnectionError from it leaves the outcome unknown: the
   * update may have committed, so re-read before applying a non-idempotent update again.
   */
  updateSessionMetadata(id: string, update: SessionMetadataUpdate): Promise<Session | null>;
}

/** Whether `repository` is a MetadataUpdatingRepository: it has every one of its methods. */
export function isMetadataUpdatingRepository<R>(repository: R): repository is R & MetadataUpdatingRepository {
  return hasMethods(repository, ['updateSessionMetadata']);
}
