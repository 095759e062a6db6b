import type { EventFilter } from '../filter/EventFilter.js';
import type { Session, SessionLike } from '../session/Session.js';
import type { SessionEvent } from '../session/SessionEvent.js';
import type { CompactionRecord } from './CompactionRecord.js';
import type { SessionLifecycleOperations } from './lifecycle.js';

/**
 * Which events `searchEvents` may return. The defaults describe a prompt being built for one session:
 * its archive (the active window is already in the prompt), root events only.
 */
export interface EventSearchOptions {
  /** Most hits to return, best first; default 20. */
  limit?: number;
  /** 'session' (default): only the given session. 'user': every session of `userId`. */
  scope?: 'session' | 'user';
  /**
   * The owner of the session, from server-side state (the authenticated user), never from a model. Required
   * for scope 'user'. When set, a session that belongs to someone else yields no hits.
   */
  userId?: string;
  /** Also return events of the given session's active window; default false. Other sessions are searched whole. */
  includeActive?: boolean;
  /**
   * The branch the caller sees: root events, its own branch and its dot-path ancestors, never siblings or
   * children. Unset or null: root events only.
   */
  branch?: string | null;
}

/**
 * What a reader of the log compares to tell whether something it derived from it (a search index) is stale:
 * the CAS version, which every append, compaction and rewrite bumps, and the purge generation, which counts
 * the operations that remove events without bumping it — archive purges (retention), which leave the
 * version alone so that no compaction loses its CAS to them. Both are plain values on the session, so the
 * read costs the same whatever the log's length.
 */
export interface EventLogState {
  /** As `getEventVersion`: 0 for a missing session. */
  version: number;
  /**
   * Archive purges that removed at least one event, counted per session (0 for a missing session or one
   * never purged); it never decreases while the session exists, and appends and compactions leave it
   * alone. Null when the store cannot tell (a repository without the counter, a store whose schema
   * predates it): a reader then has the version alone.
   */
  purgeGeneration: number | null;
}

/**
 * A synchronous, pure function from a session's metadata to its new metadata. A backend that applies it with an
 * optimistic compare-and-set calls it again, on the metadata it re-read, when another writer got in first.
 */
export type SessionMetadataUpdate = (metadata: Readonly<Record<string, unknown>>) => Record<string, unknown>;

/** A search hit: higher `score` is more relevant; scores compare only within one result list. */
export interface ScoredEvent {
  event: SessionEvent;
  score: number;
}

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
 * - The optional data-lifecycle methods (erasure with tombstones, in-place rewrites, retention) are
 *   declared in SessionLifecycleOperations (repository/lifecycle.ts).
 */
export interface SessionRepository extends SessionLifecycleOperations {
  /** Upsert; keeps the session's events and version. */
  save(session: SessionLike): Promise<Session>;
  /**
   * Inserts the session only if no session has its id, atomically; true when inserted. Lets
   * `SessionService.create` refuse a caller-chosen id that exists instead of taking the session over.
   * Optional for custom repositories: without it the service checks then saves (not atomic).
   */
  saveIfAbsent?(session: SessionLike): Promise<boolean>;
  findById(id: string): Promise<Session | null>;
  /**
   * Optional: replaces the session's metadata with `update(metadata)` atomically — no concurrent metadata
   * update of the session, from this process or another, is lost between the read and the write. `update` may
   * run more than once (an optimistic backend retries it on the metadata it re-reads), so it must be pure; a
   * throw from it (or an invalid result) changes nothing and is rethrown. Returns the session as written, or
   * null when it is missing. Leaves the event log and its version alone. `SessionService.updateMetadata` uses
   * it; without it the service reads then saves, and a concurrent update may be lost. Once it resolves,
   * `update` has taken effect exactly once: a store that repeats its write after a lost connection recognises
   * a repeat of a write it applied, even with another write in between. A RepositoryConnectionError from it
   * leaves the outcome unknown: the update may have committed, so re-read before applying a non-idempotent
   * update again.
   */
  updateSessionMetadata?(id: string, update: SessionMetadataUpdate): Promise<Session | null>;
  findByUserId(userId: string): Promise<Session[]>;
  /** Ids of sessions with `expiresAt !== null && expiresAt < before`. */
  findExpiredSessionIds(before: Date): Promise<string[]>;
  /** Deletes the session and its whole log. */
  delete(id: string): Promise<void>;
  /** Throws InvalidArgumentError "Session not found: <id>"; idempotent by (sessionId, id). */
  appendEvent(event: SessionEvent): Promise<void>;
  /** 0 when the session is missing. */
  getEventVersion(id: string): Promise<number>;
  /**
   * Optional: the version and the purge generation, read together (one consistent read), so that an index
   * in any process sees an archive purge, which does not change the version. `{ version: 0,
   * purgeGeneration: 0 }` when the session is missing. Without it, readers compare the version alone.
   */
  getEventLogState?(id: string): Promise<EventLogState>;
  /** [] when the session is missing; log order; no filter = EventFilter.all(). */
  findEvents(id: string, filter?: EventFilter): Promise<SessionEvent[]>;
  /**
   * `record` (reversible compaction): a repository that implements `listCompactions` stores it in the same
   * atomic step as the compaction (a lost CAS stores nothing); one without it ignores the argument, so the
   * service records nothing and `listCompactions` / `revertCompaction` fail with "… is not supported by this
   * repository".
   */
  compactEvents(
    id: string,
    archived: readonly SessionEvent[],
    retained: readonly SessionEvent[],
    expectedVersion: number,
    record?: CompactionRecord,
  ): Promise<boolean>;
  /** Optional: the session's compaction records, newest first, reverted ones included; [] when missing. */
  listCompactions?(id: string): Promise<CompactionRecord[]>;
  /**
   * Optional: `compactEvents(id, [], window, expectedVersion)` and, in the same atomic step, marks record
   * `compactionId` reverted at `revertedAt`. Events of `window` that sit in the archive move back to the window.
   */
  revertCompactionEvents?(
    id: string,
    compactionId: string,
    window: readonly SessionEvent[],
    expectedVersion: number,
    revertedAt: Date,
  ): Promise<boolean>;
  /**
   * Optional: appends events of one session in order, atomically, each with appendEvent's semantics (a
   * repeated id is a no-op and does not bump the version); returns how many were new. Import and copy use it
   * to write a log in one round trip; without it they call appendEvent per event.
   */
  appendEvents?(sessionId: string, events: readonly SessionEvent[]): Promise<number>;
  /**
   * Optional: every session id, one page at a time (pass the returned `cursor` back; `null` means done).
   * Admin tools (verify, export, copy) enumerate a store with it. A page may repeat an id of an earlier one
   * on backends without an ordered index (Redis SCAN).
   */
  listSessionIds?(options?: ListSessionIdsOptions): Promise<SessionIdPage>;
  /**
   * Full-text search pushed down to the store's own index, best first (ties in log order). A blank query, a
   * missing session or another user's session returns []. Words are matched whole and case-insensitively,
   * any of them (more matches rank higher); the query is never interpreted as search syntax, so quotes,
   * operators and wildcards in it are plain text. Optional: without it, retrievers rank in process.
   */
  searchEvents?(sessionId: string, query: string, options?: EventSearchOptions): Promise<ScoredEvent[]>;
  /** Releases connections; a repository is unusable afterwards. */
  close?(): Promise<void>;
}

export interface ListSessionIdsOptions {
  /** From the previous page; absent or null for the first page. */
  cursor?: string | null;
  /** Page size hint; default 500. */
  limit?: number;
}

export interface SessionIdPage {
  ids: string[];
  /** Pass to the next call; null when every id has been returned. */
  cursor: string | null;
}
