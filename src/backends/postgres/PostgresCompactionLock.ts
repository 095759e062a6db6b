import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import { InvalidArgumentError } from '../../errors.js';
import { defaultLogger, type Logger } from '../../logging.js';
import { requireOptional } from '../../optionalDependency.js';
import type { PostgresPool } from './PostgresSessionRepository.js';
import { toPostgresError } from './connectionErrors.js';
import { requireStorableText } from '../../validation/inputs.js';
import type { CompactionLease, CompactionLock, CompactionLockAcquireOptions } from '../../lock/CompactionLock.js';
import { requireAcquireOptions, requireLeaseMs } from '../../lock/leaseOptions.js';
import { waitForLease } from '../../lock/waitForLease.js';

export interface PostgresCompactionLockOptions {
  /** Used to create (and later end) a pool when `pool` is not given. */
  connectionString?: string;
  /**
   * A pool owned by the caller. Every held lease keeps one of its connections checked out for the length
   * of the summary, so size it for the compactions that may run at once (or give the lock its own pool).
   */
  pool?: PostgresPool;
  /** Namespaces the advisory-lock keys; default 'session_compaction', the repository's table prefix. */
  prefix?: string;
  logger?: Logger;
}

interface Held {
  client: pg.PoolClient;
  /** Set when the connection reported an error: the lease (its session lock) is gone with it. */
  broken?: Error;
  onError: (error: Error) => void;
}

const TRY_LOCK = 'SELECT pg_try_advisory_lock(hashtext($1), hashtext($2)) AS locked';
const UNLOCK = 'SELECT pg_advisory_unlock(hashtext($1), hashtext($2)) AS unlocked';
const SET_IDLE_TIMEOUT = "SELECT set_config('idle_session_timeout', $1, false)";

/**
 * PostgreSQL lease: a session-level advisory lock (namespace hashtext(prefix), key hashtext(sessionId)) held
 * on a connection dedicated to the lease. Such a lock lives exactly as long as its connection, so the lease
 * is that connection: a holder killed mid-summary drops it and the server frees the lock at once. A holder
 * that is alive but stops renewing (frozen, partitioned) is cut off by the server itself: the connection gets
 * `idle_session_timeout = leaseMs` (PostgreSQL 14+), which each renewal resets. The fencing token is
 * `txid_current()` taken once the lock is held, which a later holder always draws larger. Two session ids
 * whose 32-bit hashes collide share a lock: at worst one waits or skips needlessly.
 */
export class PostgresCompactionLock implements CompactionLock {
  private readonly pool: pg.Pool;
  private readonly ownsPool: boolean;
  private readonly namespace: string;
  private readonly logger: Logger;
  private readonly held = new Map<string, Held>();
  private closing: Promise<void> | undefined;
  private readonly onPoolError = (error: Error) =>
    this.logger.warn('an idle PostgreSQL connection of the compaction lock failed', { error: error.message });

  constructor(options: PostgresCompactionLockOptions = {}) {
    const opts = options ?? {};
    if (opts.pool !== undefined && opts.pool !== null) this.pool = opts.pool as pg.Pool;
    else {
      if (typeof opts.connectionString !== 'string' || opts.connectionString.trim() === '') {
        throw new InvalidArgumentError('PostgresCompactionLock needs a connectionString (or PG_URL) or a pool');
      }
      const { Pool } = requireOptional<typeof pg>('pg', 'PostgresCompactionLock');
      this.pool = new Pool({ connectionString: opts.connectionString });
    }
    this.ownsPool = this.pool !== opts.pool;
    this.namespace = `${requireStorableText(opts.prefix ?? 'session_compaction', 'prefix')}_compaction_lock`;
    this.logger = opts.logger ?? defaultLogger();
    this.pool.on('error', this.onPoolError);
  }

  async acquire(sessionId: string, options: CompactionLockAcquireOptions): Promise<CompactionLease | null> {
    requireStorableText(sessionId, 'sessionId');
    const { leaseMs, waitMs } = requireAcquireOptions(options);
    return waitForLease(() => this.tryAcquire(sessionId, leaseMs), waitMs);
  }

  async renew(lease: CompactionLease, leaseMs: number): Promise<CompactionLease | null> {
    requireLeaseMs(leaseMs);
    const held = this.held.get(lease.token);
    if (held === undefined || held.broken !== undefined) return null;
    const start = Date.now();
    try {
      await held.client.query(SET_IDLE_TIMEOUT, [String(leaseMs)]);
    } catch (error) {
      // The connection, and with it the lock, may be gone: nothing proves the lease is still ours.
      held.broken = error as Error;
      return null;
    }
    return { ...lease, expiresAt: new Date(start + leaseMs) };
  }

  async release(lease: CompactionLease): Promise<void> {
    const held = this.held.get(lease.token);
    if (held === undefined) return;
    this.held.delete(lease.token);
    let failure = held.broken;
    if (failure === undefined) {
      try {
        await held.client.query(UNLOCK, [this.namespace, lease.sessionId]);
        await held.client.query(SET_IDLE_TIMEOUT, ['0']);
      } catch (error) {
        failure = error as Error;
      }
    }
    held.client.off('error', held.onError);
    // A connection that failed is destroyed, which frees any lock it might still hold.
    held.client.release(failure);
  }

  /**
   * Ends the pool when the lock created it; leases still held are released with their connections.
   * Idempotent: every later (or concurrent) call shares the first one's outcome.
   */
  close(): Promise<void> {
    this.closing ??= this.closeOnce();
    return this.closing;
  }

  private async closeOnce(): Promise<void> {
    for (const held of this.held.values()) {
      held.client.off('error', held.onError);
      held.client.release(new Error('compaction lock closed'));
    }
    this.held.clear();
    this.pool.off('error', this.onPoolError);
    if (this.ownsPool) await this.pool.end();
  }

  private async tryAcquire(sessionId: string, leaseMs: number): Promise<CompactionLease | null> {
    let client: pg.PoolClient;
    try {
      client = await this.pool.connect();
    } catch (error) {
      throw toPostgresError(error, 'acquireCompactionLease');
    }
    const held: Held = { client, onError: (error) => (held.broken ??= error) };
    client.on('error', held.onError);
    const start = Date.now();
    try {
      // The timeout goes first: the lock must never be held by a connection the server would not cut off.
      await client.query(SET_IDLE_TIMEOUT, [String(leaseMs)]);
      const { rows } = await client.query<{ locked: boolean }>(TRY_LOCK, [this.namespace, sessionId]);
      if (rows[0]?.locked !== true) {
        await client.query(SET_IDLE_TIMEOUT, ['0']);
        client.off('error', held.onError);
        client.release(held.broken);
        return null;
      }
      const fence = await client.query<{ fence: string }>('SELECT txid_current()::text AS fence');
      const token = randomUUID();
      this.held.set(token, held);
      return { sessionId, token, fencingToken: Number(fence.rows[0]!.fence), expiresAt: new Date(start + leaseMs) };
    } catch (error) {
      client.off('error', held.onError);
      client.release(error as Error);
      throw toPostgresError(error, 'acquireCompactionLease');
    }
  }
}
