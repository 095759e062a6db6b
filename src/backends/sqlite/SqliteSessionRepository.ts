import type Database from 'better-sqlite3';
import { IllegalStateError, InvalidArgumentError, requireText } from '../../errors.js';
import { applyEventWindow, EventFilter } from '../../filter/EventFilter.js';
import { defaultLogger, type Logger } from '../../logging.js';
import { requireOptional } from '../../optionalDependency.js';
import { Session, type SessionLike } from '../../session/Session.js';
import { SessionEvent } from '../../session/SessionEvent.js';
import { decodeEvent, encodeEvent, type StoredEvent } from '../../repository/eventCodec.js';
import { decodeSession, readableSessions } from '../../repository/sessionCodec.js';
import { MASKED_FROM, redactionScopeOf, type RedactionScopeRepository } from '../../repository/RedactionScopeRepository.js';
import { pageLimit, requireEventsOf } from '../../repository/appendEventsSupport.js';
import { resolveEventSearchOptions, searchTerms, type ResolvedEventSearch } from '../../repository/eventSearch.js';
import type { SessionRepository } from '../../repository/SessionRepository.js';
import type { AtomicInsertRepository } from '../../repository/AtomicInsertRepository.js';
import type { BatchAppendRepository } from '../../repository/BatchAppendRepository.js';
import type { CompactionRecordRepository } from '../../repository/CompactionRecordRepository.js';
import type { EnumerableRepository, ListSessionIdsOptions, SessionIdPage } from '../../repository/EnumerableRepository.js';
import {
  resolveListSessionsOptions,
  type ListSessionsOptions,
  type SessionListingPage,
  type SessionListingRepository,
} from '../../repository/SessionListingRepository.js';
import {
  isTombstonedFailure,
  ownerHash,
  sessionDeletedError,
  TOMBSTONE_SCHEMA_VERSION,
  type ErasedSession,
  type EraseSessionOptions,
  type ErasureRepository,
  type Tombstone,
} from '../../repository/ErasureRepository.js';
import type { EventLogState, EventLogStateRepository } from '../../repository/EventLogStateRepository.js';
import { requireRewriteBatch, type EventRewritingRepository } from '../../repository/EventRewritingRepository.js';
import type { MetadataUpdatingRepository, SessionMetadataUpdate } from '../../repository/MetadataUpdatingRepository.js';
import {
  requirePurgeCriteria,
  type ArchivePurgeCriteria,
  type RetentionRepository,
  type SessionActivityPage,
} from '../../repository/RetentionRepository.js';
import { useWriteAheadLog } from './writeAheadLog.js';
import type { EventSearchOptions, ScoredEvent, SearchableRepository } from '../../repository/SearchableRepository.js';
import type { NeighbourSearchRepository, ScoredEventsWithNeighbours } from '../../repository/NeighbourSearchRepository.js';
import type { StorageReclaimingRepository } from '../../repository/StorageReclaimingRepository.js';
import { SqliteUserErasureMarks } from './userErasureMarks.js';
import { SqliteErasure } from './erasure.js';
import type { ForkingRepository, ForkOutcome, ForkRequest } from '../../repository/ForkingRepository.js';
import {
  USER_ERASURE_SCHEMA_VERSION,
  userErasureInProgressError,
  type UserErasureRepository,
} from '../../repository/UserErasureRepository.js';
import { SqliteEventRewrites } from './eventRewrites.js';
import { SqliteRetention } from './retention.js';
import { checkpointWal, forgetDeletedWords } from './secureDelete.js';
import {
  buildEventQuery,
  buildNeighbourBoundsQuery,
  buildRangeRowsQuery,
  EVENT_COLUMNS,
  JS_LOWER_FUNCTION,
} from './eventQuery.js';
import {
  mergeNeighbourWindows,
  requireNeighbourRequest,
  type EventNeighbourhoodRepository,
  type KeyedWindow,
} from '../../repository/EventNeighbourhoodRepository.js';
import { DEFAULT_SQLITE_PREFIX, SQLITE_PURGE_GENERATION_SCHEMA_VERSION, sqliteTables, type SqliteTables } from './schema.js';
import { migrateSqlite, sqlitePendingVersions, sqliteSchemaStatus } from './migrator.js';
import type { MigratableRepository } from '../../repository/MigratableRepository.js';
import type { MigrateOptions, SchemaStatus } from '../../repository/schemaMigrations.js';
import {
  SEARCH_WINDOWED_ATTEMPTS,
  SEARCH_WINDOW_FACTOR,
  SEARCH_WINDOW_GROWTH,
  BOUNDED_SEARCH_EVENTS,
  RARE_WORD_EVENTS,
  RECENT_MATCHES,
  SCORE_DECIMALS,
  buildSeqRangeQuery,
  buildSqliteSearch,
  buildSessionSizeProbe,
  buildWordProbe,
  ftsMatchExpression,
  type SearchBound,
  type SeqRange,
} from './search.js';
import { SqliteCompactions } from './compactions.js';
import { WordProbeCache } from './WordProbeCache.js';
import {
  COMPACTION_RECORD_SCHEMA_VERSION,
  requireRecordOf,
  type CompactionRecord,
  type CompactionRecordSummary,
} from '../../repository/CompactionRecord.js';

export interface SqliteSessionRepositoryOptions {
  /** A database file (created when missing) or `':memory:'`. */
  path: string;
  /** Apply pending migrations on first use; default true. With false, call `migrate()` yourself. */
  initializeSchema?: boolean;
  /** Table-name prefix (`<prefix>_sessions`, `<prefix>_events`, `<prefix>_migrations`); default 'session_compaction'. */
  prefix?: string;
  /** How long a writer waits for another connection's write lock before failing with SQLITE_BUSY; default 5000. */
  busyTimeoutMs?: number;
  /**
   * `'FULL'` (default) syncs the WAL on every commit, so an acknowledged write survives power loss;
   * `'NORMAL'` survives process crashes only, and is several times faster on slow disks.
   */
  synchronous?: 'FULL' | 'NORMAL';
  /**
   * Overwrite deleted content with zeros (`PRAGMA secure_delete = ON`), have the full-text index remove a
   * deleted row's words at delete time (FTS5 secure-delete, turned on in the file at first use) and, after
   * every erasure, rewrite and retention pass, checkpoint the WAL with TRUNCATE, so erased bytes do not stay
   * readable in the file or its WAL. Costs extra writes on every delete; default false. See
   * docs/data-lifecycle.md.
   */
  secureDelete?: boolean;
  /**
   * A session holding more events than this gets the bounded search: when a word of the query is in more than 500
   * of the rows searched, only the events holding a rarer word are ranked (docs/recall.md, "At any archive size").
   * Default 20,000 (below it bounding costs more than it saves); `Infinity`: every search ranks every match.
   */
  boundedSearchEvents?: number;
  logger?: Logger;
}

interface SessionRow {
  id: string;
  userId: string;
  createdAt: number;
  expiresAt: number | null;
  metadata: string;
}

interface EventParams {
  sessionId: string;
  id: string;
  timestamp: number;
  messageType: string;
  text: string | null;
  data: string | null;
  synthetic: number;
  archived: number;
  branch: string | null;
  metadata: string;
}

/** Statements whose SQL never changes, prepared once the schema exists. */
interface Statements {
  save: Database.Statement;
  insertSession: Database.Statement;
  findById: Database.Statement;
  setMetadata: Database.Statement;
  findByUserId: Database.Statement;
  findExpired: Database.Statement;
  delete: Database.Statement;
  version: Database.Statement;
  insertEvent: Database.Statement;
  bumpVersion: Database.Statement;
  casVersion: Database.Statement;
  archiveEvent: Database.Statement;
  deleteActive: Database.Statement;
  activeRows: Database.Statement;
  lastArchivedSeq: Database.Statement;
  deleteEvent: Database.Statement;
  append: Database.Transaction<(sessionId: string, params: EventParams) => void>;
  updateMetadata: Database.Transaction<(sessionId: string, update: SessionMetadataUpdate) => Session | null>;
  compact: Database.Transaction<
    (sessionId: string, archived: EventParams[], retained: EventParams[], expectedVersion: number) => boolean
  >;
}

/** Statements over the sessions' purge generation (schema version 6). */
interface PurgeGenerationStatements {
  /** The version and the generation from one row: one read, one snapshot. */
  read: Database.Statement;
  bump: Database.Statement;
}

const STATEMENT_CACHE_LIMIT = 128;

/**
 * The embedded durable repository: one SQLite file (WAL), shareable by several processes on one machine.
 *
 * Every write is one IMMEDIATE transaction, so writers are serialised by SQLite's write lock across
 * processes, and `compactEvents` claims the version with a conditional UPDATE before touching any event.
 * A compaction touches only the active window (archived rows are marked in place and keep their `seq`),
 * so its cost does not grow with archived history. better-sqlite3 is synchronous: a call blocks the
 * event loop for its duration, including up to `busyTimeoutMs` while another process holds the write lock.
 */
export class SqliteSessionRepository
  implements
    SessionRepository,
    AtomicInsertRepository,
    MetadataUpdatingRepository,
    EventLogStateRepository,
    RedactionScopeRepository,
    CompactionRecordRepository,
    BatchAppendRepository,
    EnumerableRepository,
    SessionListingRepository,
    SearchableRepository,
    EventNeighbourhoodRepository,
    NeighbourSearchRepository,
    ErasureRepository,
    EventRewritingRepository,
    RetentionRepository,
    StorageReclaimingRepository,
    MigratableRepository,
    ForkingRepository,
    UserErasureRepository
{
  readonly path: string;
  readonly prefix: string;
  readonly tables: SqliteTables;
  private readonly db: Database.Database;
  private readonly initializeSchema: boolean;
  private readonly logger: Logger;
  private statements: Statements | undefined;
  private appendMany: Database.Transaction<(sessionId: string, rows: EventParams[]) => number> | undefined;
  private readonly queryCache = new Map<string, Database.Statement>();
  private closed = false;
  private readonly secureDelete: boolean;
  private erasureStatements: SqliteErasure | undefined;
  private userErasureMarks: SqliteUserErasureMarks | undefined;
  private guardedTx: Database.Transaction<(run: () => unknown) => unknown> | undefined;
  /** A DEFERRED transaction for reads that take several statements (see searchEvents). */
  private readTx: Database.Transaction<(run: () => unknown) => unknown> | undefined;
  /** Per session: its event count (up to BOUNDED_SEARCH_EVENTS + 1) and its last seq when counted (isLargeSession). */
  private readonly sessionSizes = new Map<string, { hi: number; events: number }>();
  /** What the word probes of bounded searches found, kept while it holds (WordProbeCache). */
  private readonly wordProbes = new WordProbeCache(RARE_WORD_EVENTS);
  private readonly boundedSearchEvents: number;
  private rewriteStatements: SqliteEventRewrites | undefined;
  private retentionStatements: SqliteRetention | undefined;
  private compactionStatements: SqliteCompactions | undefined;
  private purgeGenerationStatements: PurgeGenerationStatements | undefined;
  /** Schema versions already warned about by preparedIfMigrated. */
  private readonly warnedUnmigrated = new Set<number>();
  private recordedWrite:
    | Database.Transaction<
        (
          sessionId: string,
          archived: EventParams[],
          retained: EventParams[],
          expectedVersion: number,
          write: () => void,
        ) => boolean
      >
    | undefined;

  constructor(options: SqliteSessionRepositoryOptions) {
    if (options === null || options === undefined) throw new InvalidArgumentError('options must not be null');
    this.path = requireText(options.path, 'path');
    this.prefix = options.prefix ?? DEFAULT_SQLITE_PREFIX;
    this.tables = sqliteTables(this.prefix);
    const boundedSearchEvents = options.boundedSearchEvents ?? BOUNDED_SEARCH_EVENTS;
    if (boundedSearchEvents !== Infinity && (!Number.isInteger(boundedSearchEvents) || boundedSearchEvents < 0)) {
      throw new InvalidArgumentError('boundedSearchEvents must be an integer >= 0 or Infinity');
    }
    this.boundedSearchEvents = boundedSearchEvents;
    const busyTimeoutMs = options.busyTimeoutMs ?? 5000;
    if (!Number.isInteger(busyTimeoutMs) || busyTimeoutMs < 0) {
      throw new InvalidArgumentError('busyTimeoutMs must be an integer >= 0');
    }
    const synchronous = options.synchronous ?? 'FULL';
    if (synchronous !== 'FULL' && synchronous !== 'NORMAL')
      throw new InvalidArgumentError("synchronous must be 'FULL' or 'NORMAL'");
    this.initializeSchema = options.initializeSchema ?? true;
    this.logger = options.logger ?? defaultLogger();
    if (options.secureDelete !== undefined && typeof options.secureDelete !== 'boolean')
      throw new InvalidArgumentError('secureDelete must be a boolean');
    this.secureDelete = options.secureDelete === true;

    const Sqlite = requireOptional<typeof Database>('better-sqlite3', 'SqliteSessionRepository');
    this.db = new Sqlite(this.path, { timeout: busyTimeoutMs });
    try {
      useWriteAheadLog(this.db, busyTimeoutMs);
      this.db.pragma(`synchronous = ${synchronous}`);
      this.db.pragma('foreign_keys = ON');
      if (this.secureDelete) this.db.pragma('secure_delete = ON');
      this.db.function(JS_LOWER_FUNCTION, { deterministic: true }, (value: unknown) =>
        typeof value === 'string' ? value.toLowerCase() : null,
      );
      this.db.function(INDEX_CHANGED_FUNCTION, () => {
        this.wordProbes.clear();
        return null;
      });
    } catch (error) {
      this.db.close();
      throw error;
    }
  }

  /**
   * Applies pending migrations, lowest version first, in one IMMEDIATE transaction (so two processes starting
   * together migrate once) and returns the versions it applied; with `dryRun`, the versions it would apply.
   * Throws SchemaVersionError, changing nothing, when the file was written by a newer version of this library.
   */
  async migrate(options: MigrateOptions = {}): Promise<number[]> {
    this.requireOpen();
    if (options?.dryRun === true) return sqlitePendingVersions(this.db, this.tables, this.path);
    return this.migrateNow();
  }

  /** Applied, pending and unknown schema versions, with the SQL of each pending step. */
  async schemaStatus(): Promise<SchemaStatus> {
    this.requireOpen();
    return sqliteSchemaStatus(this.db, this.tables, this.path);
  }

  async save(session: SessionLike): Promise<Session> {
    const s = Session.from(session);
    const st = this.ready();
    this.refuseTombstoned(s.id, () =>
      this.guarded(() => {
        if (st.version.get(s.id) === undefined) this.refuseErasing(s);
        st.save.run(sessionParams(s));
      }),
    );
    return s;
  }

  async saveIfAbsent(session: SessionLike): Promise<boolean> {
    const s = Session.from(session);
    const st = this.ready();
    return this.refuseTombstoned(s.id, () =>
      this.guarded(() => {
        if (st.version.get(s.id) !== undefined) return false;
        this.refuseErasing(s);
        return st.insertSession.run(sessionParams(s)).changes > 0;
      }),
    );
  }

  /**
   * One IMMEDIATE transaction: the source's state, the owner's erasure mark, the fork's id, the session and
   * every copied event. A crash keeps all of it or none; an erasure either ran before (the source is gone)
   * or waits for the commit and then finds the fork under the user.
   */
  async forkSession(request: ForkRequest): Promise<ForkOutcome> {
    const s = Session.from(request.fork);
    requireEventsOf(s.id, request.events);
    const sourceId = requireText(request.sourceId, 'sourceId');
    const st = this.ready();
    const params = request.events.map((e) => toParams(s.id, encodeEvent(e)));
    const { version, purgeGeneration } = request.expected;
    return this.refuseTombstoned(s.id, () =>
      this.guarded((): ForkOutcome => {
        const generation = purgeGeneration === null ? null : this.purgeGenerationIfMigrated();
        const state = (generation === null ? st.version.get(sourceId) : generation.read.get(sourceId)) as
          { version: number; purgeGeneration?: number } | undefined;
        if (state === undefined) return 'source-missing';
        if (state.version !== version || (generation !== null && state.purgeGeneration !== purgeGeneration)) return 'changed';
        if (st.version.get(s.id) !== undefined) return 'exists';
        this.refuseErasing(s);
        if (st.insertSession.run(sessionParams(s)).changes === 0) return 'exists';
        let added = 0;
        for (const row of params) added += st.insertEvent.run(row).changes;
        if (added > 0)
          this.statement(`UPDATE ${this.tables.sessions} SET event_version = event_version + ? WHERE id = ?`).run(added, s.id);
        return 'forked';
      }),
    );
  }

  async beginUserErasure(userId: string, until: Date): Promise<void> {
    const hash = ownerHash(requireText(userId, 'userId'));
    this.userErasureMarksIfMigrated()?.mark(hash, until);
  }

  async endUserErasure(userId: string): Promise<void> {
    const hash = ownerHash(requireText(userId, 'userId'));
    this.userErasureMarksIfMigrated()?.unmark(hash);
  }

  /** `write` in one IMMEDIATE transaction (checks and write under the same write lock). */
  private guarded<T>(write: () => T): T {
    this.guardedTx ??= this.db.transaction((run: () => unknown) => run());
    return this.guardedTx.immediate(write) as T;
  }

  /** Inside a transaction: refuses a new session of a user whose erasure is in progress. */
  private refuseErasing(s: Session): void {
    const marks = this.userErasureMarksIfMigrated();
    if (marks !== undefined && marks.marked(ownerHash(s.userId))) throw userErasureInProgressError(s.id);
  }

  private userErasureMarksIfMigrated(): SqliteUserErasureMarks | undefined {
    this.ready();
    this.userErasureMarks ??= this.preparedIfMigrated(
      () => new SqliteUserErasureMarks(this.db, this.tables),
      USER_ERASURE_SCHEMA_VERSION,
      'a user erasure does not block new sessions of its user until the schema is migrated',
    );
    return this.userErasureMarks;
  }

  private erasureIfMigrated(): SqliteErasure | undefined {
    this.erasureStatements ??= this.preparedIfMigrated(
      () => new SqliteErasure(this.db, this.tables),
      TOMBSTONE_SCHEMA_VERSION,
      'deleted session ids get no tombstone until the schema is migrated',
    );
    return this.erasureStatements;
  }

  async findById(id: string): Promise<Session | null> {
    const row = this.ready().findById.get(id) as SessionRow | undefined;
    return row === undefined ? null : toSession(row);
  }

  /** Read, update and write in one IMMEDIATE transaction: the write lock is held across processes throughout. */
  async updateSessionMetadata(id: string, update: SessionMetadataUpdate): Promise<Session | null> {
    return this.ready().updateMetadata.immediate(requireText(id, 'sessionId'), update);
  }

  async findByUserId(userId: string): Promise<Session[]> {
    return readableSessions(this.ready().findByUserId.all(userId) as SessionRow[], toSession, this.logger, userId);
  }

  async findExpiredSessionIds(before: Date): Promise<string[]> {
    if (!(before instanceof Date) || Number.isNaN(before.getTime()))
      throw new InvalidArgumentError('before must be a valid Date');
    return this.ready().findExpired.pluck().all(before.getTime()) as string[];
  }

  async delete(id: string): Promise<void> {
    this.ready().delete.run(id);
  }

  async appendEvent(event: SessionEvent): Promise<void> {
    if (!(event instanceof SessionEvent)) throw new InvalidArgumentError('event must not be null');
    const st = this.ready();
    st.append.immediate(event.sessionId, toParams(event.sessionId, encodeEvent(event)));
  }

  async getEventVersion(id: string): Promise<number> {
    const row = this.ready().version.get(id) as { version: number } | undefined;
    return row?.version ?? 0;
  }

  async getEventLogState(id: string): Promise<EventLogState> {
    const generation = this.purgeGenerationIfMigrated();
    if (generation === null) return { version: await this.getEventVersion(id), purgeGeneration: null };
    const row = generation.read.get(id) as EventLogState | undefined;
    return row ?? { version: 0, purgeGeneration: 0 };
  }

  /** Two indexed reads: the event (for its original's id), then its family and the synthetic events. */
  async findRedactionScope(id: string, eventId: string): Promise<SessionEvent[]> {
    this.ready();
    const e = this.tables.events;
    const target = this.statement(`SELECT ${EVENT_COLUMNS} FROM ${e} WHERE session_id = ? AND id = ?`)
      .raw(true)
      .get(id, eventId) as unknown[] | undefined;
    if (target === undefined) return [];
    const from = tupleToEvent(target, 0).metadata[MASKED_FROM];
    const root = typeof from === 'string' ? from : eventId;
    const rows = this.statement(
      `SELECT ${EVENT_COLUMNS} FROM ${e} WHERE session_id = @id AND (synthetic = 1 OR id = @eventId OR id = @root
         OR (json_valid(metadata) AND json_extract(metadata, '$.${MASKED_FROM}') = @root)) ORDER BY seq`,
    )
      .raw(true)
      .all({ id, eventId, root }) as unknown[][];
    return redactionScopeOf(
      rows.map((r) => tupleToEvent(r, 0)),
      eventId,
    );
  }

  async findEvents(id: string, filter: EventFilter = EventFilter.all()): Promise<SessionEvent[]> {
    this.ready();
    const f = filter ?? EventFilter.all();
    const query = buildEventQuery(this.tables.events, id, f);
    if (query === null) return [];
    const rows = this.statement(query.sql)
      .raw(true)
      .all(...query.params) as unknown[][];
    if (query.reverse) rows.reverse();
    const events = rows.map((r) => tupleToEvent(r, 0));
    const textTest = query.textTest;
    if (textTest === undefined) return events;
    return applyEventWindow(
      events.filter((e) => e.text !== null && textTest(e.text)),
      f,
    );
  }

  /** `work` in one DEFERRED read transaction: its statements see one snapshot. */
  private inReadTransaction<T>(work: () => T): T {
    this.readTx ??= this.db.transaction((run: () => unknown) => run());
    return this.readTx(work) as T;
  }

  /**
   * Two statements for every event (see buildNeighbourBoundsQuery): index lookups and range scans, so the cost does
   * not grow with the log; one read transaction, so one snapshot. An event in several neighbourhoods is read and
   * decoded once.
   */
  async findEventNeighbours(sessionId: string, eventIds: readonly string[], radius: number): Promise<SessionEvent[][]> {
    this.ready();
    const ids = requireNeighbourRequest(eventIds, radius);
    if (typeof sessionId !== 'string' || ids.length === 0) return [];
    return this.inReadTransaction(() => this.neighbourRuns(sessionId, radius, { by: 'id', keys: ids }));
  }

  /**
   * The neighbourhoods of session `sessionId`'s events named by id, or by seq (each one of the session's), in the
   * caller's read transaction: see findEventNeighbours.
   */
  private neighbourRuns(
    sessionId: string,
    radius: number,
    anchors: { by: 'id'; keys: readonly string[] } | { by: 'seq'; keys: readonly number[] },
  ): SessionEvent[][] {
    const bounds = this.statement(buildNeighbourBoundsQuery(this.tables.events, anchors.by)).all({
      [anchors.by === 'id' ? 'ids' : 'seqs']: JSON.stringify(anchors.keys),
      sessionId,
      radius,
    }) as Array<{ anchor: number; lo: number; hi: number }>;
    if (bounds.length === 0) return [];
    bounds.sort((x, y) => x.lo - y.lo);
    const ranges: Array<[number, number]> = [];
    for (const b of bounds) {
      const last = ranges[ranges.length - 1];
      if (last !== undefined && b.lo <= last[1]) last[1] = Math.max(last[1], b.hi);
      else ranges.push([b.lo, b.hi]);
    }
    // Rows as arrays (seq, then EVENT_COLUMNS): better-sqlite3 then builds no object per row, about half of this
    // statement's time for the ~300 rows of recall's neighbourhoods (docs/recall.md).
    const tuples = this.statement(buildRangeRowsQuery(this.tables.events))
      .raw(true)
      .all({ ranges: JSON.stringify(ranges), sessionId }) as unknown[][];
    if (tuples.some((r, i) => i > 0 && (r[0] as number) < (tuples[i - 1]![0] as number))) {
      tuples.sort((x, y) => (x[0] as number) - (y[0] as number));
    }
    const seqs = tuples.map((r) => r[0] as number);
    // Decoded when a window takes it, once: the row after a neighbourhood, read only for its seq, never is.
    const decoded: Array<SessionEvent | undefined> = new Array(tuples.length);
    const eventAt = (i: number) => (decoded[i] ??= tupleToEvent(tuples[i]!, 1));
    const windows: KeyedWindow[] = [];
    let from = 0;
    for (const { anchor, lo, hi } of bounds) {
      // Bounds in order of `lo`: each starts at or after the previous one's start.
      while (from < seqs.length && seqs[from]! < lo) from++;
      let to = from;
      while (to < seqs.length && seqs[to]! <= hi) to++;
      // Rows before the event, then the event and `radius` after it; one more, when read, is the next event's seq.
      let end = from;
      while (end < to && seqs[end]! < anchor) end++;
      end = Math.min(to, end + radius + 1);
      const events: SessionEvent[] = [];
      for (let i = from; i < end; i++) events.push(eventAt(i));
      windows.push({ keys: seqs.slice(from, end), events, next: end < to ? seqs[end]! : null });
    }
    return mergeNeighbourWindows(windows);
  }

  /**
   * Ranked with FTS5's `bm25()` over the `unicode61` tokenizer (diacritics folded: "cafe" finds "café").
   * Any of the query's words may match; see `SessionRepository.searchEvents`.
   */
  async searchEvents(sessionId: string, query: string, options?: EventSearchOptions): Promise<ScoredEvent[]> {
    const search = this.prepareSearch(sessionId, query, options);
    if (search === null) return [];
    // One read transaction: the owner check, the range and every widened attempt see the same snapshot (a
    // compaction in another process between them could otherwise move rows past the range read).
    return this.inReadTransaction(() => rankedHits(search.run()));
  }

  /**
   * `searchEvents`, and the neighbourhoods of its hits in session `sessionId` read in the same read transaction:
   * the search has just ranked them by `seq`, so their bounds are read by position, without looking their ids up
   * again, and the assembler's separate neighbourhood call (another transaction) is saved.
   */
  async searchEventsWithNeighbours(
    sessionId: string,
    query: string,
    options: EventSearchOptions | undefined,
    radius: number,
  ): Promise<ScoredEventsWithNeighbours> {
    requireNeighbourRequest([], radius);
    const search = this.prepareSearch(sessionId, query, options);
    if (search === null) return { hits: [], neighbours: [] };
    return this.inReadTransaction((): ScoredEventsWithNeighbours => {
      const rows = search.run();
      const seqs = rows.filter((row) => row[RANKED_SESSION_ID] === sessionId).map((row) => row[RANKED_SEQ] as number);
      const neighbours = seqs.length === 0 ? [] : this.neighbourRuns(sessionId, radius, { by: 'seq', keys: seqs });
      return { hits: rankedHits(rows), neighbours };
    });
  }

  /**
   * A search's checks and options, and the statements that run it (inside the caller's read transaction): null when
   * it can find nothing (no words, arguments of the wrong type).
   */
  private prepareSearch(sessionId: string, query: string, options?: EventSearchOptions): { run: () => RankedRow[] } | null {
    const st = this.ready();
    const o = resolveEventSearchOptions(options);
    if (typeof sessionId !== 'string' || typeof query !== 'string') return null;
    const terms = searchTerms(query, true);
    if (terms.length === 0) return null;
    // Before the snapshot: a commit by another connection after this read changes it by the next search.
    const stamp = o.scope === 'session' ? (this.statement('PRAGMA data_version').pluck().get() as number) : 0;
    return { run: () => this.searchRows(st, sessionId, terms, o, stamp) };
  }

  /** The ranked rows of a search (see buildSqliteSearch), in the caller's read transaction. */
  private searchRows(
    st: Statements,
    sessionId: string,
    terms: readonly string[],
    o: ResolvedEventSearch,
    stamp: number,
  ): RankedRow[] {
    const owner = st.findById.get(sessionId) as SessionRow | undefined;
    if (owner === undefined || (o.userId !== undefined && owner.userId !== o.userId)) return [];
    // Only the index rows between the first and last event the search may return are ranked: a search in one
    // session does not pay for a large session written before or after it in the same file.
    const range = this.statement(buildSeqRangeQuery(this.tables, o.scope)).get(
      o.scope === 'session' ? { sessionId } : { userId: o.userId! },
    ) as { lo: number | null; hi: number | null } | undefined;
    if (range?.lo === null || range?.lo === undefined || range.hi === null) return [];
    const seqs = { lo: range.lo, hi: range.hi };
    const bound = o.scope === 'session' ? this.searchBound(sessionId, terms, seqs, stamp) : null;
    const run = (window: number | null, b: SearchBound | null) => {
      const search = buildSqliteSearch(this.tables, sessionId, terms, o, window, seqs, b);
      return this.statement(search.sql).raw(true).all(search.params) as RankedRow[];
    };
    if (bound !== null && 'recent' in bound) return run(null, bound);
    // The best matches of that range first, widened only when the join's rules leave too few of them: a store
    // of one session answers from the first window, sessions written interleaved pay more attempts. A bounded
    // search ranks a bounded set whatever the window, and every attempt would rank it again: no window.
    let window: number | null = bound === null ? o.limit * SEARCH_WINDOW_FACTOR : null;
    for (let attempt = 0; ; attempt++) {
      if (attempt === SEARCH_WINDOWED_ATTEMPTS) window = null;
      const rows = run(window, bound);
      // Fewer than `limit` from a window may mean the window cut matches off; from no window, it is the answer
      // (with a bound, together with the most recent matches: see SearchBound).
      if (rows.length >= o.limit) return rows;
      if (window === null) return bound === null ? rows : bestOf(rows, run(null, { recent: RECENT_MATCHES }), o.limit);
      window *= SEARCH_WINDOW_GROWTH;
    }
  }

  /**
   * Null when no word of the query is common among the rows the search ranks (the search is exact), else how it is
   * bounded (see SearchBound). A session of no more than `boundedSearchEvents` events is searched unbounded: no
   * probe is run.
   */
  private searchBound(sessionId: string, terms: readonly string[], range: SeqRange, stamp: number): SearchBound | null {
    if (!this.isLargeSession(sessionId, range.hi)) return null;
    const probe = this.statement(buildWordProbe(this.tables));
    const rare = terms.filter((term) =>
      this.wordProbes.isRare(sessionId, range, stamp, term, () => {
        const params = { match: ftsMatchExpression([term]), lo: range.lo, hi: range.hi, cap: RARE_WORD_EVENTS + 1 };
        return (probe.get(params) as { n: number }).n;
      }),
    );
    if (rare.length === terms.length) return null;
    return rare.length > 0 ? { rare } : { recent: RECENT_MATCHES };
  }

  /**
   * Whether the session holds more than `boundedSearchEvents` events. Counting reads up to that many index entries
   * (~0.8 ms for 20,000), so a count is kept per session and read again only once the session's last seq (`hi`)
   * has grown by the events it lacked — each event it gains takes a seq of its own — or, for a large session, by
   * `boundedSearchEvents`: one that shrank (a retention purge) is searched bounded until then.
   */
  private isLargeSession(sessionId: string, hi: number): boolean {
    const bound = this.boundedSearchEvents;
    if (bound === Infinity) return false;
    const known = this.sessionSizes.get(sessionId);
    if (known !== undefined) {
      const large = known.events > bound;
      if (hi - known.hi < (large ? Math.max(1, bound) : bound + 1 - known.events)) return large;
    }
    const params = { sessionId, cap: bound + 1 };
    const events = (this.statement(buildSessionSizeProbe(this.tables)).get(params) as { n: number }).n;
    if (this.sessionSizes.size >= SESSION_SIZES_KEPT) this.sessionSizes.clear();
    this.sessionSizes.set(sessionId, { hi, events });
    return events > bound;
  }

  async compactEvents(
    id: string,
    archived: readonly SessionEvent[],
    retained: readonly SessionEvent[],
    expectedVersion: number,
    record?: CompactionRecord,
  ): Promise<boolean> {
    requireText(id, 'sessionId');
    if (!Array.isArray(archived) || !Array.isArray(retained)) {
      throw new InvalidArgumentError('archived and retained must be arrays');
    }
    const compactions = record === undefined ? null : this.compactionsIfMigrated();
    if (record !== undefined && compactions !== null) {
      requireRecordOf(id, record);
      return this.writeRecorded(id, archived, retained, expectedVersion, () => compactions.insert(record));
    }
    const st = this.ready();
    const archivedParams = archived.map((e) => toParams(id, encodeEvent(e, true)));
    const retainedParams = retained.map((e) => toParams(id, encodeEvent(e, false)));
    return st.compact.immediate(id, archivedParams, retainedParams, expectedVersion);
  }

  async listCompactions(id: string): Promise<CompactionRecord[]> {
    return this.compactions().list(id);
  }

  async listCompactionSummaries(id: string): Promise<CompactionRecordSummary[]> {
    return this.compactions().listSummaries(id);
  }

  async revertCompactionEvents(
    id: string,
    compactionId: string,
    window: readonly SessionEvent[],
    expectedVersion: number,
    revertedAt: Date,
  ): Promise<boolean> {
    const compactions = this.compactions();
    if (!compactions.exists(requireText(id, 'sessionId'), compactionId))
      throw new InvalidArgumentError(`Compaction not found: ${compactionId}`);
    return this.writeRecorded(id, [], window, expectedVersion, () => compactions.markReverted(id, compactionId, revertedAt));
  }

  /** compactEvents and `write` in one IMMEDIATE transaction: a lost CAS writes neither. */
  private writeRecorded(
    id: string,
    archived: readonly SessionEvent[],
    retained: readonly SessionEvent[],
    expectedVersion: number,
    write: () => void,
  ): boolean {
    const st = this.ready();
    this.recordedWrite ??= this.db.transaction(
      (sessionId: string, a: EventParams[], r: EventParams[], version: number, then: () => void): boolean => {
        if (!st.compact(sessionId, a, r, version)) return false;
        then();
        return true;
      },
    );
    return this.recordedWrite.immediate(
      id,
      archived.map((e) => toParams(id, encodeEvent(e, true))),
      retained.map((e) => toParams(id, encodeEvent(e, false))),
      expectedVersion,
      write,
    );
  }

  private compactions(): SqliteCompactions {
    const compactions = this.compactionsIfMigrated();
    if (compactions === null) {
      throw new IllegalStateError(
        `SQLite schema for prefix '${this.prefix}' in ${this.path} has no compaction records (schema version ` +
          `${COMPACTION_RECORD_SCHEMA_VERSION}): call migrate() or construct with initializeSchema: true`,
      );
    }
    return compactions;
  }

  /**
   * Null while the schema predates compaction records (initializeSchema: false, not migrated yet): compactions
   * then work as before, unrecorded, and a warning says why.
   */
  private compactionsIfMigrated(): SqliteCompactions | null {
    this.ready();
    this.compactionStatements ??= this.preparedIfMigrated(
      () => new SqliteCompactions(this.db, this.tables),
      COMPACTION_RECORD_SCHEMA_VERSION,
      'compactions are not recorded until the schema is migrated',
    );
    return this.compactionStatements ?? null;
  }

  /**
   * Null while the schema predates the purge generation (initializeSchema: false, not migrated yet): purges
   * then work uncounted and readers have the version alone, and a warning says why. Tried again on each
   * call until the column is there, since another process may migrate the file meanwhile.
   */
  private purgeGenerationIfMigrated(): PurgeGenerationStatements | null {
    this.ready();
    const s = this.tables.sessions;
    this.purgeGenerationStatements ??= this.preparedIfMigrated(
      () => ({
        read: this.db.prepare(`SELECT event_version AS version, purge_generation AS purgeGeneration FROM ${s} WHERE id = ?`),
        bump: this.db.prepare(`UPDATE ${s} SET purge_generation = purge_generation + 1 WHERE id = ?`),
      }),
      SQLITE_PURGE_GENERATION_SCHEMA_VERSION,
      'recall indexes of other processes miss archive purges until the schema is migrated',
    );
    return this.purgeGenerationStatements ?? null;
  }

  /**
   * Statements that need schema `version`, or undefined (tried again next call: another process may migrate
   * the file meanwhile) with one warning per version while the file is older. Any other error is thrown.
   */
  private preparedIfMigrated<T>(prepare: () => T, version: number, warning: string): T | undefined {
    try {
      return prepare();
    } catch (error) {
      if (!/no such (table|column)|has no column named/i.test(String(error))) throw error;
      if (!this.warnedUnmigrated.has(version)) {
        this.warnedUnmigrated.add(version);
        this.logger.warn(warning, { path: this.path, prefix: this.prefix, version });
      }
      return undefined;
    }
  }

  /** One IMMEDIATE transaction for the whole batch: a crash keeps all of it or none. */
  async appendEvents(sessionId: string, events: readonly SessionEvent[]): Promise<number> {
    requireEventsOf(sessionId, events);
    const st = this.ready();
    const params = events.map((e) => toParams(sessionId, encodeEvent(e)));
    this.appendMany ??= this.db.transaction((id: string, rows: EventParams[]): number => {
      if (st.version.get(id) === undefined) throw new InvalidArgumentError(`Session not found: ${id}`);
      let added = 0;
      for (const row of rows) added += st.insertEvent.run(row).changes;
      if (added > 0)
        this.statement(`UPDATE ${this.tables.sessions} SET event_version = event_version + ? WHERE id = ?`).run(added, id);
      return added;
    });
    return this.appendMany.immediate(sessionId, params);
  }

  /** Ids in ascending order; the cursor is the last id of the page. */
  async listSessionIds(options?: ListSessionIdsOptions): Promise<SessionIdPage> {
    const limit = pageLimit(options);
    this.ready();
    const after = options?.cursor ?? null;
    const sql =
      after === null
        ? `SELECT id FROM ${this.tables.sessions} ORDER BY id LIMIT ?`
        : `SELECT id FROM ${this.tables.sessions} WHERE id > ? ORDER BY id LIMIT ?`;
    const params = after === null ? [limit + 1] : [after, limit + 1];
    const ids = this.statement(sql)
      .pluck()
      .all(...params) as string[];
    const page = ids.slice(0, limit);
    return { ids: page, cursor: ids.length > limit ? page[page.length - 1]! : null };
  }

  /**
   * One statement per page. The page is cut first (a seek on the primary key or the user index), then each of its
   * sessions gets its index-only counts (window index) and its last event (one step back on the log index).
   */
  async listSessions(options?: ListSessionsOptions): Promise<SessionListingPage> {
    const { cursor, limit, userId, idPrefix, withActiveEvents } = resolveListSessionsOptions(options);
    this.ready();
    const { sessions: s, events: e, compactions: c } = this.tables;
    const where: string[] = [];
    const params: (string | number)[] = [];
    if (cursor !== null) {
      where.push('s.id > ?');
      params.push(cursor);
    }
    if (userId !== null) {
      where.push('s.user_id = ?');
      params.push(userId);
    }
    if (idPrefix !== null) {
      // The range bound lets the primary key seek to the prefix; substr (not LIKE) keeps the prefix literal.
      where.push('s.id >= ? AND substr(s.id, 1, length(?)) = ?');
      params.push(idPrefix, idPrefix, idPrefix);
    }
    const sql = `SELECT s.id, s.user_id AS userId, s.created_at AS createdAt, s.expires_at AS expiresAt, s.metadata,
        s.event_version AS version,
        (SELECT count(*) FROM ${e} WHERE session_id = s.id AND archived = 0) AS activeEvents,
        (SELECT count(*) FROM ${e} WHERE session_id = s.id AND archived = 1) AS archivedEvents,
        (SELECT timestamp FROM ${e} WHERE session_id = s.id ORDER BY seq DESC LIMIT 1) AS lastEventAt,
        (SELECT count(*) FROM ${c} WHERE session_id = s.id AND reverted_at IS NULL) AS compactions
      FROM (SELECT * FROM ${s} s ${where.length > 0 ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY s.id LIMIT ?) s
      ORDER BY s.id`;
    const rows = this.statement(sql).all(...params, limit + 1) as (SessionRow & {
      version: number;
      activeEvents: number;
      archivedEvents: number;
      lastEventAt: number | null;
      compactions: number;
    })[];
    const page = rows.slice(0, limit).map((row) => ({
      session: toSession(row),
      version: row.version,
      activeEvents: row.activeEvents,
      archivedEvents: row.archivedEvents,
      lastEventAt: row.lastEventAt === null ? null : new Date(row.lastEventAt),
      compactions: row.compactions,
    }));
    if (withActiveEvents && page.length > 0) {
      // One statement whatever the page size: the ids as one JSON array parameter.
      const windows = new Map<string, SessionEvent[]>(page.map((l) => [l.session.id, []]));
      const events = this.statement(
        `SELECT ${EVENT_COLUMNS} FROM ${e} WHERE session_id IN (SELECT value FROM json_each(?)) AND archived = 0 ORDER BY session_id, seq`,
      )
        .raw(true)
        .all(JSON.stringify(page.map((l) => l.session.id))) as unknown[][];
      for (const row of events) windows.get(row[0] as string)!.push(tupleToEvent(row, 0));
      return {
        sessions: page.map((l) => ({ ...l, activeWindow: windows.get(l.session.id)! })),
        cursor: rows.length > limit ? page[page.length - 1]!.session.id : null,
      };
    }
    return { sessions: page, cursor: rows.length > limit ? page[page.length - 1]!.session.id : null };
  }

  async eraseSession(id: string, options: EraseSessionOptions): Promise<ErasedSession | null> {
    return this.erasure().erase(requireText(id, 'sessionId'), options, ownerHash);
  }

  async findTombstone(id: string): Promise<Tombstone | null> {
    return this.erasure().findTombstone(id);
  }

  async recreateSession(session: SessionLike): Promise<boolean> {
    const s = Session.from(session);
    const st = this.ready();
    return this.erasure().recreate(s.id, ownerHash(s.userId), () => {
      this.refuseErasing(s);
      return st.insertSession.run(sessionParams(s)).changes > 0;
    });
  }

  async purgeTombstones(before: Date, limit: number, sessionId?: string): Promise<number> {
    return this.erasure().purgeTombstones(before, limit, sessionId);
  }

  async rewriteEvents(id: string, events: readonly SessionEvent[], expectedVersion: number): Promise<boolean> {
    requireRewriteBatch(id, events);
    return this.rewrites().rewrite(
      id,
      events.map((e) => toParams(id, encodeEvent(e))),
      expectedVersion,
    );
  }

  async purgeArchivedEvents(id: string, criteria: ArchivePurgeCriteria): Promise<string[]> {
    const retention = this.retention();
    const compactions = this.compactions();
    // Records of compactions whose archived events go are dropped in the same transaction.
    return this.db
      .transaction((): string[] => {
        const purged = retention.purgeArchived(id, requirePurgeCriteria(criteria));
        compactions.dropCovering(id, purged);
        // Looked up under the write lock: a migration by another process has either committed (and the
        // column is seen) or waits for this commit, so no reader holds a generation this purge skipped.
        if (purged.length > 0) this.purgeGenerationIfMigrated()?.bump.run(id);
        return purged;
      })
      .immediate();
  }

  async listSessionActivity(cursor: string | null, limit: number): Promise<SessionActivityPage> {
    return this.retention().listActivity(cursor, limit);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.queryCache.clear();
    this.statements = undefined;
    this.appendMany = undefined;
    this.erasureStatements = undefined;
    this.rewriteStatements = undefined;
    this.retentionStatements = undefined;
    this.compactionStatements = undefined;
    this.purgeGenerationStatements = undefined;
    this.recordedWrite = undefined;
    this.guardedTx = undefined;
    this.readTx = undefined;
    this.db.close();
  }

  private erasure(): SqliteErasure {
    this.ready();
    this.erasureStatements ??= new SqliteErasure(this.db, this.tables);
    return this.erasureStatements;
  }

  private rewrites(): SqliteEventRewrites {
    this.ready();
    this.rewriteStatements ??= new SqliteEventRewrites(this.db, this.tables);
    return this.rewriteStatements;
  }

  private retention(): SqliteRetention {
    this.ready();
    this.retentionStatements ??= new SqliteRetention(this.db, this.tables);
    return this.retentionStatements;
  }

  /** A save that hit the tombstone trigger: the id belonged to a deleted session. */
  private refuseTombstoned<T>(id: string, write: () => T): T {
    try {
      return write();
    } catch (error) {
      if (isTombstonedFailure(error)) throw sessionDeletedError(id, this.erasure().findTombstone(id));
      throw error;
    }
  }

  /**
   * With `secureDelete`: checkpoints the WAL with TRUNCATE (it holds old page images), so that erased text is
   * no longer in the file or its WAL. The full-text index already dropped the deleted rows' words at delete
   * time (FTS5 secure-delete, schema version 5); on an index still at the version-2 form it is rewritten
   * whole (FTS5 'optimize', seconds on a large store) until the store is migrated. Without `secureDelete` it
   * does nothing: freed pages keep their bytes anyway. The service calls it after every erasure, redaction
   * and retention pass (see docs/data-lifecycle.md).
   */
  async reclaimStorage(): Promise<void> {
    if (!this.secureDelete) return;
    this.ready();
    forgetDeletedWords(this.db, this.tables.fts);
    if (checkpointWal(this.db).busy) {
      this.logger.warn(
        'SQLite WAL checkpoint could not finish (a reader holds an old snapshot); erased bytes stay in the WAL until the next one',
        {
          path: this.path,
        },
      );
    }
  }

  private requireOpen(): void {
    if (this.closed) throw new IllegalStateError('SqliteSessionRepository is closed');
  }

  /** Migrates (unless disabled) and prepares the fixed statements on first use. */
  private ready(): Statements {
    this.requireOpen();
    if (this.statements === undefined) {
      // A newer schema is refused either way: statements prepared against it could silently drop its data.
      if (this.initializeSchema) this.migrateNow();
      else sqlitePendingVersions(this.db, this.tables, this.path);
      try {
        this.statements = this.prepare();
      } catch (error) {
        throw new IllegalStateError(
          `SQLite schema for prefix '${this.prefix}' is missing or outdated in ${this.path}: ` +
            'call migrate() or construct with initializeSchema: true',
          { cause: error },
        );
      }
      // Before the first delete: FTS5 removes a deleted row's words only if secure-delete is on when it deletes.
      if (this.secureDelete) forgetDeletedWords(this.db, this.tables.fts, false);
      this.watchIndexChanges();
    }
    return this.statements;
  }

  private migrateNow(): number[] {
    const applied = migrateSqlite(this.db, this.tables, this.path, this.logger);
    // A migration may rebuild the full-text index or the events table (dropping the triggers of watchIndexChanges).
    this.wordProbes.clear();
    if (this.statements !== undefined) this.watchIndexChanges();
    return applied;
  }

  /**
   * TEMP triggers (this connection's own, never in the file) telling the word probe cache that an event row was
   * deleted or its text rewritten, whichever statement did it (a cascade from a session's delete included).
   */
  private watchIndexChanges(): void {
    const e = this.tables.events;
    this.db.exec(`
      CREATE TEMP TRIGGER IF NOT EXISTS ${e}_probes_on_delete AFTER DELETE ON main.${e} BEGIN SELECT ${INDEX_CHANGED_FUNCTION}(); END;
      CREATE TEMP TRIGGER IF NOT EXISTS ${e}_probes_on_update AFTER UPDATE OF text, data ON main.${e}
        BEGIN SELECT ${INDEX_CHANGED_FUNCTION}(); END;
    `);
  }

  private prepare(): Statements {
    const { sessions: s, events: e } = this.tables;
    const p = (sql: string) => this.db.prepare(sql);
    const sessionColumns = 'id, user_id AS userId, created_at AS createdAt, expires_at AS expiresAt, metadata';
    const st = {
      save: p(
        `INSERT INTO ${s} (id, user_id, created_at, expires_at, metadata) VALUES (@id, @userId, @createdAt, @expiresAt, @metadata)
         ON CONFLICT (id) DO UPDATE SET user_id = excluded.user_id, created_at = excluded.created_at,
           expires_at = excluded.expires_at, metadata = excluded.metadata`,
      ),
      // A single statement is atomic across connections and processes: exactly one concurrent caller inserts.
      insertSession: p(
        `INSERT INTO ${s} (id, user_id, created_at, expires_at, metadata) VALUES (@id, @userId, @createdAt, @expiresAt, @metadata)
         ON CONFLICT (id) DO NOTHING`,
      ),
      findById: p(`SELECT ${sessionColumns} FROM ${s} WHERE id = ?`),
      setMetadata: p(`UPDATE ${s} SET metadata = ? WHERE id = ?`),
      findByUserId: p(`SELECT ${sessionColumns} FROM ${s} WHERE user_id = ? ORDER BY created_at, id`),
      findExpired: p(`SELECT id FROM ${s} WHERE expires_at IS NOT NULL AND expires_at < ?`),
      delete: p(`DELETE FROM ${s} WHERE id = ?`),
      version: p(`SELECT event_version AS version FROM ${s} WHERE id = ?`),
      insertEvent: p(
        `INSERT INTO ${e} (session_id, id, timestamp, message_type, text, data, synthetic, archived, branch, metadata)
         VALUES (@sessionId, @id, @timestamp, @messageType, @text, @data, @synthetic, @archived, @branch, @metadata)
         ON CONFLICT (session_id, id) DO NOTHING`,
      ),
      bumpVersion: p(`UPDATE ${s} SET event_version = event_version + 1 WHERE id = ?`),
      casVersion: p(`UPDATE ${s} SET event_version = event_version + 1 WHERE id = ? AND event_version = ?`),
      // An archived event the log does not hold yet (never appended) is added, already archived.
      archiveEvent: p(
        `INSERT INTO ${e} (session_id, id, timestamp, message_type, text, data, synthetic, archived, branch, metadata)
         VALUES (@sessionId, @id, @timestamp, @messageType, @text, @data, @synthetic, @archived, @branch, @metadata)
         ON CONFLICT (session_id, id) DO UPDATE SET archived = 1`,
      ),
      deleteActive: p(`DELETE FROM ${e} WHERE session_id = ? AND archived = 0`),
      activeRows: p(
        `SELECT seq, id, timestamp, message_type AS messageType, text, data, synthetic, branch, metadata
         FROM ${e} WHERE session_id = ? AND archived = 0 ORDER BY seq`,
      ),
      lastArchivedSeq: p(`SELECT max(seq) AS seq FROM ${e} WHERE session_id = ? AND archived = 1`),
      deleteEvent: p(`DELETE FROM ${e} WHERE session_id = ? AND id = ?`),
    };
    const append = this.db.transaction((sessionId: string, params: EventParams): void => {
      // The session check, the insert and the bump share one write lock: no compaction can slip between.
      if (st.version.get(sessionId) === undefined) throw new InvalidArgumentError(`Session not found: ${sessionId}`);
      if (st.insertEvent.run(params).changes > 0) st.bumpVersion.run(sessionId);
    });
    const updateMetadata = this.db.transaction((sessionId: string, update: SessionMetadataUpdate): Session | null => {
      const row = st.findById.get(sessionId) as SessionRow | undefined;
      if (row === undefined) return null;
      const current = toSession(row);
      // A throw from `update` (or an invalid result) rolls the transaction back: nothing is written.
      const next = current.with({ metadata: update(current.metadata) });
      st.setMetadata.run(JSON.stringify(next.metadata), sessionId);
      return next;
    });
    const compact = this.db.transaction(
      (sessionId: string, archived: EventParams[], retained: EventParams[], expectedVersion: number): boolean => {
        if (st.version.get(sessionId) === undefined) throw new InvalidArgumentError(`Session not found: ${sessionId}`);
        // Checks and claims the version in one statement; a loser touches no event.
        if (st.casVersion.run(sessionId, expectedVersion).changes === 0) return false;
        // Marked in place: archived rows keep their seq, so history keeps its order and is never rewritten.
        for (const p of archived) st.archiveEvent.run(p);
        // A window that is already the active rows, unchanged and after the whole archive (a sliding window's
        // usual case), stays as it is: rewriting it cost a delete and an insert per event in the table and its
        // full-text index, whose writes grow with the index.
        if (windowInPlace(st, sessionId, retained)) return true;
        // Only the active window: the (session_id, archived, seq) index keeps this independent of history size.
        st.deleteActive.run(sessionId);
        // New seq values: the retained window (summary first) sorts after the whole archive. An id is unique
        // per session, so a retained id that sits in the archive moves to the window (as in PostgreSQL).
        for (const p of retained) st.deleteEvent.run(sessionId, p.id);
        for (const p of retained) st.insertEvent.run(p);
        return true;
      },
    );
    return { ...st, append, updateMetadata, compact };
  }

  private statement(sql: string): Database.Statement {
    let st = this.queryCache.get(sql);
    if (st === undefined) {
      // Filters with many keywords each have their own shape; a bound keeps the cache from growing forever.
      if (this.queryCache.size >= STATEMENT_CACHE_LIMIT) this.queryCache.clear();
      st = this.db.prepare(sql);
      this.queryCache.set(sql, st);
    }
    return st;
  }
}

function sessionParams(s: Session): SessionRow {
  return {
    id: s.id,
    userId: s.userId,
    createdAt: s.createdAt.getTime(),
    expiresAt: s.expiresAt === null ? null : s.expiresAt.getTime(),
    metadata: JSON.stringify(s.metadata),
  };
}

function toSession(row: SessionRow): Session {
  return decodeSession({
    id: row.id,
    userId: row.userId,
    createdAt: new Date(row.createdAt),
    expiresAt: row.expiresAt === null ? null : new Date(row.expiresAt),
    metadata: row.metadata,
  });
}

/**
 * Whether the session's active rows, once the archived ones are marked, are `retained` exactly — the same events
 * in the same order, every stored column equal — and all sort after its archive: then the compaction's window
 * is already in place.
 */
function windowInPlace(
  st: Pick<Statements, 'activeRows' | 'lastArchivedSeq'>,
  sessionId: string,
  retained: readonly EventParams[],
): boolean {
  const rows = st.activeRows.all(sessionId) as Array<Omit<EventParams, 'sessionId' | 'archived'> & { seq: number }>;
  if (rows.length !== retained.length) return false;
  const same = rows.every((row, i) => {
    const p = retained[i]!;
    return (
      row.id === p.id &&
      row.timestamp === p.timestamp &&
      row.messageType === p.messageType &&
      row.text === p.text &&
      row.data === p.data &&
      row.synthetic === p.synthetic &&
      row.branch === p.branch &&
      row.metadata === p.metadata
    );
  });
  if (!same || rows.length === 0) return same;
  const last = (st.lastArchivedSeq.get(sessionId) as { seq: number | null }).seq;
  return last === null || last < rows[0]!.seq;
}

function toParams(sessionId: string, stored: StoredEvent): EventParams {
  return {
    sessionId,
    id: stored.id,
    timestamp: stored.timestamp,
    messageType: stored.messageType,
    text: stored.text,
    data: stored.data,
    synthetic: stored.synthetic ? 1 : 0,
    archived: stored.archived ? 1 : 0,
    branch: stored.branch,
    metadata: stored.metadata,
  };
}

/** Sessions whose size a repository keeps for isLargeSession (then it forgets them all and counts again). */
const SESSION_SIZES_KEPT = 10_000;
/** The SQL function the TEMP triggers of watchIndexChanges call. */
const INDEX_CHANGED_FUNCTION = 'session_compaction_index_changed';

/** A search's row, read as an array: the event's EVENT_COLUMNS, then its seq (log order) and its score. */
type RankedRow = readonly unknown[];
/** EVENT_COLUMNS come first: the session id is the first of them. */
const RANKED_SESSION_ID = 0;
const RANKED_SEQ = 10;
const RANKED_SCORE = 11;

/**
 * The best `limit` of two ranked answers, each event once: higher score first, scores equal to SCORE_DECIMALS
 * in log order — the order of every bounded answer.
 */
/** A search's rows as its hits. */
function rankedHits(rows: readonly RankedRow[]): ScoredEvent[] {
  return rows.map((row) => ({ event: tupleToEvent(row, 0), score: row[RANKED_SCORE] as number }));
}

function bestOf(a: readonly RankedRow[], b: readonly RankedRow[], limit: number): RankedRow[] {
  const seen = new Set<number>();
  const scale = 10 ** SCORE_DECIMALS;
  const seq = (row: RankedRow) => row[RANKED_SEQ] as number;
  const score = (row: RankedRow) => Math.round((row[RANKED_SCORE] as number) * scale);
  return [...a, ...b]
    .filter((row) => !seen.has(seq(row)) && seen.add(seq(row)))
    .sort((x, y) => score(y) - score(x) || seq(x) - seq(y))
    .slice(0, limit);
}

/**
 * An event from a row read as an array, its EVENT_COLUMNS from index `at` on. Every event read is in `raw` mode:
 * better-sqlite3 then builds no object per row (about half of a ~300-row read's time).
 */
function tupleToEvent(row: readonly unknown[], at: number): SessionEvent {
  return decodeEvent({
    sessionId: row[at] as string,
    id: row[at + 1] as string,
    timestamp: row[at + 2] as number,
    messageType: row[at + 3] as StoredEvent['messageType'],
    text: row[at + 4] as string | null,
    data: row[at + 5] as string | null,
    synthetic: row[at + 6] === 1,
    archived: row[at + 7] === 1,
    branch: row[at + 8] as string | null,
    metadata: row[at + 9] as string,
  });
}
