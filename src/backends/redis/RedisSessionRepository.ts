import { randomUUID } from 'node:crypto';
import {
  decodeCompactionRecord,
  decodeCompactionSummary,
  encodeCompactionRecord,
  encodeCompactionSummary,
  newestFirst,
  requireRecordOf,
  type CompactionRecord,
  type CompactionRecordSummary,
} from '../../repository/CompactionRecord.js';
import type { Redis } from 'ioredis';
import { CorruptedRecordError, IllegalStateError, InvalidArgumentError, requireText } from '../../errors.js';
import { applyEventWindow, EventFilter } from '../../filter/EventFilter.js';
import { defaultLogger, type Logger } from '../../logging.js';
import { requireOptional } from '../../optionalDependency.js';
import { Session, type SessionLike } from '../../session/Session.js';
import { SessionEvent } from '../../session/SessionEvent.js';
import { decodeEvent, encodeEvent, type StoredEvent } from '../../repository/eventCodec.js';
import { decodeSession, readableSessions } from '../../repository/sessionCodec.js';
import { MASKED_FROM, redactionScopeOf, type RedactionScopeRepository } from '../../repository/RedactionScopeRepository.js';
import { RedisConnections } from './RedisConnections.js';
import { RedisScript } from './RedisScript.js';
import { APPEND_MANY_SCRIPT } from './scripts.js';
import { withScriptPairs } from './stagedPairs.js';
import type { SessionRepository } from '../../repository/SessionRepository.js';
import type { AtomicInsertRepository } from '../../repository/AtomicInsertRepository.js';
import type { BatchAppendRepository } from '../../repository/BatchAppendRepository.js';
import type { CompactionRecordRepository } from '../../repository/CompactionRecordRepository.js';
import type { EnumerableRepository, ListSessionIdsOptions, SessionIdPage } from '../../repository/EnumerableRepository.js';
import type { EventLogState, EventLogStateRepository } from '../../repository/EventLogStateRepository.js';
import type { MetadataUpdatingRepository, SessionMetadataUpdate } from '../../repository/MetadataUpdatingRepository.js';
import { pageLimit, requireEventsOf } from '../../repository/appendEventsSupport.js';
import { migrateRedis, redisPendingVersions, redisSchemaStatus } from './migrator.js';
import type { MigratableRepository } from '../../repository/MigratableRepository.js';
import type { MigrateOptions, SchemaStatus } from '../../repository/schemaMigrations.js';
import type { ForkingRepository, ForkOutcome, ForkRequest } from '../../repository/ForkingRepository.js';
import { userErasureInProgressError, type UserErasureRepository } from '../../repository/UserErasureRepository.js';
import {
  ACTIVITY_SCRIPT,
  APPEND_SCRIPT,
  COMPACT_SCRIPT,
  LIST_SUMMARIES_SCRIPT,
  REDACTION_SCOPE_SCRIPT,
  DELETE_SCRIPT,
  ERASE_SCRIPT,
  FORK_SCRIPT,
  PURGE_ARCHIVED_SCRIPT,
  PURGE_TOMBSTONES_SCRIPT,
  READ_SCRIPT,
  REWRITE_SCRIPT,
  SAVE_SCRIPT,
  SET_METADATA_SCRIPT,
} from './scripts.js';
import {
  ownerHash,
  sessionDeletedError,
  type ErasedSession,
  type EraseSessionOptions,
  type ErasureRepository,
  type Tombstone,
} from '../../repository/ErasureRepository.js';
import { requireRewriteBatch, type EventRewritingRepository } from '../../repository/EventRewritingRepository.js';
import {
  lastActivity,
  requirePurgeCriteria,
  type ArchivePurgeCriteria,
  type RetentionRepository,
  type SessionActivityPage,
} from '../../repository/RetentionRepository.js';

/**
 * An ioredis `Redis` client, typed by the members the repository relies on so that this package's types
 * never require `ioredis` to be installed.
 */
export interface RedisClient {
  on(event: 'error', listener: (error: Error) => void): unknown;
  quit(): Promise<unknown>;
}

export interface RedisSessionRepositoryOptions {
  /** Used to create (and later quit) a client when `client` is not given. */
  url?: string;
  /** A client owned by the caller: `close()` leaves it connected. */
  client?: RedisClient;
  /** Key prefix; default 'sc'. */
  prefix?: string;
  /**
   * Record (and apply) the key-layout version on first use; default true. With false, call `migrate()`.
   * Either way, keys written by a newer version of this library are refused.
   */
  initializeSchema?: boolean;
  /**
   * Give every key of a session the session's `expiresAt` as its Redis expiry, so Redis itself reclaims
   * expired sessions (a session saved already expired vanishes at once). Default false.
   */
  keyTtlFromSession?: boolean;
  /**
   * The longest one call waits for Redis, including a reconnect gap (ioredis queues commands while it
   * reconnects); past it the call fails with `RepositoryConnectionError`. Default 5000.
   */
  commandTimeoutMs?: number;
  /** Fail at once with `RepositoryConnectionError` while the client is not connected, instead of waiting. Default false. */
  failFastWhenDisconnected?: boolean;
  logger?: Logger;
}

const PREFIX = /^[a-z0-9_.:-]+$/i;
const MAX_RETRIES = 10;
/** Compare-and-set attempts of one metadata update before it gives up. */
const MAX_METADATA_ATTEMPTS = 20;
const DEFAULT_COMMAND_TIMEOUT_MS = 5000;
/**
 * The shortest time the token of an applied write stays recognisable; with a long commandTimeoutMs, ten of
 * those. A reply anyone still waits for comes within two command timeouts of the first send (one attempt
 * and one retry, each bounded by the timeout); a re-send arriving later finds nobody waiting for its reply.
 */
const MIN_APPLIED_RETENTION_MS = 60_000;

const scripts = {
  append: new RedisScript(APPEND_SCRIPT),
  compact: new RedisScript(COMPACT_SCRIPT),
  read: new RedisScript(READ_SCRIPT),
  save: new RedisScript(SAVE_SCRIPT),
  delete: new RedisScript(DELETE_SCRIPT),
  appendMany: new RedisScript(APPEND_MANY_SCRIPT),
  erase: new RedisScript(ERASE_SCRIPT),
  rewrite: new RedisScript(REWRITE_SCRIPT),
  purgeArchived: new RedisScript(PURGE_ARCHIVED_SCRIPT),
  purgeTombstones: new RedisScript(PURGE_TOMBSTONES_SCRIPT),
  activity: new RedisScript(ACTIVITY_SCRIPT),
  setMetadata: new RedisScript(SET_METADATA_SCRIPT),
  redactionScope: new RedisScript(REDACTION_SCOPE_SCRIPT),
  fork: new RedisScript(FORK_SCRIPT),
  listSummaries: new RedisScript(LIST_SUMMARIES_SCRIPT),
};

/** A staged write whose stage expired before its commit (only after minutes of stalling): nothing was written. */
function stageExpired(operation: string, sessionId: string): IllegalStateError {
  return new IllegalStateError(
    `${operation} of session ${sessionId}: its staged events expired before the commit; nothing was written, try again`,
  );
}

/** SAVE_SCRIPT's (and FORK_SCRIPT's) reply when a tombstone refuses the id. */
const TOMBSTONED = -2;
/** SAVE_SCRIPT's (and FORK_SCRIPT's) reply when the owner's erasure is in progress. */
const USER_ERASING = -5;

/** FORK_SCRIPT's events argument: each id and value as '<UTF-8 bytes>:<text>', one argument for any count. */
function packPairs(pairs: readonly (readonly [string, string])[]): string {
  const parts: string[] = [];
  for (const [id, value] of pairs) {
    parts.push(`${Buffer.byteLength(id, 'utf8')}:`, id, `${Buffer.byteLength(value, 'utf8')}:`, value);
  }
  return parts.join('');
}

/** The stored value: one flag character ('1' archived) then the codec's JSON, so Lua can archive in place. */
function encodeValue(event: SessionEvent, archived: boolean): string {
  return (archived ? '1' : '0') + encodeJson(event);
}

function encodeJson(event: SessionEvent): string {
  const stored: Partial<StoredEvent> = encodeEvent(event);
  delete stored.archived;
  return JSON.stringify(stored);
}

/** The id an unreadable value still shows, to name it in the error (a constant pattern, never user input). */
const STORED_ID = /"id":"((?:[^"\\]|\\.)*)"/;

function decodeValue(value: string, sessionId: string): SessionEvent {
  let stored: StoredEvent;
  try {
    stored = JSON.parse(value.slice(1)) as StoredEvent;
  } catch (error) {
    const eventId = STORED_ID.exec(value)?.[1] ?? '(unreadable id)';
    throw new CorruptedRecordError({ sessionId, eventId, field: 'value', problem: 'is not JSON' }, { cause: error });
  }
  return decodeEvent({ ...stored, archived: value.startsWith('1') });
}

/**
 * Redis over ioredis. Per session: a hash of metadata and version, a hash of events, a list of archived ids
 * and a list of active ids (the log is the archive followed by the window). Appends and compactions are
 * single Lua scripts, hence atomic; a compaction reads and rewrites only the active window. Plain Redis 6.2+
 * (standalone or Sentinel): the per-user and expiry indexes span sessions, so Redis Cluster is not supported.
 */
export class RedisSessionRepository
  implements
    SessionRepository,
    AtomicInsertRepository,
    MetadataUpdatingRepository,
    EventLogStateRepository,
    RedactionScopeRepository,
    CompactionRecordRepository,
    BatchAppendRepository,
    EnumerableRepository,
    ErasureRepository,
    EventRewritingRepository,
    RetentionRepository,
    MigratableRepository,
    ForkingRepository,
    UserErasureRepository
{
  private readonly client: Redis;
  private readonly connections: RedisConnections;
  private readonly prefix: string;
  private readonly ttlFlag: '0' | '1';
  private readonly appliedRetentionMs: number;
  private readonly logger: Logger;
  private readonly initializeSchema: boolean;
  private schemaReady: Promise<void> | undefined;
  /** The tail of each session's queue of metadata updates in this process (see updateSessionMetadata). */
  private readonly metadataQueues = new Map<string, Promise<unknown>>();

  constructor(options: RedisSessionRepositoryOptions = {}) {
    const opts = options ?? {};
    const prefix = opts.prefix ?? 'sc';
    if (typeof prefix !== 'string' || !PREFIX.test(prefix)) {
      throw new InvalidArgumentError(`prefix must match ${String(PREFIX)} (got '${String(prefix)}')`);
    }
    this.prefix = prefix;
    const commandTimeoutMs = opts.commandTimeoutMs ?? DEFAULT_COMMAND_TIMEOUT_MS;
    if (typeof commandTimeoutMs !== 'number' || !Number.isSafeInteger(commandTimeoutMs) || commandTimeoutMs <= 0) {
      throw new InvalidArgumentError(`commandTimeoutMs must be a positive integer (got ${String(commandTimeoutMs)})`);
    }
    if (opts.client !== undefined && opts.client !== null) {
      this.client = opts.client as Redis;
    } else {
      if (typeof opts.url !== 'string' || opts.url.trim() === '') {
        throw new InvalidArgumentError('RedisSessionRepository needs a url (or REDIS_URL) or a client');
      }
      const ioredis = requireOptional<typeof import('ioredis')>('ioredis', 'RedisSessionRepository');
      this.client = new ioredis.Redis(opts.url);
    }
    this.ttlFlag = opts.keyTtlFromSession === true ? '1' : '0';
    this.appliedRetentionMs = Math.max(MIN_APPLIED_RETENTION_MS, 10 * commandTimeoutMs);
    this.initializeSchema = opts.initializeSchema ?? true;
    this.logger = opts.logger ?? defaultLogger();
    this.connections = new RedisConnections(
      this.client,
      this.client !== opts.client,
      { commandTimeoutMs, failFastWhenDisconnected: opts.failFastWhenDisconnected === true },
      this.logger,
    );
  }

  /**
   * Applies pending layout versions, lowest first, and records each in `<prefix>:migrations`; returns them
   * (with `dryRun`, the ones it would apply). Throws SchemaVersionError when newer code wrote the keys.
   */
  async migrate(options: MigrateOptions = {}): Promise<number[]> {
    if (options?.dryRun === true) return this.connections.idempotent('migrate', () => this.pendingVersions());
    return this.connections.idempotent('migrate', () => this.migrateNow());
  }

  private migrateNow(): Promise<number[]> {
    return migrateRedis(this.client, this.prefix, this.logger);
  }

  private pendingVersions(): Promise<number[]> {
    return redisPendingVersions(this.client, this.prefix);
  }

  async schemaStatus(): Promise<SchemaStatus> {
    return this.connections.idempotent('schemaStatus', () => redisSchemaStatus(this.client, this.prefix));
  }

  async save(session: SessionLike): Promise<Session> {
    const s = Session.from(session);
    await this.connections.idempotent('save', async () => {
      await this.ready();
      await this.withOwner(s.id, async (owner) => this.refuseTombstoned(s.id, await this.runSave(s, owner)));
    });
    return s;
  }

  /**
   * The save script refuses when the stored owner differs from the expected one: expecting none is
   * insert-if-absent. The call's token is stored with the session, so a re-send of an insert that had been
   * applied (ioredis re-sends a command whose reply was lost; this method retries once) reports it as
   * inserted instead of finding the caller's own new session taken.
   */
  async saveIfAbsent(session: SessionLike): Promise<boolean> {
    const s = Session.from(session);
    const token = randomUUID();
    return this.connections.idempotent('saveIfAbsent', async () => {
      await this.ready();
      return (await this.refuseTombstoned(s.id, await this.runSave(s, '', '', token))) === 1;
    });
  }

  private async refuseTombstoned(id: string, reply: unknown): Promise<number> {
    if (Number(reply) === TOMBSTONED) throw sessionDeletedError(id, await this.findTombstone(id));
    if (Number(reply) === USER_ERASING) throw userErasureInProgressError(id);
    return Number(reply);
  }

  /**
   * One atomic save, valid only while the stored owner is still `expectedOwner` ('' = no session). A tombstone
   * refuses it, unless it belongs to `replaceTombstoneOf` (an owner hash), which the save then removes; a new
   * id is refused while its owner's erasure is in progress. `token` ('' = none) recognises a re-send.
   */
  private runSave(s: Session, expectedOwner: string, replaceTombstoneOf = '', token = '') {
    const [k1, k2, k3, k4, k5] = this.sessionKeys(s.id);
    return scripts.save.run(
      this.client,
      [
        k1,
        this.userKey(s.userId),
        this.expiryKey(),
        this.userKey(expectedOwner),
        k2,
        k3,
        k4,
        k5,
        this.tombstoneKey(s.id),
        this.tombstoneIndexKey(),
        this.compactionsKey(s.id),
        this.appliedKey(s.id),
        this.userErasureKey(s.userId),
      ],
      [
        expectedOwner,
        s.id,
        s.userId,
        s.createdAt.getTime(),
        s.expiresAt === null ? '' : s.expiresAt.getTime(),
        JSON.stringify(s.metadata),
        this.ttlFlag,
        replaceTombstoneOf,
        token,
      ],
    );
  }

  /**
   * One script (FORK_SCRIPT): the source's state, the id, the owner's erasure mark, the session and every
   * copied event — all or nothing. Its token makes a re-sent fork that had been applied report 'forked'.
   */
  async forkSession(request: ForkRequest): Promise<ForkOutcome> {
    const s = Session.from(request.fork);
    requireEventsOf(s.id, request.events);
    const sourceId = requireText(request.sourceId, 'sourceId');
    const token = requireText(request.token, 'token');
    const events = packPairs(request.events.map((e) => [e.id, encodeValue(e, e.archived)] as const));
    const { version, purgeGeneration } = request.expected;
    const reply = await this.connections.idempotent('forkSession', async () => {
      await this.ready();
      return scripts.fork.run(
        this.client,
        [
          this.sessionKeys(sourceId)[0],
          ...this.sessionKeys(s.id),
          this.userKey(s.userId),
          this.expiryKey(),
          this.tombstoneKey(s.id),
          this.userErasureKey(s.userId),
        ],
        [
          token,
          String(version),
          purgeGeneration === null ? '' : String(purgeGeneration),
          s.id,
          s.userId,
          s.createdAt.getTime(),
          s.expiresAt === null ? '' : s.expiresAt.getTime(),
          JSON.stringify(s.metadata),
          this.ttlFlag,
          events,
        ],
      );
    });
    const code = await this.refuseTombstoned(s.id, reply);
    return code === 1 ? 'forked' : code === 0 ? 'changed' : code === -1 ? 'source-missing' : 'exists';
  }

  /** The mark is a key that Redis itself expires at `until`. */
  async beginUserErasure(userId: string, until: Date): Promise<void> {
    const key = this.userErasureKey(requireText(userId, 'userId'));
    await this.connections.idempotent('beginUserErasure', async () => {
      await this.ready();
      // A mark already past its end blocks nothing (as on the other stores): no key at all.
      if (until.getTime() <= Date.now()) await this.client.del(key);
      else await this.client.set(key, String(Date.now()), 'PXAT', until.getTime());
    });
  }

  async endUserErasure(userId: string): Promise<void> {
    const key = this.userErasureKey(requireText(userId, 'userId'));
    await this.connections.idempotent('endUserErasure', async () => {
      await this.ready();
      await this.client.del(key);
    });
  }

  async findById(id: string): Promise<Session | null> {
    const hash = await this.connections.idempotent('findById', async () => {
      await this.ready();
      return this.client.hgetall(this.sessionKeys(id)[0]);
    });
    return this.toSession(id, hash);
  }

  /**
   * Optimistic: reads the session, applies `update`, and writes only if the stored metadata is still the one
   * read (SET_METADATA_SCRIPT, a compare-and-set); otherwise re-reads and re-applies, after a short random
   * pause, up to 20 attempts, then fails with IllegalStateError, writing nothing. Updates of one session queue
   * behind each other within this process, so only another process's write can make an attempt lose. Each
   * attempt's write carries a token recorded with it, so a re-send after a lost reply is recognised as
   * applied and `update` (typically an accumulation) never takes effect twice.
   */
  async updateSessionMetadata(id: string, update: SessionMetadataUpdate): Promise<Session | null> {
    requireText(id, 'sessionId');
    const previous = this.metadataQueues.get(id) ?? Promise.resolve();
    const run = previous.then(
      () => this.updateMetadataNow(id, update),
      () => this.updateMetadataNow(id, update),
    );
    this.metadataQueues.set(id, run);
    try {
      return await run;
    } finally {
      // Only the last update of the queue removes it, so the map never grows with idle sessions.
      if (this.metadataQueues.get(id) === run) this.metadataQueues.delete(id);
    }
  }

  private async updateMetadataNow(id: string, update: SessionMetadataUpdate): Promise<Session | null> {
    const key = this.sessionKeys(id)[0];
    const keys = [key, this.appliedKey(id)];
    for (let attempt = 1; attempt <= MAX_METADATA_ATTEMPTS; attempt++) {
      const hash = await this.connections.idempotent('updateSessionMetadata', async () => {
        await this.ready();
        return this.client.hgetall(key);
      });
      const current = this.toSession(id, hash);
      if (current === null) return null;
      // A throw from `update` (or an invalid result) happens before the write: nothing is written.
      const next = current.with({ metadata: update(current.metadata) });
      const args = [hash.metadata ?? '', JSON.stringify(next.metadata), randomUUID(), this.appliedRetentionMs, this.ttlFlag];
      // Retried once on a lost connection, like compactEvents: the token makes a re-send of a write that did
      // happen report 1, even when another writer wrote in between; only a write that did not happen loses.
      const reply = await this.connections.idempotent('updateSessionMetadata', () =>
        scripts.setMetadata.run(this.client, keys, args),
      );
      if (reply === 1) return next;
      if (reply === -1) return null;
      this.logger.debug('updateSessionMetadata: metadata changed concurrently; retrying', { sessionId: id, attempt });
      // Spreads out processes updating one session at the same instant, so one of them wins the next round.
      await new Promise((resolve) => setTimeout(resolve, Math.random() * Math.min(50, 2 ** attempt)));
    }
    throw new IllegalStateError(
      `Session metadata of ${id} changed concurrently on each of ${MAX_METADATA_ATTEMPTS} attempts; nothing was written`,
    );
  }

  async findByUserId(userId: string): Promise<Session[]> {
    return this.connections.idempotent('findByUserId', async () => {
      await this.ready();
      return this.readUserSessions(userId);
    });
  }

  private async readUserSessions(userId: string): Promise<Session[]> {
    const key = this.userKey(userId);
    const ids = await this.client.smembers(key);
    if (ids.length === 0) return [];
    const pipeline = this.client.pipeline();
    for (const id of ids) pipeline.hgetall(this.sessionKeys(id)[0]);
    const replies = (await pipeline.exec()) ?? [];
    const owned: { id: string; hash: Record<string, string> }[] = [];
    const stale: string[] = [];
    ids.forEach((id, i) => {
      const [error, reply] = replies[i] ?? [null, {}];
      if (error) throw error;
      const hash = reply as Record<string, string>;
      if (hash.userId === userId) owned.push({ id, hash });
      else stale.push(id);
    });
    const out = readableSessions(owned, ({ id, hash }) => this.toSession(id, hash)!, this.logger, userId);
    // Index entries of sessions whose keys Redis expired (keyTtlFromSession) are dropped lazily.
    if (stale.length > 0) await this.client.srem(key, ...stale);
    return out.sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime() || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  }

  async findExpiredSessionIds(before: Date): Promise<string[]> {
    if (!(before instanceof Date) || Number.isNaN(before.getTime()))
      throw new InvalidArgumentError('before must be a valid Date');
    return this.connections.idempotent('findExpiredSessionIds', async () => {
      await this.ready();
      return this.client.zrangebyscore(this.expiryKey(), '-inf', `(${before.getTime()}`);
    });
  }

  async delete(id: string): Promise<void> {
    const keys = this.sessionKeys(id);
    await this.connections.idempotent('delete', async () => {
      await this.ready();
      await this.withOwner(id, (owner) =>
        scripts.delete.run(
          this.client,
          [...keys, this.userKey(owner), this.expiryKey(), this.compactionsKey(id), this.appliedKey(id)],
          [owner, id],
        ),
      );
    });
  }

  async appendEvent(event: SessionEvent): Promise<void> {
    if (!(event instanceof SessionEvent)) throw new InvalidArgumentError('event must not be null');
    const args = [event.id, encodeValue(event, event.archived), this.ttlFlag];
    // Retried once: the script inserts only an absent event id, so a lost attempt that did run makes it a no-op.
    const result = await this.connections.idempotent('appendEvent', async () => {
      await this.ready();
      return scripts.append.run(this.client, this.sessionKeys(event.sessionId), args);
    });
    if (result === -1) throw new InvalidArgumentError(`Session not found: ${event.sessionId}`);
  }

  async getEventVersion(id: string): Promise<number> {
    const version = await this.connections.idempotent('getEventVersion', async () => {
      await this.ready();
      return this.client.hget(this.sessionKeys(id)[0], 'version');
    });
    return version === null ? 0 : Number(version);
  }

  async getEventLogState(id: string): Promise<EventLogState> {
    const key = this.sessionKeys(id)[0];
    return this.connections.idempotent('getEventLogState', async () => {
      await this.ready();
      // Two fields of one hash: one command, one consistent read. No field: never purged.
      const [version, generation] = await this.client.hmget(key, 'version', 'purgeGeneration');
      if (version === null || version === undefined) return { version: 0, purgeGeneration: 0 };
      return {
        version: Number(version),
        purgeGeneration: generation === null || generation === undefined ? 0 : Number(generation),
      };
    });
  }

  /**
   * The event by its id, then the server keeps only the synthetic values and those that name its original.
   * An id with characters JSON escapes (quotes, backslashes, control characters) cannot be matched as a
   * substring of the stored JSON: then the whole log is read.
   */
  async findRedactionScope(id: string, eventId: string): Promise<SessionEvent[]> {
    const keys = this.sessionKeys(id);
    const target = await this.connections.idempotent('findRedactionScope', async () => {
      await this.ready();
      return this.client.hget(keys[1], eventId);
    });
    if (target === null) return [];
    const from = decodeValue(target, id).metadata[MASKED_FROM];
    const root = typeof from === 'string' ? from : eventId;
    if (/["\\\p{Cc}]/u.test(root)) return redactionScopeOf(await this.read(id, 'all'), eventId);
    const values = (await this.connections.idempotent('findRedactionScope', () =>
      scripts.redactionScope.run(this.client, keys.slice(0, 4), [root]),
    )) as string[];
    return redactionScopeOf(
      values.map((value) => decodeValue(value, id)),
      eventId,
    );
  }

  async findEvents(id: string, filter: EventFilter = EventFilter.all()): Promise<SessionEvent[]> {
    const f = filter ?? EventFilter.all();
    const scope = f.excludeArchived ? 'active' : 'all';
    // A lastN beyond 2^53 cannot be sent as an exact integer: it means everything, read in full below.
    if (f.lastN !== undefined && Number.isSafeInteger(f.lastN) && onlyWindowCriteria(f)) {
      // Only the tail is read; an event appended already archived can still sit in the window, so when
      // the filter drops one the tail was too short and the whole sequence is read instead.
      const tail = await this.read(id, scope, f.lastN);
      const matches = tail.filter((e) => f.matches(e));
      if (matches.length === tail.length || tail.length < f.lastN) return matches;
    }
    const offset = f.pageSize === undefined ? NaN : (f.page ?? 0) * f.pageSize;
    // Sizes beyond 2^53 cannot be sent exactly: they are read in full below (and sliced as the filter says).
    if (f.pageSize !== undefined && Number.isSafeInteger(offset) && Number.isSafeInteger(f.pageSize) && onlyWindowCriteria(f)) {
      // A page is read by position: LRANGE over the archive then the window, never the whole log.
      const page = await this.read(id, scope, f.pageSize, offset);
      const matches = page.filter((e) => f.matches(e));
      if (matches.length === page.length) return matches;
    }
    const events = await this.read(id, scope);
    return applyEventWindow(
      events.filter((e) => f.matches(e)),
      f,
    );
  }

  async compactEvents(
    id: string,
    archived: readonly SessionEvent[],
    retained: readonly SessionEvent[],
    expectedVersion: number,
    record?: CompactionRecord,
  ): Promise<boolean> {
    requireText(id, 'sessionId');
    // ioredis re-sends a command whose connection dropped before the reply, and a lost connection is retried
    // once here: the token lets a repeated compaction that had in fact committed report so, instead of losing
    // to its own version bump (or to a compaction that committed after it).
    if (record !== undefined) requireRecordOf(id, record);
    // The record's summary is written beside it ('s:<id>'), so a light listing reads no id array.
    const fields =
      record === undefined
        ? ({ record: ['', '', ''], summary: ['', ''] } as const)
        : ({
            record: [`c:${record.id}`, encodeCompactionRecord(record), ''],
            summary: [`s:${record.id}`, encodeCompactionSummary(record)],
          } as const);
    return this.runCompact('compactEvents', id, archived, retained, expectedVersion, fields.record, fields.summary);
  }

  async listCompactions(id: string): Promise<CompactionRecord[]> {
    const hash = await this.connections.idempotent('listCompactions', async () => {
      await this.ready();
      return this.client.hgetall(this.compactionsKey(requireText(id, 'sessionId')));
    });
    const records: CompactionRecord[] = [];
    for (const [field, body] of Object.entries(hash)) {
      if (!field.startsWith('c:')) continue;
      const reverted = hash[`r:${field.slice(2)}`];
      records.push(decodeCompactionRecord(body, reverted === undefined ? null : Number(reverted)));
    }
    return newestFirst(records);
  }

  async listCompactionSummaries(id: string): Promise<CompactionRecordSummary[]> {
    const key = this.compactionsKey(requireText(id, 'sessionId'));
    // Writes only a missing summary, always the same one: a re-send is harmless.
    const reply = await this.connections.idempotent('listCompactionSummaries', async () => {
      await this.ready();
      return (await scripts.listSummaries.run(this.client, [key], [])) as string[];
    });
    const summaries: CompactionRecordSummary[] = [];
    for (let i = 0; i < reply.length; i += 2) {
      const reverted = reply[i + 1]!;
      summaries.push(decodeCompactionSummary(reply[i]!, reverted === '' ? null : Number(reverted)));
    }
    return newestFirst(summaries);
  }

  async revertCompactionEvents(
    id: string,
    compactionId: string,
    window: readonly SessionEvent[],
    expectedVersion: number,
    revertedAt: Date,
  ): Promise<boolean> {
    requireText(id, 'sessionId');
    const mark = [`r:${compactionId}`, String(revertedAt.getTime()), `c:${compactionId}`] as const;
    return this.runCompact('revertCompactionEvents', id, [], window, expectedVersion, mark);
  }

  /** COMPACT_SCRIPT, optionally writing one field of the record hash in the same atomic step. */
  private async runCompact(
    operation: string,
    id: string,
    archived: readonly SessionEvent[],
    retained: readonly SessionEvent[],
    expectedVersion: number,
    recordField: readonly [field: string, value: string, mustExist: string],
    summaryField: readonly [field: string, value: string] = ['', ''],
  ): Promise<boolean> {
    const head: (string | number)[] = [
      String(expectedVersion),
      this.ttlFlag,
      archived.length,
      randomUUID(),
      ...recordField,
      this.appliedRetentionMs,
      ...summaryField,
    ];
    const pairs: string[] = [];
    for (const e of archived) pairs.push(e.id, encodeValue(e, true));
    // Retained events form the active window: an archived flag on one would hide it from active().
    for (const e of retained) pairs.push(e.id, encodeValue(e, false));
    await this.connections.idempotent(operation, () => this.ready());
    const result = await withScriptPairs(this.client, this.connections, this.sessionKeyBase(id), operation, pairs, (p) =>
      this.connections.idempotent(operation, () =>
        scripts.compact.run(
          this.client,
          [...this.sessionKeys(id), this.compactionsKey(id), this.appliedKey(id), p.stageKey],
          [...head, p.staged, ...p.inline],
        ),
      ),
    );
    if (result === -1) throw new InvalidArgumentError(`Session not found: ${id}`);
    if (result === -4) throw new InvalidArgumentError(`Compaction not found: ${recordField[2].slice(2)}`);
    if (result === -5) throw stageExpired(operation, id);
    if (result === 0) this.logger.debug(`${operation}: version mismatch`, { sessionId: id, expectedVersion });
    return result === 1;
  }

  /** One script call for the batch: atomic, in order. */
  async appendEvents(sessionId: string, events: readonly SessionEvent[]): Promise<number> {
    requireEventsOf(sessionId, events);
    const pairs: string[] = [];
    for (const e of events) pairs.push(e.id, encodeValue(e, e.archived));
    await this.connections.idempotent('appendEvents', () => this.ready());
    // Retried once: the script inserts only absent event ids.
    const result = Number(
      await withScriptPairs(this.client, this.connections, this.sessionKeyBase(sessionId), 'appendEvents', pairs, (p) =>
        this.connections.idempotent('appendEvents', () =>
          scripts.appendMany.run(
            this.client,
            [...this.sessionKeys(sessionId), p.stageKey],
            [this.ttlFlag, p.staged, ...p.inline],
          ),
        ),
      ),
    );
    if (result === -1) throw new InvalidArgumentError(`Session not found: ${sessionId}`);
    if (result === -5) throw stageExpired('appendEvents', sessionId);
    return result;
  }

  /**
   * SCAN over the session hashes: the cursor is Redis's, pages come in no particular order and may repeat an
   * id (SCAN's guarantee is that every key present for the whole scan is returned at least once).
   */
  async listSessionIds(options?: ListSessionIdsOptions): Promise<SessionIdPage> {
    const limit = pageLimit(options);
    const head = `${this.prefix}:{`;
    const tail = '}:session';
    const [next, keys] = await this.connections.idempotent('listSessionIds', async () => {
      await this.ready();
      return this.client.scan(options?.cursor ?? '0', 'MATCH', `${head}*${tail}`, 'COUNT', limit);
    });
    const ids = keys.map((k) => k.slice(head.length, k.length - tail.length));
    return { ids, cursor: next === '0' ? null : next };
  }

  // Erasure, recreation, rewrites and purges are not retried: a lost reply leaves unknown whether the script ran,
  // and a blind second run would report nothing erased, refuse its own recreation or lose its CAS.
  async eraseSession(id: string, options: EraseSessionOptions): Promise<ErasedSession | null> {
    return this.connections.once('eraseSession', () => this.eraseSessionNow(id, options));
  }

  async findTombstone(id: string): Promise<Tombstone | null> {
    return this.connections.idempotent('findTombstone', () => this.findTombstoneNow(id));
  }

  async recreateSession(session: SessionLike): Promise<boolean> {
    return this.connections.once('recreateSession', () => this.recreateSessionNow(session));
  }

  async purgeTombstones(before: Date, limit: number, sessionId?: string): Promise<number> {
    return this.connections.idempotent('purgeTombstones', () => this.purgeTombstonesNow(before, limit, sessionId));
  }

  async rewriteEvents(id: string, events: readonly SessionEvent[], expectedVersion: number): Promise<boolean> {
    return this.connections.once('rewriteEvents', () => this.rewriteEventsNow(id, events, expectedVersion));
  }

  async purgeArchivedEvents(id: string, criteria: ArchivePurgeCriteria): Promise<string[]> {
    return this.connections.once('purgeArchivedEvents', () => this.purgeArchivedEventsNow(id, criteria));
  }

  async listSessionActivity(cursor: string | null, limit: number): Promise<SessionActivityPage> {
    return this.connections.idempotent('listSessionActivity', () => this.listSessionActivityNow(cursor, limit));
  }

  private async eraseSessionNow(id: string, options: EraseSessionOptions): Promise<ErasedSession | null> {
    requireText(id, 'sessionId');
    await this.ready();
    const key = this.sessionKeys(id)[0];
    const t = options.tombstone;
    for (let attempt = 0; attempt < MAX_RETRIES; attempt++) {
      const owner = (await this.client.hget(key, 'userId')) ?? '';
      const reply = await scripts.erase.run(
        this.client,
        [
          ...this.sessionKeys(id),
          this.userKey(owner),
          this.expiryKey(),
          this.tombstoneKey(id),
          this.tombstoneIndexKey(),
          this.compactionsKey(id),
          this.appliedKey(id),
        ],
        [
          owner,
          id,
          t === null ? '0' : '1',
          owner === '' ? '' : ownerHash(owner),
          t === null ? '' : t.deletedAt.getTime(),
          t === null || t.expiresAt === null ? '' : t.expiresAt.getTime(),
          options.idleBefore === undefined ? '' : options.idleBefore.getTime(),
        ],
      );
      if (Array.isArray(reply)) {
        const [activeEvents, archivedEvents, summaries, maskedCopies] = reply.map(Number) as [number, number, number, number];
        return { sessionId: id, userId: owner, activeEvents, archivedEvents, summaries, maskedCopies };
      }
      if (reply === -1 || reply === -3) return null;
    }
    throw new InvalidArgumentError(`session ${id} changed owner concurrently ${MAX_RETRIES} times; giving up`);
  }

  private async findTombstoneNow(id: string): Promise<Tombstone | null> {
    await this.ready();
    const hash = await this.client.hgetall(this.tombstoneKey(id));
    if (hash.ownerHash === undefined) return null;
    return {
      sessionId: id,
      ownerHash: hash.ownerHash,
      deletedAt: new Date(Number(hash.deletedAt)),
      expiresAt: hash.expiresAt === undefined || hash.expiresAt === '' ? null : new Date(Number(hash.expiresAt)),
    };
  }

  private async recreateSessionNow(session: SessionLike): Promise<boolean> {
    await this.ready();
    const s = Session.from(session);
    return (await this.refuseTombstoned(s.id, await this.runSave(s, '', ownerHash(s.userId)))) === 1;
  }

  private async purgeTombstonesNow(before: Date, limit: number, sessionId?: string): Promise<number> {
    await this.ready();
    const ids =
      sessionId !== undefined
        ? [sessionId]
        : await this.client.zrangebyscore(this.tombstoneIndexKey(), '-inf', `(${before.getTime()}`, 'LIMIT', 0, limit);
    if (ids.length === 0) return 0;
    const keys = [this.tombstoneIndexKey(), ...ids.map((id) => this.tombstoneKey(id))];
    return Number(await scripts.purgeTombstones.run(this.client, keys, [before.getTime(), ...ids]));
  }

  private async rewriteEventsNow(id: string, events: readonly SessionEvent[], expectedVersion: number): Promise<boolean> {
    requireRewriteBatch(id, events);
    await this.ready();
    const args: (string | number)[] = [String(expectedVersion), this.ttlFlag];
    for (const e of events) args.push(e.id, encodeJson(e));
    const reply = await scripts.rewrite.run(this.client, this.sessionKeys(id), args);
    if (reply === -1) throw new InvalidArgumentError(`Session not found: ${id}`);
    if (Array.isArray(reply)) throw new InvalidArgumentError(`Event not found: ${String(reply[1])}`);
    return reply === 1;
  }

  private async purgeArchivedEventsNow(id: string, criteria: ArchivePurgeCriteria): Promise<string[]> {
    const c = requirePurgeCriteria(criteria);
    await this.ready();
    if (c.before === undefined && c.keepLast === undefined) return [];
    return (await scripts.purgeArchived.run(
      this.client,
      [...this.sessionKeys(id), this.compactionsKey(id)],
      [c.before === undefined ? '' : c.before.getTime(), c.keepLast === undefined ? '' : c.keepLast, c.limit],
    )) as string[];
  }

  /** Walks the session keys with SCAN (never KEYS): a page holds about `limit` sessions, the cursor is SCAN's. */
  private async listSessionActivityNow(cursor: string | null, limit: number): Promise<SessionActivityPage> {
    await this.ready();
    const head = `${this.prefix}:{`;
    const tail = '}:session';
    const [next, keys] = await this.client.scan(cursor ?? '0', 'MATCH', `${head}*${tail}`, 'COUNT', limit);
    const ids = keys.filter((k) => k.startsWith(head) && k.endsWith(tail)).map((k) => k.slice(head.length, -tail.length));
    const sessions: SessionActivityPage['sessions'] = [];
    if (ids.length > 0) {
      const reply = (await scripts.activity.run(
        this.client,
        ids.flatMap((id) => this.sessionKeys(id).slice(0, 4)),
        [],
      )) as Array<[string | null, string | null, string | null]>;
      ids.forEach((id, i) => {
        const [userId, createdAt, newest] = reply[i] ?? [null, null, null];
        // A key of another prefix that happens to match the pattern has no session under this id.
        if (userId === null || createdAt === null || this.sessionKeys(id)[0] !== `${head}${id}${tail}`) return;
        sessions.push({
          id,
          userId,
          lastActiveAt: lastActivity(new Date(Number(createdAt)), newest === null ? null : Number(newest)),
        });
      });
    }
    return { sessions, cursor: next === '0' ? null : next };
  }

  async close(): Promise<void> {
    await this.connections.close();
  }

  private ready(): Promise<void> {
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

  private async read(id: string, scope: 'all' | 'active', count?: number, offset?: number): Promise<SessionEvent[]> {
    const args = count === undefined ? [scope] : offset === undefined ? [scope, count] : [scope, count, offset];
    const values = (await this.connections.idempotent('findEvents', async () => {
      await this.ready();
      return scripts.read.run(this.client, this.sessionKeys(id), args);
    })) as string[];
    return values.map((value) => decodeValue(value, id));
  }

  /**
   * Runs a script that moves a session between user sets: it needs the current owner's key up front, and
   * fails (0) if the owner changed in between, which is retried with the new owner.
   */
  private async withOwner(id: string, run: (owner: string) => Promise<unknown>): Promise<void> {
    const key = this.sessionKeys(id)[0];
    for (let attempt = 0; attempt < MAX_RETRIES; attempt++) {
      const owner = (await this.client.hget(key, 'userId')) ?? '';
      if ((await run(owner)) === 1) return;
    }
    throw new InvalidArgumentError(`session ${id} changed owner concurrently ${MAX_RETRIES} times; giving up`);
  }

  private toSession(id: string, hash: Record<string, string>): Session | null {
    if (hash.userId === undefined) return null;
    return decodeSession({
      id,
      userId: hash.userId,
      createdAt: new Date(Number(hash.createdAt)),
      expiresAt: hash.expiresAt === undefined || hash.expiresAt === '' ? null : new Date(Number(hash.expiresAt)),
      metadata: hash.metadata ?? '{}',
    });
  }

  /** Every key of a session starts with this: one hash tag, one slot. */
  private sessionKeyBase(id: string): string {
    return `${this.prefix}:{${id}}`;
  }

  /** Session hash, events hash, active list, archived list, pending-archive set: one hash tag, one slot. */
  private sessionKeys(id: string): [string, string, string, string, string] {
    const base = this.sessionKeyBase(id);
    return [`${base}:session`, `${base}:events`, `${base}:active`, `${base}:archived`, `${base}:pending`];
  }

  /** Compaction records: same hash tag, so a compaction writes its record in the same script. */
  private compactionsKey(id: string): string {
    return `${this.prefix}:{${id}}:compactions`;
  }

  /** Tokens of the recently applied compactions and metadata writes (APPLIED in scripts.ts): same hash tag. */
  private appliedKey(id: string): string {
    return `${this.prefix}:{${id}}:applied`;
  }

  /** Shares the session's hash tag, so a save can check it in the same script. */
  private tombstoneKey(id: string): string {
    return `${this.prefix}:{${id}}:tombstone`;
  }

  private tombstoneIndexKey(): string {
    return `${this.prefix}:tombstones`;
  }

  private userKey(userId: string): string {
    return `${this.prefix}:user:${userId}`;
  }

  /** The mark of a user erasure in progress: keyed by the owner hash, never by the user id. */
  private userErasureKey(userId: string): string {
    return `${this.prefix}:erasing:${ownerHash(userId)}`;
  }

  private expiryKey(): string {
    return `${this.prefix}:expiry`;
  }
}

/** True when, besides lastN, the filter can only exclude archived events. */
function onlyWindowCriteria(f: EventFilter): boolean {
  return (
    f.from === undefined &&
    f.to === undefined &&
    f.messageTypes === undefined &&
    !f.excludeSynthetic &&
    f.keyword === undefined &&
    f.keywords === undefined &&
    f.pattern === undefined &&
    f.branch === undefined
  );
}
