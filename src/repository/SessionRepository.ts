import type { EventFilter } from '../filter/EventFilter.js';
import type { Session, SessionLike } from '../session/Session.js';
import type { SessionEvent } from '../session/SessionEvent.js';
import type { CompactionRecord } from './CompactionRecord.js';
import type { ErasureRepository } from './ErasureRepository.js';
import type { EventRewritingRepository } from './EventRewritingRepository.js';
import type { RetentionRepository } from './RetentionRepository.js';
import type { StorageReclaimingRepository } from './StorageReclaimingRepository.js';

// The value types of the capabilities' methods, also importable from here.
export type { EventLogState } from './EventLogStateRepository.js';
export type { EventSearchOptions, ScoredEvent } from './SearchableRepository.js';
export type { ListSessionIdsOptions, SessionIdPage } from './EnumerableRepository.js';
export type { SessionMetadataUpdate } from './MetadataUpdatingRepository.js';

/**
 * Persistence SPI: sessions plus a CAS-versioned, append-only event log that archives instead of deleting.
 *
 * - version: 0 after `save`; +1 per genuinely new append (a repeated event id is a no-op); +1 per
 *   successful `compactEvents` (even with nothing archived).
 * - `compactEvents`: on version mismatch nothing changes and it returns false. Otherwise, atomically, the log
 *   becomes previously archived events (unchanged), then `archived` marked archived, then `retained` as the
 *   new active window; a previously active event in neither list (a superseded summary) is removed.
 * - Order is insertion order, never timestamp order. Archived events are removed only by `delete`.
 * - Event ids are unique per session: the same id in two sessions is two events.
 *
 * What a store can do beyond this is declared by capability interfaces, each with one type guard
 * (`isSearchableRepository(repository)`, …): AtomicInsertRepository, MetadataUpdatingRepository,
 * EventLogStateRepository, CompactionRecordRepository, BatchAppendRepository, EnumerableRepository, SessionListingRepository,
 * SearchableRepository, ErasureRepository, EventRewritingRepository, RetentionRepository,
 * StorageReclaimingRepository. A capability counts only when all of its methods are present.
 */
export interface SessionRepository {
  /** Upsert; keeps the session's events and version. */
  save(session: SessionLike): Promise<Session>;
  findById(id: string): Promise<Session | null>;
  findByUserId(userId: string): Promise<Session[]>;
  /** Ids of sessions with `expiresAt !== null && expiresAt < before`. */
  findExpiredSessionIds(before: Date): Promise<string[]>;
  /** Deletes the session and its whole log. */
  delete(id: string): Promise<void>;
  /** Throws InvalidArgumentError "Session not found: <id>"; idempotent by (sessionId, id). */
  appendEvent(event: SessionEvent): Promise<void>;
  /** 0 when the session is missing. */
  getEventVersion(id: string): Promise<number>;
  /** [] when the session is missing; log order; no filter = EventFilter.all(). */
  findEvents(id: string, filter?: EventFilter): Promise<SessionEvent[]>;
  /**
   * `record` (reversible compaction): a CompactionRecordRepository stores it in the same atomic step as the
   * compaction (a lost CAS stores nothing); the service passes one to no other repository.
   */
  compactEvents(
    id: string,
    archived: readonly SessionEvent[],
    retained: readonly SessionEvent[],
    expectedVersion: number,
    record?: CompactionRecord,
  ): Promise<boolean>;
  /** Releases connections; a repository is unusable afterwards. */
  close?(): Promise<void>;
}

/**
 * The data-lifecycle methods (erasure with tombstones, in-place rewrites, retention, storage reclaiming) as
 * optional methods, the form they had before they became capabilities.
 * @deprecated Implement ErasureRepository, EventRewritingRepository, RetentionRepository and
 * StorageReclaimingRepository, and test for them with their type guards.
 */
export type SessionLifecycleOperations = Partial<
  ErasureRepository & EventRewritingRepository & RetentionRepository & StorageReclaimingRepository
>;
