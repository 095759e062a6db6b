import type pg from 'pg';
import {
  sessionDeletedError,
  type ErasedSession,
  type EraseSessionOptions,
  type Tombstone,
} from '../../repository/ErasureRepository.js';
import type { EventKindCounts } from '../../repository/eventKinds.js';
import { lastActivity } from '../../repository/RetentionRepository.js';
import { newestEventTimestamp } from './retention.js';
import type { PostgresTables } from './schema.js';

/** Anything that runs a query: the pool (one statement, its own transaction) or a client inside one. */
type Queryable = Pick<pg.ClientBase, 'query'>;

interface TombstoneRow {
  id: string;
  owner_hash: string;
  deleted_at: Date;
  expires_at: Date | null;
}

const toTombstone = (r: TombstoneRow): Tombstone => ({
  sessionId: r.id,
  ownerHash: r.owner_hash,
  deletedAt: r.deleted_at,
  expiresAt: r.expires_at,
});

/**
 * The erasure statements of PostgresSessionRepository: deleting a session with its tombstone, and reading,
 * overriding and expiring tombstones. Methods taking a client expect to run inside the repository's
 * transaction; the others are single statements.
 */
export class PostgresErasure {
  private readonly sql;

  constructor(t: PostgresTables) {
    const masked = `coalesce(jsonb_typeof(metadata -> 'maskedFrom') = 'string', false)`;
    this.sql = {
      // The trigger on the sessions table takes the same lock: see migration 3.
      lockId: `SELECT pg_advisory_xact_lock(hashtext('${t.tombstones}'), hashtext($1))`,
      lockSession: `SELECT s.user_id, s.created_at, ${newestEventTimestamp(t)} AS newest FROM ${t.sessions} s WHERE s.id = $1 FOR UPDATE`,
      counts: `SELECT
          count(*) FILTER (WHERE NOT synthetic AND NOT ${masked} AND NOT archived)::int AS "activeEvents",
          count(*) FILTER (WHERE NOT synthetic AND NOT ${masked} AND archived)::int AS "archivedEvents",
          count(*) FILTER (WHERE synthetic)::int AS summaries,
          count(*) FILTER (WHERE NOT synthetic AND ${masked})::int AS "maskedCopies"
        FROM ${t.events} WHERE session_id = $1`,
      deleteSession: `DELETE FROM ${t.sessions} WHERE id = $1`,
      writeTombstone: `INSERT INTO ${t.tombstones} (id, owner_hash, deleted_at, expires_at) VALUES ($1, $2, $3, $4)
        ON CONFLICT (id) DO UPDATE SET owner_hash = EXCLUDED.owner_hash, deleted_at = EXCLUDED.deleted_at,
          expires_at = EXCLUDED.expires_at`,
      findTombstone: `SELECT id, owner_hash, deleted_at, expires_at FROM ${t.tombstones} WHERE id = $1`,
      deleteTombstone: `DELETE FROM ${t.tombstones} WHERE id = $1`,
      purgeTombstones: `DELETE FROM ${t.tombstones} WHERE id IN (
          SELECT id FROM ${t.tombstones} WHERE expires_at IS NOT NULL AND expires_at < $1 LIMIT $2)`,
      purgeTombstone: `DELETE FROM ${t.tombstones} WHERE id = $1 AND expires_at IS NOT NULL AND expires_at < $2`,
      sessionExists: `SELECT 1 FROM ${t.sessions} WHERE id = $1`,
    };
  }

  async erase(
    client: Queryable,
    id: string,
    options: EraseSessionOptions,
    hashOwner: (userId: string) => string,
  ): Promise<ErasedSession | null> {
    await client.query(this.sql.lockId, [id]);
    const { rows } = await client.query<{ user_id: string; created_at: Date; newest: Date | null }>(this.sql.lockSession, [id]);
    const row = rows[0];
    if (row === undefined) return null;
    if (options.idleBefore !== undefined && lastActivity(row.created_at, row.newest) >= options.idleBefore) return null;
    const counts = (await client.query<EventKindCounts>(this.sql.counts, [id])).rows[0]!;
    // Events go with the session (ON DELETE CASCADE), and with them anything stored in their rows.
    await client.query(this.sql.deleteSession, [id]);
    if (options.tombstone !== null) {
      const { deletedAt, expiresAt } = options.tombstone;
      await client.query(this.sql.writeTombstone, [id, hashOwner(row.user_id), deletedAt, expiresAt]);
    }
    return { sessionId: id, userId: row.user_id, ...counts };
  }

  async findTombstone(db: Queryable, id: string): Promise<Tombstone | null> {
    const { rows } = await db.query<TombstoneRow>(this.sql.findTombstone, [id]);
    return rows[0] === undefined ? null : toTombstone(rows[0]);
  }

  /** Inside a transaction: removes the owner's tombstone, then inserts through `insert`. */
  async recreate(client: Queryable, id: string, ownerHash: string, insert: () => Promise<boolean>): Promise<boolean> {
    await client.query(this.sql.lockId, [id]);
    const tombstone = await this.findTombstone(client, id);
    if (tombstone !== null && tombstone.ownerHash !== ownerHash) throw sessionDeletedError(id, tombstone);
    if ((await client.query(this.sql.sessionExists, [id])).rowCount !== 0) return false;
    await client.query(this.sql.deleteTombstone, [id]);
    return insert();
  }

  async purgeTombstones(db: Queryable, before: Date, limit: number, sessionId?: string): Promise<number> {
    if (sessionId !== undefined) return (await db.query(this.sql.purgeTombstone, [sessionId, before])).rowCount ?? 0;
    return (await db.query(this.sql.purgeTombstones, [before, limit])).rowCount ?? 0;
  }
}
