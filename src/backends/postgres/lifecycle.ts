import type pg from 'pg';
import { InvalidArgumentError } from '../../errors.js';
import {
  lastActivity,
  sessionDeletedError,
  type ArchivePurgeCriteria,
  type ErasedSession,
  type EraseSessionOptions,
  type EventKindCounts,
  type SessionActivityPage,
  type Tombstone,
} from '../../repository/lifecycle.js';
import type { PostgresTables } from './schema.js';

/** Anything that runs a query: the pool (one statement, its own transaction) or a client inside one. */
type Queryable = Pick<pg.ClientBase, 'query'>;

/** Column arrays of events for a one-statement multi-row write through `unnest`. */
export interface EventColumnArrays {
  ids: string[];
  types: string[];
  texts: (string | null)[];
  lowered: (string | null)[];
  data: (string | null)[];
  synthetic: boolean[];
  branches: (string | null)[];
  metadata: string[];
  timestamps: Date[];
}

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
 * The data-lifecycle statements of PostgresSessionRepository. Methods taking a client expect to run inside
 * the repository's transaction; the others are single statements.
 */
export class PostgresLifecycle {
  private readonly sql;

  constructor(private readonly t: PostgresTables) {
    const masked = `coalesce(jsonb_typeof(metadata -> 'maskedFrom') = 'string', false)`;
    const newest = `(SELECT e."timestamp" FROM ${t.events} e WHERE e.session_id = s.id ORDER BY e.seq DESC LIMIT 1)`;
    this.sql = {
      // The trigger on the sessions table takes the same lock: see migration 3.
      lockId: `SELECT pg_advisory_xact_lock(hashtext('${t.tombstones}'), hashtext($1))`,
      lockSession: `SELECT s.user_id, s.created_at, ${newest} AS newest FROM ${t.sessions} s WHERE s.id = $1 FOR UPDATE`,
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
      claimVersion: `UPDATE ${t.sessions} SET event_version = event_version + 1 WHERE id = $1 AND event_version = $2`,
      // In place: seq and the archived flag stay, so each event keeps its position and its side of the cut.
      rewrite: `UPDATE ${t.events} AS e SET message_type = u.message_type, text = u.text, text_lc = u.text_lc,
          data = u.data, synthetic = u.synthetic, branch = u.branch, metadata = u.metadata, "timestamp" = u.ts
        FROM unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::jsonb[], $7::boolean[], $8::text[],
          $9::jsonb[], $10::timestamptz[]) AS u(id, message_type, text, text_lc, data, synthetic, branch, metadata, ts)
        WHERE e.session_id = $1 AND e.id = u.id
        RETURNING e.id`,
      purgeArchived: `WITH boundary AS (
          SELECT seq FROM ${t.events} WHERE $2::bigint IS NOT NULL AND session_id = $1 AND archived
          ORDER BY seq DESC OFFSET $2 LIMIT 1),
        doomed AS (
          SELECT seq FROM ${t.events}
          WHERE session_id = $1 AND archived AND NOT synthetic
            AND (seq <= coalesce((SELECT seq FROM boundary), -1) OR "timestamp" < $3)
          ORDER BY seq LIMIT $4)
        DELETE FROM ${t.events} WHERE seq IN (SELECT seq FROM doomed) RETURNING id`,
      activity: `SELECT s.id, s.user_id, s.created_at, ${newest} AS newest
        FROM ${t.sessions} s WHERE s.id > $1 ORDER BY s.id LIMIT $2`,
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

  /** Inside a transaction. 'missing' / 'stale' change nothing; a missing event throws (rolling back the claim). */
  async rewrite(client: Queryable, id: string, c: EventColumnArrays, expectedVersion: number): Promise<boolean> {
    const claim = await client.query(this.sql.claimVersion, [id, expectedVersion]);
    if (claim.rowCount === 0) {
      if ((await client.query(this.sql.sessionExists, [id])).rowCount === 0)
        throw new InvalidArgumentError(`Session not found: ${id}`);
      return false;
    }
    const { rows } = await client.query<{ id: string }>(this.sql.rewrite, [
      id,
      c.ids,
      c.types,
      c.texts,
      c.lowered,
      c.data,
      c.synthetic,
      c.branches,
      c.metadata,
      c.timestamps,
    ]);
    const found = new Set(rows.map((r) => r.id));
    const missing = c.ids.find((x) => !found.has(x));
    if (missing !== undefined) throw new InvalidArgumentError(`Event not found: ${missing}`);
    return true;
  }

  async purgeArchived(db: Queryable, id: string, c: ArchivePurgeCriteria): Promise<string[]> {
    if (c.keepLast === undefined && c.before === undefined) return [];
    const { rows } = await db.query<{ id: string }>(this.sql.purgeArchived, [id, c.keepLast ?? null, c.before ?? null, c.limit]);
    return rows.map((r) => r.id);
  }

  async listActivity(db: Queryable, cursor: string | null, limit: number): Promise<SessionActivityPage> {
    const { rows } = await db.query<{ id: string; user_id: string; created_at: Date; newest: Date | null }>(this.sql.activity, [
      cursor ?? '',
      limit + 1,
    ]);
    const page = rows.slice(0, limit);
    return {
      sessions: page.map((r) => ({ id: r.id, userId: r.user_id, lastActiveAt: lastActivity(r.created_at, r.newest) })),
      cursor: rows.length > limit ? page[page.length - 1]!.id : null,
    };
  }
}
