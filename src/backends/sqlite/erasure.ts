import type Database from 'better-sqlite3';
import {
  sessionDeletedError,
  type ErasedSession,
  type EraseSessionOptions,
  type Tombstone,
} from '../../repository/ErasureRepository.js';
import { lastActivity } from '../../repository/RetentionRepository.js';
import { newestEventTimestamp } from './retention.js';
import type { SqliteTables } from './schema.js';

interface TombstoneRow {
  id: string;
  ownerHash: string;
  deletedAt: number;
  expiresAt: number | null;
}

const toTombstone = (r: TombstoneRow): Tombstone => ({
  sessionId: r.id,
  ownerHash: r.ownerHash,
  deletedAt: new Date(r.deletedAt),
  expiresAt: r.expiresAt === null ? null : new Date(r.expiresAt),
});

/**
 * The erasure statements of SqliteSessionRepository: deleting a session with its tombstone, and reading,
 * overriding and expiring tombstones. Each transaction is IMMEDIATE, serialised with appends and compactions
 * by SQLite's write lock, across processes too.
 */
export class SqliteErasure {
  private readonly st;
  private readonly eraseTx;
  private readonly recreateTx;

  constructor(db: Database.Database, t: SqliteTables) {
    const p = (sql: string) => db.prepare(sql);
    // coalesce: json_type gives NULL for a missing key, and NULL would drop the row from every sum.
    const masked = `(coalesce(json_type(metadata, '$.maskedFrom'), '') = 'text')`;
    this.st = {
      session: p(
        `SELECT s.user_id AS userId, s.created_at AS createdAt, ${newestEventTimestamp(t)} AS newest FROM ${t.sessions} s WHERE s.id = ?`,
      ),
      counts: p(
        `SELECT
           coalesce(sum(synthetic = 0 AND NOT ${masked} AND archived = 0), 0) AS activeEvents,
           coalesce(sum(synthetic = 0 AND NOT ${masked} AND archived = 1), 0) AS archivedEvents,
           coalesce(sum(synthetic = 1), 0) AS summaries,
           coalesce(sum(synthetic = 0 AND ${masked}), 0) AS maskedCopies
         FROM ${t.events} WHERE session_id = ?`,
      ),
      deleteSession: p(`DELETE FROM ${t.sessions} WHERE id = ?`),
      writeTombstone: p(
        `INSERT INTO ${t.tombstones} (id, owner_hash, deleted_at, expires_at) VALUES (?, ?, ?, ?)
         ON CONFLICT (id) DO UPDATE SET owner_hash = excluded.owner_hash, deleted_at = excluded.deleted_at,
           expires_at = excluded.expires_at`,
      ),
      findTombstone: p(
        `SELECT id, owner_hash AS ownerHash, deleted_at AS deletedAt, expires_at AS expiresAt FROM ${t.tombstones} WHERE id = ?`,
      ),
      deleteTombstone: p(`DELETE FROM ${t.tombstones} WHERE id = ?`),
      purgeTombstones: p(
        `DELETE FROM ${t.tombstones} WHERE id IN (
           SELECT id FROM ${t.tombstones} WHERE expires_at IS NOT NULL AND expires_at < ? LIMIT ?)`,
      ),
      purgeTombstone: p(`DELETE FROM ${t.tombstones} WHERE id = ? AND expires_at IS NOT NULL AND expires_at < ?`),
      version: p(`SELECT event_version AS version FROM ${t.sessions} WHERE id = ?`),
    };
    const st = this.st;

    this.eraseTx = db.transaction(
      (id: string, options: EraseSessionOptions, hashOwner: (userId: string) => string): ErasedSession | null => {
        const row = st.session.get(id) as { userId: string; createdAt: number; newest: number | null } | undefined;
        if (row === undefined) return null;
        const idle = options.idleBefore;
        if (idle !== undefined && lastActivity(new Date(row.createdAt), row.newest) >= idle) return null;
        const counts = st.counts.get(id) as Omit<ErasedSession, 'sessionId' | 'userId'>;
        // Events go with the session (ON DELETE CASCADE), full-text index rows with their events.
        st.deleteSession.run(id);
        if (options.tombstone !== null) {
          const { deletedAt, expiresAt } = options.tombstone;
          st.writeTombstone.run(id, hashOwner(row.userId), deletedAt.getTime(), expiresAt === null ? null : expiresAt.getTime());
        }
        return { sessionId: id, userId: row.userId, ...counts };
      },
    );

    this.recreateTx = db.transaction((id: string, hash: string, insert: () => boolean): boolean => {
      const tombstone = st.findTombstone.get(id) as TombstoneRow | undefined;
      if (tombstone !== undefined && tombstone.ownerHash !== hash) throw sessionDeletedError(id, toTombstone(tombstone));
      if (st.version.get(id) !== undefined) return false;
      st.deleteTombstone.run(id);
      return insert();
    });
  }

  erase(id: string, options: EraseSessionOptions, hashOwner: (userId: string) => string): ErasedSession | null {
    return this.eraseTx.immediate(id, options, hashOwner);
  }

  findTombstone(id: string): Tombstone | null {
    const row = this.st.findTombstone.get(id) as TombstoneRow | undefined;
    return row === undefined ? null : toTombstone(row);
  }

  /** Removes the owner's tombstone and inserts through `insert`, in one transaction. */
  recreate(id: string, ownerHash: string, insert: () => boolean): boolean {
    return this.recreateTx.immediate(id, ownerHash, insert);
  }

  purgeTombstones(before: Date, limit: number, sessionId?: string): number {
    if (sessionId !== undefined) return this.st.purgeTombstone.run(sessionId, before.getTime()).changes;
    return this.st.purgeTombstones.run(before.getTime(), limit).changes;
  }
}
