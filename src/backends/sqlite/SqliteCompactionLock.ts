import { randomUUID } from 'node:crypto';
import type Database from 'better-sqlite3';
import { InvalidArgumentError, requireText } from '../../errors.js';
import { requireOptional } from '../../optionalDependency.js';
import { DEFAULT_SQLITE_PREFIX, sqliteTables } from './schema.js';
import { requireStorableText } from '../../validation/inputs.js';
import type { CompactionLease, CompactionLock, CompactionLockAcquireOptions } from '../../lock/CompactionLock.js';
import { requireAcquireOptions, requireLeaseMs } from '../../lock/leaseOptions.js';
import { waitForLease } from '../../lock/waitForLease.js';
import { useWriteAheadLog } from './writeAheadLog.js';

export interface SqliteCompactionLockOptions {
  /** The database file the processes share (normally the repository's). */
  path: string;
  /** Table-name prefix; the lock's table is `<prefix>_compaction_locks`. Default 'session_compaction'. */
  prefix?: string;
  /** How long a lock operation waits for another connection's write lock; default 5000. */
  busyTimeoutMs?: number;
}

/** The row that carries the fencing counter: '' is never a session id (ids are non-empty). */
const COUNTER = '';

/**
 * SQLite lease, through the database file itself: a row per held lease (`token`, `expires_at`) in
 * `<prefix>_compaction_locks`, taken under BEGIN IMMEDIATE so that two processes never both see the session
 * free. An expired row is taken over, so a holder killed mid-summary blocks for at most one lease. Expiry
 * compares wall clocks: the processes share the file, hence the host and its clock. Its own connection,
 * opened on `path`; the table is created if missing and is not part of the repository's schema versions.
 */
export class SqliteCompactionLock implements CompactionLock {
  private readonly db: Database.Database;
  private readonly acquireTx: (sessionId: string, token: string, now: number, leaseMs: number) => number | null;
  private readonly renewStmt: Database.Statement<[number, string, string, number]>;
  private readonly releaseStmt: Database.Statement<[string, string]>;

  constructor(options: SqliteCompactionLockOptions) {
    if (options === null || options === undefined) throw new InvalidArgumentError('options must not be null');
    const path = requireText(options.path, 'path');
    const prefix = options.prefix ?? DEFAULT_SQLITE_PREFIX;
    sqliteTables(prefix); // validates the prefix: it becomes part of an identifier
    const table = `${prefix.toLowerCase()}_compaction_locks`;
    const busyTimeoutMs = options.busyTimeoutMs ?? 5000;
    if (!Number.isInteger(busyTimeoutMs) || busyTimeoutMs < 0)
      throw new InvalidArgumentError('busyTimeoutMs must be an integer >= 0');
    const Sqlite = requireOptional<typeof Database>('better-sqlite3', 'SqliteCompactionLock');
    this.db = new Sqlite(path, { timeout: busyTimeoutMs });
    try {
      useWriteAheadLog(this.db, busyTimeoutMs);
      this.db.exec(
        `CREATE TABLE IF NOT EXISTS ${table} (
           session_id TEXT PRIMARY KEY,
           token TEXT,
           fence INTEGER NOT NULL,
           expires_at INTEGER NOT NULL
         ) WITHOUT ROWID`,
      );
      const holder = this.db.prepare<[string], { expires_at: number }>(`SELECT expires_at FROM ${table} WHERE session_id = ?`);
      const nextFence = this.db.prepare<[string], { fence: number }>(
        `INSERT INTO ${table} (session_id, token, fence, expires_at) VALUES (?, NULL, 1, 0)
         ON CONFLICT (session_id) DO UPDATE SET fence = fence + 1 RETURNING fence`,
      );
      const take = this.db.prepare<[string, string, number, number]>(
        `INSERT OR REPLACE INTO ${table} (session_id, token, fence, expires_at) VALUES (?, ?, ?, ?)`,
      );
      const tx = this.db.transaction((sessionId: string, token: string, now: number, leaseMs: number): number | null => {
        const row = holder.get(sessionId);
        if (row !== undefined && row.expires_at > now) return null;
        const fence = nextFence.get(COUNTER)!.fence;
        take.run(sessionId, token, fence, now + leaseMs);
        return fence;
      });
      // IMMEDIATE: the write lock is taken before the read, so the check and the take are one atomic step.
      this.acquireTx = (...args) => tx.immediate(...args);
      this.renewStmt = this.db.prepare(
        `UPDATE ${table} SET expires_at = ? WHERE session_id = ? AND token = ? AND expires_at > ?`,
      );
      this.releaseStmt = this.db.prepare(`DELETE FROM ${table} WHERE session_id = ? AND token = ?`);
    } catch (error) {
      this.db.close();
      throw error;
    }
  }

  async acquire(sessionId: string, options: CompactionLockAcquireOptions): Promise<CompactionLease | null> {
    requireStorableText(sessionId, 'sessionId');
    const { leaseMs, waitMs } = requireAcquireOptions(options);
    return waitForLease(async () => {
      const token = randomUUID();
      const now = Date.now();
      const fencingToken = this.acquireTx(sessionId, token, now, leaseMs);
      return fencingToken === null ? null : { sessionId, token, fencingToken, expiresAt: new Date(now + leaseMs) };
    }, waitMs);
  }

  async renew(lease: CompactionLease, leaseMs: number): Promise<CompactionLease | null> {
    requireLeaseMs(leaseMs);
    const now = Date.now();
    const { changes } = this.renewStmt.run(now + leaseMs, lease.sessionId, lease.token, now);
    return changes === 1 ? { ...lease, expiresAt: new Date(now + leaseMs) } : null;
  }

  async release(lease: CompactionLease): Promise<void> {
    this.releaseStmt.run(lease.sessionId, lease.token);
  }

  async close(): Promise<void> {
    if (this.db.open) this.db.close();
  }
}
