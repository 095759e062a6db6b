import type pg from 'pg';
import { createHash } from 'node:crypto';
import { IllegalStateError, InvalidArgumentError, requireText } from '../../errors.js';
import { applyEventWindow, EventFilter } from '../../filter/EventFilter.js';
import { defaultLogger, type Logger } from '../../logging.js';
import { requireOptional } from '../../optionalDependency.js';
import { Session, type SessionLike } from '../../session/Session.js';
import { SessionEvent } from '../../session/SessionEvent.js';
import { decodeEvent, encodeEvent, type StoredEvent } from '../../repository/eventCodec.js';
import { decodeSession, readableSessions } from '../../repository/sessionCodec.js';
import { MASKED_FROM, redactionScopeOf, type RedactionScopeRepository } from '../../repository/RedactionScopeRepository.js';
import { buildEventQuery, buildNeighbourQuery, EVENT_COLUMNS } from './eventQuery.js';
import {
  mergeNeighbourWindows,
  requireNeighbourRequest,
  type EventNeighbourhoodRepository,
  type KeyedWindow,
} from '../../repository/EventNeighbourhoodRepository.js';
import { PostgresConnections } from './PostgresConnections.js';
import {
  POSTGRES_PURGE_GENERATION_SCHEMA_VERSION,
  SEARCHABLE_POSTINGS_SCHEMA_VERSION,
  postgresTables,
  type PostgresTables,
} from './schema.js';
import { migratePostgres, postgresPendingVersions, postgresSchemaStatus } from './migrator.js';
import type { MigratableRepository } from '../../repository/MigratableRepository.js';
import type { MigrateOptions, SchemaStatus } from '../../repository/schemaMigrations.js';
import { pageLimit, requireEventsOf } from '../../repository/appendEventsSupport.js';
import { bulkStatements } from './bulkStatements.js';
import {
  COMPACTION_RECORD_SCHEMA_VERSION,
  COMPACTION_RECORD_ARRAYS,
  decodeCompactionRecord,
  decodeCompactionSummary,
  encodeCompactionRecord,
  encodeCompactionSummary,
  requireRecordOf,
  type CompactionRecord,
  type CompactionRecordSummary,
  type StoredCompactionSummary,
} from '../../repository/CompactionRecord.js';
import { POSTINGS_PER_WORD, buildSearchQuery, type PostingsSearch } from './search.js';
import { resolveEventSearchOptions, searchTerms, searchWords } from '../../repository/eventSearch.js';
import type { SessionRepository } from '../../repository/SessionRepository.js';
import type { AtomicInsertRepository } from '../../repository/AtomicInsertRepository.js';
import type { BatchAppendRepository } from '../../repository/BatchAppendRepository.js';
import type { CompactionRecordRepository } from '../../repository/CompactionRecordRepository.js';
import type { EnumerableRepository, ListSessionIdsOptions, SessionIdPage } from '../../repository/EnumerableRepository.js';
import {
  resolveListSessionsOptions,
  type ListSessionsOptions,
  type SessionListing,
  type SessionListingPage,
  type SessionListingRepository,
} from '../../repository/SessionListingRepository.js';
import {
  isTombstonedFailure,
  ownerHash,
  sessionDeletedError,
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
import type { EventSearchOptions, ScoredEvent, SearchableRepository } from '../../repository/SearchableRepository.js';
import type { NeighbourSearchRepository, ScoredEventsWithNeighbours } from '../../repository/NeighbourSearchRepository.js';
import { PostgresErasure } from './erasure.js';
import type { ForkingRepository, ForkOutcome, ForkRequest } from '../../repository/ForkingRepository.js';
import {
  USER_ERASURE_SCHEMA_VERSION,
  userErasureInProgressError,
  type UserErasureRepository,
} from '../../repository/UserErasureRepository.js';
import { PostgresUserErasureMarks } from './userErasureMarks.js';
import { PostgresEventRewrites, type EventColumnArrays } from './eventRewrites.js';
import { PostgresRetention } from './retention.js';

/**
 * A `pg.Pool` (from the `pg` package), typed by the members the repository relies on so that this package's
 * types never require `pg` or `@types/pg` to be installed.
 */
export interface PostgresPool {
  connect(): Promise<unknown>;
  end(): Promise<void>;
  on(event: 'error', listener: (error: Error) => void): unknown;
}

export interface PostgresSessionRepositoryOptions {
  /** Used to create (and later end) a pool when `pool` is not given. */
  connectionString?: string;
  /** A pool owned by the caller: `close()` leaves it open. */
  pool?: PostgresPool;
  /** Table-name prefix (`<prefix>_sessions`, `<prefix>_events`, `<prefix>_migrations`); default 'session_compaction'. */
  prefix?: string;
  /** Apply pending migrations on first use; default true. With false, call `migrate()` (or run them yourself). */
  initializeSchema?: boolean;
  /**
   * The text search dictionary whose stop words `searchEvents` drops from a query ('what', 'the', 'did' ...)
   * before ranking, e.g. 'german_stem'; null keeps every word. Default 'english_stem'. Only the query is
   * affected: the index holds every word, so changing this needs no migration.
   */
  searchStopWords?: string | null;
  /**
   * Prepare the reads every turn makes (the active window, the search, the neighbourhoods) once per connection,
   * as named statements; default true. Planning them took 0.7–1.5 ms of each at 10,000 events. Set false behind
   * a pooler that does not keep a session's prepared statements (PgBouncer in transaction mode before 1.21, or
   * without `max_prepared_statements`): every statement is then parsed and planned on each call.
   */
  preparedStatements?: boolean;
  logger?: Logger;
}

/** A row read with `rowMode: 'array'` (see eventQuery.eventColumns). */
type Tuple = readonly unknown[];

interface SessionRow {
  id: string;
  user_id: string;
  created_at: Date;
  expires_at: Date | null;
  metadata: unknown;
}

/** The column arrays for a multi-row insert through `unnest`, so any batch is one statement with 10 parameters. */
type EventColumns = EventColumnArrays;

function toColumns(events: readonly SessionEvent[]): EventColumns {
  const c: EventColumns = {
    ids: [],
    types: [],
    texts: [],
    lowered: [],
    data: [],
    synthetic: [],
    branches: [],
    metadata: [],
    timestamps: [],
  };
  for (const e of events) {
    const s = encodeEvent(e);
    c.ids.push(s.id);
    c.types.push(s.messageType);
    c.texts.push(s.text);
    c.lowered.push(s.text === null ? null : s.text.toLowerCase());
    c.data.push(s.data);
    c.synthetic.push(s.synthetic);
    c.branches.push(s.branch);
    c.metadata.push(s.metadata);
    c.timestamps.push(e.timestamp);
  }
  return c;
}

/**
 * The event in `row` from column `at` on, in eventColumns' order; its session's id from the row (the last
 * column) unless the read bound it.
 */
function tupleToEvent(row: Tuple, at: number = 0, sessionId: string = row[at + 9] as string): SessionEvent {
  return decodeEvent({
    id: row[at] as string,
    sessionId,
    timestamp: Number(row[at + 8]),
    messageType: row[at + 1] as StoredEvent['messageType'],
    text: row[at + 2] as string | null,
    data: row[at + 3] as string | null,
    synthetic: row[at + 4] as boolean,
    archived: row[at + 5] as boolean,
    branch: row[at + 6] as string | null,
    metadata: row[at + 7] as string,
  });
}

function rowToSession(row: SessionRow): Session {
  return decodeSession({
    id: row.id,
    userId: row.user_id,
    createdAt: row.created_at,
    expiresAt: row.expires_at,
    metadata: row.metadata,
  });
}

const DEFAULT_STOP_WORDS = 'english_stem';
/** A dictionary name, optionally schema-qualified; it is bound as a parameter and cast to regdictionary. */
const DICTIONARY = /^[a-z_][a-z0-9_]*(\.[a-z_][a-z0-9_]*)?$/i;

/**
 * PostgreSQL over `pg`. Appends and compactions of one session serialise on the session row's lock, so the
 * identity `seq` of the events follows commit order (no append can slip below a concurrent compaction's new
 * window). Compaction archives rows in place and rewrites only the active window: its cost does not grow with
 * the archived history.
 */
export class PostgresSessionRepository
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
    NeighbourSearchRepository,
    EventNeighbourhoodRepository,
    ErasureRepository,
    EventRewritingRepository,
    RetentionRepository,
    MigratableRepository,
    ForkingRepository,
    UserErasureRepository
{
  private readonly pool: pg.Pool;
  private readonly connections: PostgresConnections;
  private readonly tables: PostgresTables;
  private readonly initializeSchema: boolean;
  private readonly logger: Logger;
  private schemaReady: Promise<void> | undefined;
  private readonly sql: ReturnType<typeof statements>;
  private readonly bulk: ReturnType<typeof bulkStatements>;
  private readonly searchStopWords: string | null;
  /** The pool's query with the hot reads named (see the `preparedStatements` option). */
  private readonly read: (text: string, values: unknown[]) => Promise<Tuple[]>;
  private readonly erasure: PostgresErasure;
  private readonly userErasureMarks: PostgresUserErasureMarks;
  private readonly rewrites: PostgresEventRewrites;
  private readonly retention: PostgresRetention;
  private hasRecords = false;
  private warnedUnrecorded = false;
  private hasUserErasureMarks = false;
  private hasSummaries = false;
  private warnedUnmarked = false;
  private hasPurgeGeneration = false;
  private postingsLevel: 'archived' | 'searchable' | undefined;
  private warnedNoPurgeGeneration = false;

  constructor(options: PostgresSessionRepositoryOptions = {}) {
    const opts = options ?? {};
    this.tables = postgresTables(opts.prefix ?? 'session_compaction');
    if (opts.pool !== undefined && opts.pool !== null) {
      this.pool = opts.pool as pg.Pool;
    } else {
      if (typeof opts.connectionString !== 'string' || opts.connectionString.trim() === '') {
        throw new InvalidArgumentError('PostgresSessionRepository needs a connectionString (or PG_URL) or a pool');
      }
      const { Pool } = requireOptional<typeof pg>('pg', 'PostgresSessionRepository');
      this.pool = new Pool({ connectionString: opts.connectionString });
    }
    this.initializeSchema = opts.initializeSchema ?? true;
    this.searchStopWords = opts.searchStopWords === undefined ? DEFAULT_STOP_WORDS : opts.searchStopWords;
    if (opts.preparedStatements !== undefined && typeof opts.preparedStatements !== 'boolean') {
      throw new InvalidArgumentError('preparedStatements must be a boolean');
    }
    const prepared = opts.preparedStatements !== false;
    this.read = (text, values) => tuples(this.pool, text, values, prepared ? statementName(text) : undefined);
    if (this.searchStopWords !== null && (typeof this.searchStopWords !== 'string' || !DICTIONARY.test(this.searchStopWords))) {
      throw new InvalidArgumentError(
        `searchStopWords must name a text search dictionary or be null (got '${String(opts.searchStopWords)}')`,
      );
    }
    this.logger = opts.logger ?? defaultLogger();
    this.connections = new PostgresConnections(this.pool, this.pool !== opts.pool, this.logger);
    this.sql = statements(this.tables);
    this.bulk = bulkStatements(this.tables);
    this.erasure = new PostgresErasure(this.tables);
    this.userErasureMarks = new PostgresUserErasureMarks(this.tables);
    this.rewrites = new PostgresEventRewrites(this.tables);
    this.retention = new PostgresRetention(this.tables);
  }

  /**
   * Applies pending migrations, lowest version first, in one transaction; returns the versions it applied
   * (with `dryRun`, the versions it would apply). Concurrent callers (several app instances starting at once)
   * serialise on a transaction-scoped advisory lock, so each migration runs once. Throws SchemaVersionError,
   * changing nothing, when the tables were written by a newer version of this library.
   */
  async migrate(options: MigrateOptions = {}): Promise<number[]> {
    if (options?.dryRun === true) return this.connections.idempotent('migrate', () => this.pendingVersions());
    // Safe to repeat: it re-reads what is applied under the lock.
    return this.connections.idempotent('migrate', () => this.migrateNow());
  }

  private migrateNow(): Promise<number[]> {
    return this.connections.transaction((client) => migratePostgres(client, this.tables, this.logger));
  }

  private pendingVersions(): Promise<number[]> {
    return postgresPendingVersions(this.pool, this.tables);
  }

  /** Applied, pending and unknown schema versions, with the SQL of each pending step. */
  async schemaStatus(): Promise<SchemaStatus> {
    return this.connections.idempotent('schemaStatus', () => postgresSchemaStatus(this.pool, this.tables));
  }

  /** A new id is checked against the owner's erasure mark in the same transaction as the insert. */
  async save(session: SessionLike): Promise<Session> {
    const s = Session.from(session);
    return this.connections.idempotent('save', async () => {
      await this.ready();
      await this.refuseTombstoned(s.id, () =>
        this.connections.transaction(async (client) => {
          if ((await client.query(this.sql.version, [s.id])).rowCount === 0) await this.refuseErasing(client, s);
          await client.query(this.sql.upsertSession, [s.id, s.userId, s.createdAt, s.expiresAt, JSON.stringify(s.metadata)]);
        }),
      );
      return s;
    });
  }

  async saveIfAbsent(session: SessionLike): Promise<boolean> {
    const s = Session.from(session);
    // Not retried: had a lost first attempt inserted, the retry would report the session as someone else's.
    return this.connections.once('saveIfAbsent', async () => {
      await this.ready();
      return this.refuseTombstoned(s.id, () =>
        this.connections.transaction(async (client) => {
          await this.refuseErasing(client, s);
          return this.insertIfAbsent(client, s);
        }),
      );
    });
  }

  /**
   * One transaction: the source row share-locked (an erasure of it waits, or ran before and the source is
   * gone) and its state compared, the owner's erasure mark, the fork's id (the tombstone trigger), the
   * session and every copied event. Not retried: a lost commit's retry would report its own fork as 'exists'.
   */
  async forkSession(request: ForkRequest): Promise<ForkOutcome> {
    const s = Session.from(request.fork);
    requireEventsOf(s.id, request.events);
    const sourceId = requireText(request.sourceId, 'sourceId');
    const c = toColumns(request.events);
    const { version, purgeGeneration } = request.expected;
    return this.connections.once('forkSession', async () => {
      await this.ready();
      const counted = purgeGeneration !== null && (await this.purgeGenerationMigrated(this.pool));
      return this.refuseTombstoned(s.id, () =>
        this.connections.transaction(async (client): Promise<ForkOutcome> => {
          const { rows } = await client.query<{ event_version: string; purge_generation?: string }>(
            counted ? this.sql.lockLogState : this.sql.lockVersion,
            [sourceId],
          );
          const row = rows[0];
          if (row === undefined) return 'source-missing';
          if (Number(row.event_version) !== version || (counted && Number(row.purge_generation) !== purgeGeneration))
            return 'changed';
          await this.refuseErasing(client, s);
          if (!(await this.insertIfAbsent(client, s))) return 'exists';
          if (request.events.length === 0) return 'forked';
          const inserted = await client.query(this.bulk.appendMany, [
            s.id,
            c.ids,
            c.types,
            c.texts,
            c.lowered,
            c.data,
            c.synthetic,
            request.events.map((e) => e.archived),
            c.branches,
            c.metadata,
            c.timestamps,
          ]);
          const added = inserted.rowCount ?? 0;
          if (added > 0) await client.query(this.bulk.bumpVersionBy, [s.id, added]);
          return 'forked';
        }),
      );
    });
  }

  async beginUserErasure(userId: string, until: Date): Promise<void> {
    const hash = ownerHash(requireText(userId, 'userId'));
    await this.connections.idempotent('beginUserErasure', async () => {
      await this.ready();
      if (!(await this.userErasureMarksMigrated())) return;
      await this.connections.transaction((client) => this.userErasureMarks.mark(client, hash, until));
    });
  }

  async endUserErasure(userId: string): Promise<void> {
    const hash = ownerHash(requireText(userId, 'userId'));
    await this.connections.idempotent('endUserErasure', async () => {
      await this.ready();
      if (!(await this.userErasureMarksMigrated())) return;
      await this.userErasureMarks.unmark(this.pool, hash);
    });
  }

  /** Inside a transaction: refuses a new session of a user whose erasure is in progress. */
  private async refuseErasing(client: pg.PoolClient, s: Session): Promise<void> {
    if (!(await this.userErasureMarksMigrated(client))) return;
    if (await this.userErasureMarks.marked(client, ownerHash(s.userId))) throw userErasureInProgressError(s.id);
  }

  /**
   * False while the schema predates the marks' table (initializeSchema: false, not migrated yet): erasures then
   * block no new session of their user, and a warning says why. Checked until it is true.
   */
  private async userErasureMarksMigrated(db: Pick<pg.ClientBase, 'query'> = this.pool): Promise<boolean> {
    if (this.hasUserErasureMarks) return true;
    const { rows } = await db.query<{ found: boolean }>('SELECT to_regclass($1) IS NOT NULL AS found', [
      this.tables.userErasures,
    ]);
    const found = rows[0]?.found === true;
    this.hasUserErasureMarks = found;
    if (!found && !this.warnedUnmarked) {
      this.warnedUnmarked = true;
      this.logger.warn('a user erasure does not block new sessions of its user until the schema is migrated', {
        prefix: this.tables.prefix,
        version: USER_ERASURE_SCHEMA_VERSION,
      });
    }
    return found;
  }

  private async insertIfAbsent(db: pg.Pool | pg.PoolClient, s: Session): Promise<boolean> {
    const result = await db.query(this.sql.insertSessionIfAbsent, [
      s.id,
      s.userId,
      s.createdAt,
      s.expiresAt,
      JSON.stringify(s.metadata),
    ]);
    return result.rowCount === 1;
  }

  async findById(id: string): Promise<Session | null> {
    return this.connections.idempotent('findById', async () => {
      await this.ready();
      const { rows } = await this.pool.query<SessionRow>(`${this.sql.selectSession} WHERE id = $1`, [id]);
      return rows[0] === undefined ? null : rowToSession(rows[0]);
    });
  }

  /**
   * One transaction holding the session row's lock (`SELECT … FOR UPDATE`) from the read to the write, so a
   * concurrent update in any process waits for it and then reads what it wrote. Not retried: whether a commit
   * whose connection dropped went through is unknown, and a second run would apply `update` twice.
   */
  async updateSessionMetadata(id: string, update: SessionMetadataUpdate): Promise<Session | null> {
    requireText(id, 'sessionId');
    return this.connections.once('updateSessionMetadata', async () => {
      await this.ready();
      return this.connections.transaction(async (client) => {
        const { rows } = await client.query<SessionRow>(`${this.sql.selectSession} WHERE id = $1 FOR UPDATE`, [id]);
        if (rows[0] === undefined) return null;
        const current = rowToSession(rows[0]);
        // A throw from `update` (or an invalid result) rolls the transaction back: nothing is written.
        const next = current.with({ metadata: update(current.metadata) });
        await client.query(this.sql.setMetadata, [id, JSON.stringify(next.metadata)]);
        return next;
      });
    });
  }

  async findByUserId(userId: string): Promise<Session[]> {
    return this.connections.idempotent('findByUserId', async () => {
      await this.ready();
      const { rows } = await this.pool.query<SessionRow>(`${this.sql.selectSession} WHERE user_id = $1 ORDER BY created_at, id`, [
        userId,
      ]);
      return readableSessions(rows, rowToSession, this.logger, userId);
    });
  }

  async findExpiredSessionIds(before: Date): Promise<string[]> {
    if (!(before instanceof Date) || Number.isNaN(before.getTime()))
      throw new InvalidArgumentError('before must be a valid Date');
    return this.connections.idempotent('findExpiredSessionIds', async () => {
      await this.ready();
      const { rows } = await this.pool.query<{ id: string }>(
        `SELECT id FROM ${this.tables.sessions} WHERE expires_at IS NOT NULL AND expires_at < $1 ORDER BY expires_at, id`,
        [before],
      );
      return rows.map((r) => r.id);
    });
  }

  async delete(id: string): Promise<void> {
    return this.connections.idempotent('delete', async () => {
      await this.ready();
      await this.pool.query(`DELETE FROM ${this.tables.sessions} WHERE id = $1`, [id]);
    });
  }

  async appendEvent(event: SessionEvent): Promise<void> {
    if (!(event instanceof SessionEvent)) throw new InvalidArgumentError('event must not be null');
    const c = toColumns([event]);
    // Retried once: the insert is keyed by (session, event id), so a lost attempt that did commit makes it a no-op.
    const rows = await this.connections.idempotent('appendEvent', async () => {
      await this.ready();
      return (
        await this.pool.query<{ found: boolean; inserted: boolean }>(this.sql.append, [
          event.sessionId,
          event.id,
          c.types[0],
          c.texts[0],
          c.lowered[0],
          c.data[0],
          c.synthetic[0],
          event.archived,
          c.branches[0],
          c.metadata[0],
          event.timestamp,
        ])
      ).rows;
    });
    if (rows[0]?.found !== true) throw new InvalidArgumentError(`Session not found: ${event.sessionId}`);
  }

  async getEventVersion(id: string): Promise<number> {
    return this.connections.idempotent('getEventVersion', async () => {
      await this.ready();
      const { rows } = await this.pool.query<{ event_version: string }>(this.sql.version, [id]);
      return rows[0] === undefined ? 0 : Number(rows[0].event_version);
    });
  }

  async getEventLogState(id: string): Promise<EventLogState> {
    return this.connections.idempotent('getEventLogState', async () => {
      await this.ready();
      if (!(await this.purgeGenerationMigrated(this.pool))) {
        const { rows } = await this.pool.query<{ event_version: string }>(this.sql.version, [id]);
        return { version: rows[0] === undefined ? 0 : Number(rows[0].event_version), purgeGeneration: null };
      }
      // One row, so one snapshot: the generation matches the version read with it.
      const { rows } = await this.pool.query<{ event_version: string; purge_generation: string }>(this.sql.logState, [id]);
      const row = rows[0];
      return row === undefined
        ? { version: 0, purgeGeneration: 0 }
        : { version: Number(row.event_version), purgeGeneration: Number(row.purge_generation) };
    });
  }

  /**
   * False while the schema predates the purge generation (initializeSchema: false, not migrated yet): purges
   * then work uncounted and readers have the version alone, and a warning says why. Checked until it is
   * true: another instance may migrate meanwhile.
   */
  private async purgeGenerationMigrated(db: Pick<pg.ClientBase, 'query'>): Promise<boolean> {
    if (this.hasPurgeGeneration) return true;
    const { rows } = await db.query<{ found: boolean }>(this.sql.hasPurgeGeneration, [this.tables.sessions]);
    this.hasPurgeGeneration = rows[0]?.found === true;
    if (!this.hasPurgeGeneration && !this.warnedNoPurgeGeneration) {
      this.warnedNoPurgeGeneration = true;
      this.logger.warn('recall indexes of other processes miss archive purges until the schema is migrated', {
        prefix: this.tables.prefix,
        version: POSTGRES_PURGE_GENERATION_SCHEMA_VERSION,
      });
    }
    return this.hasPurgeGeneration;
  }

  /**
   * How a session's search reads the postings (see buildSearchQuery): scored from them alone once they hold only
   * searchable events (SEARCHABLE_POSTINGS_SCHEMA_VERSION), as candidates while they hold every archived event
   * (EVENT_TERMS_SCHEMA_VERSION), not at all before (initializeSchema: false, not migrated yet: every event
   * matching a word is visited, as before). Checked until the latest is found.
   */
  private async postingsSearch(): Promise<PostingsSearch | undefined> {
    if (this.postingsLevel !== 'searchable') {
      const { rows } = await this.pool.query<{ terms: boolean; migrations: boolean }>(
        'SELECT to_regclass($1) IS NOT NULL AS terms, to_regclass($2) IS NOT NULL AS migrations',
        [this.tables.eventTerms, this.tables.migrations],
      );
      if (rows[0]?.terms === true) {
        // Only a recorded version 13 says which postings these are: without the record (a schema applied by hand
        // from schemaStatus()), the candidate statement is right for either.
        const recorded = rows[0].migrations === true && (await this.recorded(SEARCHABLE_POSTINGS_SCHEMA_VERSION));
        this.postingsLevel = recorded ? 'searchable' : 'archived';
      }
    }
    if (this.postingsLevel === undefined) return undefined;
    return { perWord: POSTINGS_PER_WORD, searchableOnly: this.postingsLevel === 'searchable' };
  }

  /** Whether the migrations table records `version` (the table must exist). */
  private async recorded(version: number): Promise<boolean> {
    const { rows } = await this.pool.query<{ found: boolean }>(
      `SELECT EXISTS (SELECT 1 FROM ${this.tables.migrations} WHERE version = $1) AS found`,
      [version],
    );
    return rows[0]?.found === true;
  }

  /** Two indexed reads: the event (for its original's id), then its family and the synthetic events. */
  async findRedactionScope(id: string, eventId: string): Promise<SessionEvent[]> {
    const e = this.tables.events;
    const rows = await this.connections.idempotent('findRedactionScope', async () => {
      await this.ready();
      const target = await tuples(this.pool, `SELECT ${EVENT_COLUMNS} FROM ${e} WHERE session_id = $1 AND id = $2`, [
        id,
        eventId,
      ]);
      if (target[0] === undefined) return [];
      const from = tupleToEvent(target[0]).metadata[MASKED_FROM];
      const root = typeof from === 'string' ? from : eventId;
      return tuples(
        this.pool,
        `SELECT ${EVENT_COLUMNS} FROM ${e} WHERE session_id = $1
           AND (synthetic OR id = $2 OR id = $3 OR metadata->>'${MASKED_FROM}' = $3) ORDER BY seq`,
        [id, eventId, root],
      );
    });
    return redactionScopeOf(
      rows.map((row) => tupleToEvent(row)),
      eventId,
    );
  }

  async findEvents(id: string, filter: EventFilter = EventFilter.all()): Promise<SessionEvent[]> {
    const f = filter ?? EventFilter.all();
    const q = buildEventQuery(this.tables.events, id, f);
    const rows = await this.connections.idempotent('findEvents', async () => {
      await this.ready();
      return this.read(q.sql, q.params);
    });
    let events = rows.map((row) => tupleToEvent(row));
    if (q.reversed) events.reverse();
    if (q.windowInJs) {
      events = events.filter((e) => e.text !== null && f.matchesText(e.text));
      return applyEventWindow(events, f);
    }
    return events;
  }

  /**
   * One statement for every event: two index range scans each (before it, from it on), whatever the log's
   * size. An event in several neighbourhoods is decoded once.
   */
  async findEventNeighbours(sessionId: string, eventIds: readonly string[], radius: number): Promise<SessionEvent[][]> {
    const ids = requireNeighbourRequest(eventIds, radius);
    if (typeof sessionId !== 'string' || ids.length === 0) return [];
    const sql = buildNeighbourQuery(this.tables.events);
    // Columns: ord, part, seq, then the event's (see buildNeighbourQuery).
    const rows = await this.connections.idempotent('findEventNeighbours', async () => {
      await this.ready();
      return this.read(sql, [sessionId, ids, radius]);
    });
    return neighbourRuns(rows, 0, radius, sessionId);
  }

  /**
   * Matched through the GIN index over the generated `text_tsv` column ('simple' configuration: words
   * lower-cased, no stemming), ranked by BM25 computed over the matching events (see postgres/searchQuery.ts).
   * Any of the query's words may match; see `SessionRepository.searchEvents`.
   */
  async searchEvents(sessionId: string, query: string, options?: EventSearchOptions): Promise<ScoredEvent[]> {
    const o = resolveEventSearchOptions(options);
    if (typeof sessionId !== 'string' || typeof query !== 'string' || searchTerms(query).length === 0) return [];
    const rows = await this.connections.idempotent('searchEvents', async () => {
      await this.ready();
      const postings = await this.postingsSearch();
      const q = buildSearchQuery(this.tables, sessionId, searchWords(query), this.searchStopWords, o, undefined, postings);
      return this.read(q.sql, q.params);
    });
    // The score follows the event's columns (see buildSearchQuery).
    return rows.map((row) => ({ event: tupleToEvent(row), score: Number(row[10]) }));
  }

  /**
   * `searchEvents` and the neighbourhoods of the hits in `sessionId` (`findEventNeighbours`) in one statement: one
   * round trip, one snapshot (see NeighbourSearchRepository).
   */
  async searchEventsWithNeighbours(
    sessionId: string,
    query: string,
    options: EventSearchOptions | undefined,
    radius: number,
  ): Promise<ScoredEventsWithNeighbours> {
    requireNeighbourRequest([], radius);
    const o = resolveEventSearchOptions(options);
    if (typeof sessionId !== 'string' || typeof query !== 'string' || searchTerms(query).length === 0) {
      return { hits: [], neighbours: [] };
    }
    const rows = await this.connections.idempotent('searchEventsWithNeighbours', async () => {
      await this.ready();
      const postings = await this.postingsSearch();
      const q = buildSearchQuery(this.tables, sessionId, searchWords(query), this.searchStopWords, o, radius, postings);
      return this.read(q.sql, q.params);
    });
    // Columns: kind, score, then ord, part, seq and the event's (see buildSearchQuery), in no order.
    const ranked: Tuple[] = [];
    const around: Tuple[] = [];
    for (const row of rows) (Number(row[0]) === 0 ? ranked : around).push(row);
    // searchEvents' order: best first, ties in log order.
    ranked.sort((a, b) => Number(b[1]) - Number(a[1]) || Number(a[4]) - Number(b[4]));
    const decoded = new Map<number, SessionEvent>();
    const neighbours = neighbourRuns(around, 2, radius, sessionId, decoded);
    // A hit of this session came without its columns: it is the first event of its own neighbourhood.
    const hits = ranked.map((row) => ({
      event: row[5] === null ? ownHit(decoded, Number(row[4])) : tupleToEvent(row, 5),
      score: Number(row[1]),
    }));
    return { hits, neighbours };
  }

  async compactEvents(
    id: string,
    archived: readonly SessionEvent[],
    retained: readonly SessionEvent[],
    expectedVersion: number,
    record?: CompactionRecord,
  ): Promise<boolean> {
    requireText(id, 'sessionId');
    if (record !== undefined) requireRecordOf(id, record);
    if (record !== undefined && !(await this.recordsMigrated())) record = undefined;
    const archivedIds = [...new Set(archived.map((e) => e.id))];
    const kept = toColumns(retained);
    const withSummary = record !== undefined && (await this.summariesMigrated());
    const recordParams =
      record === undefined
        ? null
        : [
            id,
            record.id,
            record.versionAfter,
            record.createdAt,
            [...record.archivedEventIds],
            encodeCompactionRecord(record),
            ...(withSummary ? [encodeCompactionSummary(record)] : []),
          ];
    const insertRecord = withSummary ? this.sql.insertCompactionWithSummary : this.sql.insertCompaction;
    // Not retried: whether a commit whose connection dropped went through is unknown, and the caller decides.
    const outcome = await this.connections.once('compactEvents', async () => {
      await this.ready();
      return this.compactInTransaction(
        id,
        archived,
        archivedIds,
        kept,
        expectedVersion,
        recordParams === null ? undefined : async (client) => void (await client.query(insertRecord, recordParams)),
      );
    });
    if (outcome === 'missing') throw new InvalidArgumentError(`Session not found: ${id}`);
    if (outcome === 'stale') this.logger.debug('compactEvents: version mismatch', { sessionId: id, expectedVersion });
    return outcome === 'committed';
  }

  /**
   * False while the schema predates compaction records (initializeSchema: false, not migrated yet):
   * compactions then work as before, unrecorded, and a warning says why. Checked until it is true.
   */
  private async recordsMigrated(): Promise<boolean> {
    if (this.hasRecords) return true;
    const found = await this.connections.idempotent('compactEvents', async () => {
      await this.ready();
      const { rows } = await this.pool.query<{ found: boolean }>('SELECT to_regclass($1) IS NOT NULL AS found', [
        this.tables.compactions,
      ]);
      return rows[0]?.found === true;
    });
    this.hasRecords = found;
    if (!found && !this.warnedUnrecorded) {
      this.warnedUnrecorded = true;
      this.logger.warn('compactions are not recorded until the schema is migrated', {
        prefix: this.tables.prefix,
        version: COMPACTION_RECORD_SCHEMA_VERSION,
      });
    }
    return found;
  }

  /**
   * Whether records have a stored summary column (COMPACTION_SUMMARY_SCHEMA_VERSION). Until then records are
   * written without it and summarised on the server when listed. Checked until it is true.
   */
  private async summariesMigrated(): Promise<boolean> {
    if (this.hasSummaries) return true;
    this.hasSummaries = await this.connections.idempotent('compactionSummaries', async () => {
      await this.ready();
      const { rows } = await this.pool.query<{ found: boolean }>(this.sql.hasColumn, [this.tables.compactions, 'summary']);
      return rows[0]?.found === true;
    });
    return this.hasSummaries;
  }

  private async requireRecords(): Promise<void> {
    if (!(await this.recordsMigrated())) {
      throw new IllegalStateError(
        `PostgreSQL schema for prefix '${this.tables.prefix}' has no compaction records (schema version ` +
          `${COMPACTION_RECORD_SCHEMA_VERSION}): call migrate() or construct with initializeSchema: true`,
      );
    }
  }

  async listCompactions(id: string): Promise<CompactionRecord[]> {
    await this.requireRecords();
    return this.connections.idempotent('listCompactions', async () => {
      await this.ready();
      const { rows } = await this.pool.query<{ body: string; reverted_at: Date | null }>(this.sql.listCompactions, [id]);
      return rows.map((r) => decodeCompactionRecord(r.body, r.reverted_at));
    });
  }

  async listCompactionSummaries(id: string): Promise<CompactionRecordSummary[]> {
    await this.requireRecords();
    return this.connections.idempotent('listCompactionSummaries', async () => {
      await this.ready();
      const sql = (await this.summariesMigrated()) ? this.sql.listStoredCompactionSummaries : this.sql.listCompactionSummaries;
      const { rows } = await this.pool.query<{ body: StoredCompactionSummary; reverted_at: Date | null }>(sql, [id]);
      return rows.map((r) => decodeCompactionSummary(r.body, r.reverted_at));
    });
  }

  async revertCompactionEvents(
    id: string,
    compactionId: string,
    window: readonly SessionEvent[],
    expectedVersion: number,
    revertedAt: Date,
  ): Promise<boolean> {
    requireText(id, 'sessionId');
    await this.requireRecords();
    const kept = toColumns(window);
    const outcome = await this.connections.once('revertCompactionEvents', async () => {
      await this.ready();
      return this.compactInTransaction(id, [], [], kept, expectedVersion, async (client) => {
        const marked = await client.query(this.sql.markReverted, [id, compactionId, revertedAt]);
        // Thrown inside the transaction: the window swap is rolled back with it.
        if (marked.rowCount === 0) throw new InvalidArgumentError(`Compaction not found: ${compactionId}`);
      });
    });
    if (outcome === 'missing') throw new InvalidArgumentError(`Session not found: ${id}`);
    return outcome === 'committed';
  }

  private compactInTransaction(
    id: string,
    archived: readonly SessionEvent[],
    archivedIds: string[],
    kept: EventColumns,
    expectedVersion: number,
    alsoWrite?: (client: pg.PoolClient) => Promise<void>,
  ): Promise<'missing' | 'stale' | 'committed'> {
    return this.connections.transaction(async (client) => {
      // Checks and claims the version in one statement; its row lock queues concurrent appends behind us.
      const claim = await client.query(this.sql.claimVersion, [id, expectedVersion]);
      if (claim.rowCount === 0) {
        const exists = await client.query(`SELECT 1 FROM ${this.tables.sessions} WHERE id = $1`, [id]);
        return exists.rowCount === 0 ? ('missing' as const) : ('stale' as const);
      }
      // In place: archived rows keep their seq, so history is never re-read or re-written.
      const marked = await client.query(this.sql.archiveInPlace, [id, archivedIds]);
      if ((marked.rowCount ?? 0) < archivedIds.length) {
        // An archived event that is not in the log (the caller built it) is still kept, as in memory.
        const c = toColumns(archived);
        await client.query(this.sql.insertEvents, [
          id,
          c.ids,
          c.types,
          c.texts,
          c.lowered,
          c.data,
          c.synthetic,
          true,
          c.branches,
          c.metadata,
          c.timestamps,
        ]);
      }
      // A window that is already the active rows, unchanged and after the whole archive (a sliding window's
      // usual case), stays as it is: rewriting it deleted and re-inserted every row with its indexes.
      const inPlace = await client.query<{ in_place: boolean }>(this.sql.windowInPlace, [
        id,
        kept.ids,
        kept.types,
        kept.texts,
        kept.data,
        kept.synthetic,
        kept.branches,
        kept.metadata,
        kept.timestamps,
      ]);
      if (inPlace.rows[0]?.in_place === true) {
        if (alsoWrite !== undefined) await alsoWrite(client);
        return 'committed' as const;
      }
      await client.query(this.sql.dropActiveWindow, [id, kept.ids]);
      if (kept.ids.length > 0) {
        await client.query(this.sql.insertEvents, [
          id,
          kept.ids,
          kept.types,
          kept.texts,
          kept.lowered,
          kept.data,
          kept.synthetic,
          false,
          kept.branches,
          kept.metadata,
          kept.timestamps,
        ]);
      }
      if (alsoWrite !== undefined) await alsoWrite(client);
      return 'committed' as const;
    });
  }

  /** One transaction holding the session row's lock, like appendEvent: the batch keeps its place and order. */
  async appendEvents(sessionId: string, events: readonly SessionEvent[]): Promise<number> {
    requireEventsOf(sessionId, events);
    const c = toColumns(events);
    // Retried once: rows are keyed by (session, event id) and the version grows by what was inserted.
    return this.connections.idempotent('appendEvents', async () => {
      await this.ready();
      return this.appendEventsInTransaction(sessionId, events, c);
    });
  }

  private appendEventsInTransaction(sessionId: string, events: readonly SessionEvent[], c: EventColumns): Promise<number> {
    return this.connections.transaction(async (client) => {
      if ((await client.query(this.bulk.lockSession, [sessionId])).rowCount === 0)
        throw new InvalidArgumentError(`Session not found: ${sessionId}`);
      if (events.length === 0) return 0;
      const inserted = await client.query(this.bulk.appendMany, [
        sessionId,
        c.ids,
        c.types,
        c.texts,
        c.lowered,
        c.data,
        c.synthetic,
        events.map((e) => e.archived),
        c.branches,
        c.metadata,
        c.timestamps,
      ]);
      const added = inserted.rowCount ?? 0;
      if (added > 0) await client.query(this.bulk.bumpVersionBy, [sessionId, added]);
      return added;
    });
  }

  /** Ids in ascending order (the primary-key index); the cursor is the last id of the page. */
  async listSessionIds(options?: ListSessionIdsOptions): Promise<SessionIdPage> {
    const limit = pageLimit(options);
    const after = options?.cursor ?? null;
    const { rows } = await this.connections.idempotent('listSessionIds', async () => {
      await this.ready();
      return after === null
        ? this.pool.query<{ id: string }>(this.bulk.firstIds, [limit + 1])
        : this.pool.query<{ id: string }>(this.bulk.idsAfter, [after, limit + 1]);
    });
    const page = rows.slice(0, limit).map((r) => r.id);
    return { ids: page, cursor: rows.length > limit ? page[page.length - 1]! : null };
  }

  /**
   * One statement per page. The page is cut first (a seek on the primary key or the user index), then each of its
   * sessions gets its counts (on the window index) and its last event (one step back on the log index): with
   * the counts beside a sort they would run for every matching row. The id prefix is compared with
   * starts_with, whatever the column's collation orders.
   */
  async listSessions(options?: ListSessionsOptions): Promise<SessionListingPage> {
    const { cursor, limit, userId, idPrefix, withActiveEvents } = resolveListSessionsOptions(options);
    const { sessions: s, events: e, compactions: c } = this.tables;
    const where: string[] = [];
    const params: (string | number)[] = [];
    const bind = (value: string | number) => `$${params.push(value)}`;
    if (cursor !== null) where.push(`s.id > ${bind(cursor)}`);
    if (userId !== null) where.push(`s.user_id = ${bind(userId)}`);
    if (idPrefix !== null) where.push(`starts_with(s.id, ${bind(idPrefix)})`);
    const sql = `SELECT s.id, s.user_id, s.created_at, s.expires_at, s.metadata, s.event_version,
        (SELECT count(*) FROM ${e} WHERE session_id = s.id AND archived = false) AS active_events,
        (SELECT count(*) FROM ${e} WHERE session_id = s.id AND archived = true) AS archived_events,
        (SELECT "timestamp" FROM ${e} WHERE session_id = s.id ORDER BY seq DESC LIMIT 1) AS last_event_at,
        (SELECT count(*) FROM ${c} WHERE session_id = s.id AND reverted_at IS NULL) AS compactions
      FROM (SELECT id, user_id, created_at, expires_at, metadata, event_version FROM ${s} s
            ${where.length > 0 ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY s.id LIMIT ${bind(limit + 1)}) s
      ORDER BY s.id`;
    type Row = SessionRow & {
      event_version: string;
      active_events: string;
      archived_events: string;
      last_event_at: Date | null;
      compactions: string;
    };
    const { rows, windows } = await this.connections.idempotent('listSessions', async () => {
      await this.ready();
      const listed = await this.pool.query<Row>(sql, params);
      const ids = listed.rows.slice(0, limit).map((r) => r.id);
      // The page's active windows in one more statement, not one per session.
      const events =
        withActiveEvents && ids.length > 0
          ? await tuples(
              this.pool,
              `SELECT ${EVENT_COLUMNS} FROM ${e} WHERE session_id = ANY($1::text[]) AND archived = false ORDER BY session_id, seq`,
              [ids],
            )
          : null;
      return { rows: listed.rows, windows: events };
    });
    const page: SessionListing[] = rows.slice(0, limit).map((row) => ({
      session: rowToSession(row),
      version: Number(row.event_version),
      activeEvents: Number(row.active_events),
      archivedEvents: Number(row.archived_events),
      lastEventAt: row.last_event_at,
      compactions: Number(row.compactions),
    }));
    if (windows !== null) {
      const byId = new Map<string, SessionEvent[]>(page.map((l) => [l.session.id, []]));
      for (const row of windows) {
        const event = tupleToEvent(row);
        byId.get(event.sessionId)!.push(event);
      }
      for (const l of page) l.activeWindow = byId.get(l.session.id)!;
    }
    return { sessions: page, cursor: rows.length > limit ? page[page.length - 1]!.session.id : null };
  }

  // Erasure, recreation, rewrites and purges are not retried: whether a lost commit went through is unknown,
  // and a blind second attempt would report nothing erased, refuse its own recreation or lose its CAS.
  async eraseSession(id: string, options: EraseSessionOptions): Promise<ErasedSession | null> {
    requireText(id, 'sessionId');
    return this.connections.once('eraseSession', async () => {
      await this.ready();
      return this.connections.transaction((client) => this.erasure.erase(client, id, options, ownerHash));
    });
  }

  async findTombstone(id: string): Promise<Tombstone | null> {
    return this.connections.idempotent('findTombstone', async () => {
      await this.ready();
      return this.erasure.findTombstone(this.pool, id);
    });
  }

  async recreateSession(session: SessionLike): Promise<boolean> {
    const s = Session.from(session);
    return this.connections.once('recreateSession', async () => {
      await this.ready();
      return this.connections.transaction((client) =>
        this.erasure.recreate(client, s.id, ownerHash(s.userId), async () => {
          await this.refuseErasing(client, s);
          return this.insertIfAbsent(client, s);
        }),
      );
    });
  }

  async purgeTombstones(before: Date, limit: number, sessionId?: string): Promise<number> {
    return this.connections.idempotent('purgeTombstones', async () => {
      await this.ready();
      return this.erasure.purgeTombstones(this.pool, before, limit, sessionId);
    });
  }

  async rewriteEvents(id: string, events: readonly SessionEvent[], expectedVersion: number): Promise<boolean> {
    requireRewriteBatch(id, events);
    const columns = toColumns(events);
    return this.connections.once('rewriteEvents', async () => {
      await this.ready();
      return this.connections.transaction((client) => this.rewrites.rewrite(client, id, columns, expectedVersion));
    });
  }

  async purgeArchivedEvents(id: string, criteria: ArchivePurgeCriteria): Promise<string[]> {
    requirePurgeCriteria(criteria);
    return this.connections.once('purgeArchivedEvents', async () => {
      await this.ready();
      // Records of compactions whose archived events go are dropped in the same transaction.
      return this.connections.transaction(async (client) => {
        // Until the column is known to exist, the session row is locked before looking: a concurrent
        // migration's ALTER then has either committed (and is seen) or waits for this commit, so no reader
        // holds a generation this purge skipped.
        const counted =
          this.hasPurgeGeneration ||
          ((await client.query(this.sql.lockSession, [id])).rowCount !== 0 && (await this.purgeGenerationMigrated(client)));
        const purged = await this.retention.purgeArchived(client, id, criteria);
        if (purged.length > 0) {
          await client.query(this.sql.dropCoveringCompactions, [id, purged]);
          if (counted) await client.query(this.sql.bumpPurgeGeneration, [id]);
        }
        return purged;
      });
    });
  }

  async listSessionActivity(cursor: string | null, limit: number): Promise<SessionActivityPage> {
    return this.connections.idempotent('listSessionActivity', async () => {
      await this.ready();
      return this.retention.listActivity(this.pool, cursor, limit);
    });
  }

  async close(): Promise<void> {
    await this.connections.close();
  }

  /** A save that hit the tombstone trigger: the id belonged to a deleted session. */
  private async refuseTombstoned<T>(id: string, write: () => Promise<T>): Promise<T> {
    try {
      return await write();
    } catch (error) {
      if (isTombstonedFailure(error)) throw sessionDeletedError(id, await this.erasure.findTombstone(this.pool, id));
      throw error;
    }
  }

  private ready(): Promise<void> {
    // Without initializeSchema the schema is the caller's, but a newer one is still refused.
    // Unwrapped: the calling operation reports (and retries) a connection lost while migrating.
    this.schemaReady ??= (this.initializeSchema ? this.migrateNow() : this.pendingVersions()).then(
      () => undefined,
      (error: unknown) => {
        // A failed first use (server down) must not poison the instance: the next call retries.
        this.schemaReady = undefined;
        throw error;
      },
    );
    return this.schemaReady;
  }
}

function statements(t: PostgresTables) {
  return {
    upsertSession: `INSERT INTO ${t.sessions} (id, user_id, created_at, expires_at, metadata)
      VALUES ($1, $2, $3, $4, $5::jsonb)
      ON CONFLICT (id) DO UPDATE SET user_id = EXCLUDED.user_id, created_at = EXCLUDED.created_at,
        expires_at = EXCLUDED.expires_at, metadata = EXCLUDED.metadata`,
    insertSessionIfAbsent: `INSERT INTO ${t.sessions} (id, user_id, created_at, expires_at, metadata)
      VALUES ($1, $2, $3, $4, $5::jsonb) ON CONFLICT (id) DO NOTHING`,
    selectSession: `SELECT id, user_id, created_at, expires_at, metadata FROM ${t.sessions}`,
    setMetadata: `UPDATE ${t.sessions} SET metadata = $2::jsonb WHERE id = $1`,
    version: `SELECT event_version FROM ${t.sessions} WHERE id = $1`,
    logState: `SELECT event_version, purge_generation FROM ${t.sessions} WHERE id = $1`,
    hasPurgeGeneration: `SELECT EXISTS (SELECT 1 FROM pg_attribute
      WHERE attrelid = to_regclass($1) AND attname = 'purge_generation' AND NOT attisdropped) AS found`,
    lockSession: `SELECT 1 FROM ${t.sessions} WHERE id = $1 FOR UPDATE`,
    lockVersion: `SELECT event_version FROM ${t.sessions} WHERE id = $1 FOR SHARE`,
    lockLogState: `SELECT event_version, purge_generation FROM ${t.sessions} WHERE id = $1 FOR SHARE`,
    bumpPurgeGeneration: `UPDATE ${t.sessions} SET purge_generation = purge_generation + 1 WHERE id = $1`,
    // One statement, one round trip: lock the session row, insert unless the id exists, bump the version
    // only when a row was inserted. The lock makes seq order equal commit order within the session.
    append: `WITH s AS (SELECT id FROM ${t.sessions} WHERE id = $1 FOR UPDATE),
      ins AS (
        INSERT INTO ${t.events}
          (session_id, id, message_type, text, text_lc, data, synthetic, archived, branch, metadata, "timestamp")
        SELECT s.id, $2, $3, $4, $5, $6::jsonb, $7, $8, $9, $10::jsonb, $11 FROM s
        ON CONFLICT (session_id, id) DO NOTHING
        RETURNING seq),
      upd AS (
        UPDATE ${t.sessions} SET event_version = event_version + 1
        WHERE id = $1 AND EXISTS (SELECT 1 FROM ins)
        RETURNING event_version)
      SELECT EXISTS (SELECT 1 FROM s) AS found, EXISTS (SELECT 1 FROM upd) AS inserted`,
    claimVersion: `UPDATE ${t.sessions} SET event_version = event_version + 1 WHERE id = $1 AND event_version = $2`,
    archiveInPlace: `UPDATE ${t.events} SET archived = TRUE
      WHERE session_id = $1 AND id = ANY($2::text[]) AND archived = FALSE`,
    // The old active window goes (superseded summaries with it); a retained id that sits in the archive is
    // replaced by the retained copy, since an id is unique per session.
    dropActiveWindow: `DELETE FROM ${t.events} WHERE session_id = $1 AND (archived = FALSE OR id = ANY($2::text[]))`,
    // Whether the session's active rows, once the archived ones are marked, are the retained events exactly (same
    // order, every stored column equal) and all sort after its archive (see compactInTransaction).
    windowInPlace: `WITH k AS (
        SELECT * FROM unnest($2::text[], $3::text[], $4::text[], $5::jsonb[], $6::boolean[], $7::text[], $8::jsonb[],
          $9::timestamptz[]) WITH ORDINALITY AS u(id, message_type, text, data, synthetic, branch, metadata, ts, ord)
      ),
      a AS (
        SELECT row_number() OVER (ORDER BY seq) AS ord, seq, id, message_type, text, data, synthetic, branch, metadata,
          "timestamp" AS ts
        FROM ${t.events} WHERE session_id = $1 AND archived = FALSE
      )
      SELECT NOT EXISTS (
          SELECT 1 FROM k FULL JOIN a ON a.ord = k.ord
          WHERE a.ord IS NULL OR k.ord IS NULL OR a.id IS DISTINCT FROM k.id
            OR a.message_type IS DISTINCT FROM k.message_type OR a.text IS DISTINCT FROM k.text
            OR a.data IS DISTINCT FROM k.data OR a.synthetic IS DISTINCT FROM k.synthetic
            OR a.branch IS DISTINCT FROM k.branch OR a.metadata IS DISTINCT FROM k.metadata OR a.ts IS DISTINCT FROM k.ts
        ) AND coalesce(
          (SELECT max(seq) FROM ${t.events} WHERE session_id = $1 AND archived = TRUE) < (SELECT min(seq) FROM a),
          TRUE
        ) AS in_place`,
    insertEvents: `INSERT INTO ${t.events}
        (session_id, id, message_type, text, text_lc, data, synthetic, archived, branch, metadata, "timestamp")
      SELECT $1, u.id, u.message_type, u.text, u.text_lc, u.data, u.synthetic, $8, u.branch, u.metadata, u.ts
      FROM unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::jsonb[], $7::boolean[], $9::text[], $10::jsonb[],
        $11::timestamptz[]) WITH ORDINALITY AS u(id, message_type, text, text_lc, data, synthetic, branch, metadata, ts, ord)
      ORDER BY u.ord
      ON CONFLICT (session_id, id) DO NOTHING`,
    insertCompaction: `INSERT INTO ${t.compactions} (session_id, id, version_after, created_at, archived_ids, body)
      VALUES ($1, $2, $3, $4, $5::text[], $6)`,
    listCompactions: `SELECT body, reverted_at FROM ${t.compactions} WHERE session_id = $1 ORDER BY version_after DESC`,
    insertCompactionWithSummary: `INSERT INTO ${t.compactions}
        (session_id, id, version_after, created_at, archived_ids, body, summary)
      VALUES ($1, $2, $3, $4, $5::text[], $6, $7::jsonb)`,
    // Before COMPACTION_SUMMARY_SCHEMA_VERSION: the summary is built in the server (the body parsed once, its id
    // arrays counted and dropped), so only a few hundred bytes per record cross the wire.
    listCompactionSummaries: `SELECT ${summaryOfBody('c.body')} AS body, c.reverted_at
      FROM ${t.compactions} c WHERE c.session_id = $1 ORDER BY c.version_after DESC`,
    // The stored summary; a row written before the column existed is summarised as above.
    listStoredCompactionSummaries: `SELECT coalesce(c.summary, ${summaryOfBody('c.body')}) AS body, c.reverted_at
      FROM ${t.compactions} c WHERE c.session_id = $1 ORDER BY c.version_after DESC`,
    hasColumn: `SELECT EXISTS (SELECT 1 FROM pg_attribute
      WHERE attrelid = to_regclass($1) AND attname = $2 AND NOT attisdropped) AS found`,
    markReverted: `UPDATE ${t.compactions} SET reverted_at = $3 WHERE session_id = $1 AND id = $2`,
    dropCoveringCompactions: `DELETE FROM ${t.compactions} WHERE session_id = $1 AND archived_ids && $2::text[]`,
  };
}

/**
 * SQL of the summary of a record body (CompactionRecordSummary's storage form): the body parsed once as jsonb,
 * each array of COMPACTION_RECORD_ARRAYS dropped and counted. A scalar subquery, so inside coalesce it runs only
 * for a row without a stored summary. Field names are constants, not input.
 */
function summaryOfBody(body: string): string {
  const arrays = Object.entries(COMPACTION_RECORD_ARRAYS);
  const dropped = arrays.map(([array]) => ` - '${array}'`).join('');
  const counts = arrays.map(([array, count]) => `'${count}', jsonb_array_length(j.b -> '${array}')`).join(', ');
  return `(SELECT (j.b${dropped}) || jsonb_build_object(${counts}) FROM (SELECT (${body})::jsonb AS b) j)`;
}

/** The rows of a statement as arrays (see eventQuery.eventColumns). */
async function tuples(db: Pick<pg.Pool, 'query'>, text: string, values: unknown[], name?: string): Promise<Tuple[]> {
  return (await db.query<unknown[]>({ text, values, rowMode: 'array', name })).rows;
}

/** Names of prepared statements by their text; the texts are few (one per table prefix and option set). */
const statementNames = new Map<string, string>();
const MAX_STATEMENT_NAMES = 1_000;

/**
 * The name a statement is prepared under: a digest of its text, so the same text has the same name on every
 * connection, and a different text never reuses one (`pg` refuses a name prepared with another text).
 */
function statementName(text: string): string {
  let name = statementNames.get(text);
  if (name === undefined) {
    if (statementNames.size >= MAX_STATEMENT_NAMES) statementNames.clear();
    name = `sc_${createHash('sha256').update(text).digest('base64url').slice(0, 32)}`;
    statementNames.set(text, name);
  }
  return name;
}

/** The event of a hit read with its neighbourhood (searchEventsWithNeighbours). */
function ownHit(decoded: ReadonlyMap<number, SessionEvent>, seq: number): SessionEvent {
  const event = decoded.get(seq);
  if (event === undefined) throw new IllegalStateError(`search hit at seq ${seq} came without its neighbourhood`);
  return event;
}

/**
 * The runs of findEventNeighbours from the rows of a neighbourhood read (buildNeighbourQuery, or the search's
 * kind 1 rows): from column `at` on, the hit's rank, the part (0 before it, 1 from it on), the seq, then the
 * event's columns. An event in several neighbourhoods is decoded once, and kept in `decoded` by its seq.
 */
function neighbourRuns(
  rows: readonly Tuple[],
  at: number,
  radius: number,
  sessionId: string,
  decoded: Map<number, SessionEvent> = new Map(),
): SessionEvent[][] {
  const byHit = new Map<string, { before: Tuple[]; from: Tuple[] }>();
  for (const row of rows) {
    const ord = String(row[at]);
    let hit = byHit.get(ord);
    if (hit === undefined) byHit.set(ord, (hit = { before: [], from: [] }));
    (Number(row[at + 1]) === 0 ? hit.before : hit.from).push(row);
  }
  const seq = (row: Tuple) => Number(row[at + 2]);
  const event = (row: Tuple) => {
    let e = decoded.get(seq(row));
    if (e === undefined) decoded.set(seq(row), (e = tupleToEvent(row, at + 3, sessionId)));
    return e;
  };
  const windows: KeyedWindow[] = [];
  for (const { before, from } of byHit.values()) {
    before.sort((a, b) => seq(a) - seq(b));
    from.sort((a, b) => seq(a) - seq(b));
    const ordered = [...before, ...from.slice(0, radius + 1)];
    windows.push({
      keys: ordered.map(seq),
      events: ordered.map(event),
      next: from.length > radius + 1 ? seq(from[radius + 1]!) : null,
    });
  }
  return mergeNeighbourWindows(windows);
}
