import type Database from 'better-sqlite3';
import { InvalidArgumentError } from '../../errors.js';
import {
  lastActivity,
  sessionDeletedError,
  type ArchivePurgeCriteria,
  type ErasedSession,
  type EraseSessionOptions,
  type SessionActivityPage,
  type Tombstone,
} from '../../repository/lifecycle.js';
import type { SqliteTables } from './schema.js';

/** Named parameters of an event row as the repository binds them. */
export interface SqliteEventParams {
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
 * The data-lifecycle statements of SqliteSessionRepository (erasure, tombstones, in-place rewrites,
 * retention). Each public method is one IMMEDIATE transaction, serialised with appends and compactions by
 * SQLite's write lock, across processes too.
 */
export class SqliteLifecycle {
  private readonly st;
  private readonly eraseTx;
  private readonly rewriteTx;
  private readonly purgeTx;
  private readonly recreateTx;

  constructor(
    private readonly db: Database.Database,
    t: SqliteTables,
  ) {
    const p = (sql: string) => db.prepare(sql);
    const newest = `(SELECT e.timestamp FROM ${t.events} e WHERE e.session_id = s.id ORDER BY e.seq DESC LIMIT 1)`;
    // coalesce: json_type gives NULL for a missing key, and NULL would drop the row from every sum.
    const masked = `(coalesce(json_type(metadata, '$.maskedFrom'), '') = 'text')`;
    this.st = {
      session: p(
        `SELECT s.user_id AS userId, s.created_at AS createdAt, ${newest} AS newest FROM ${t.sessions} s WHERE s.id = ?`,
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
      casVersion: p(`UPDATE ${t.sessions} SET event_version = event_version + 1 WHERE id = ? AND event_version = ?`),
      eventExists: p(`SELECT 1 FROM ${t.events} WHERE session_id = ? AND id = ?`),
      // In place: seq and the archived flag stay, so the event keeps its position and its side of the cut.
      rewrite: p(
        `UPDATE ${t.events} SET timestamp = @timestamp, message_type = @messageType, text = @text, data = @data,
           synthetic = @synthetic, branch = @branch, metadata = @metadata
         WHERE session_id = @sessionId AND id = @id`,
      ),
      keepLastBoundary: p(`SELECT seq FROM ${t.events} WHERE session_id = ? AND archived = 1 ORDER BY seq DESC LIMIT 1 OFFSET ?`),
      purgeArchived: p(
        `DELETE FROM ${t.events} WHERE seq IN (
           SELECT seq FROM ${t.events}
           WHERE session_id = @sessionId AND archived = 1 AND synthetic = 0 AND (seq <= @maxSeq OR timestamp < @before)
           ORDER BY seq LIMIT @limit)
         RETURNING id`,
      ),
      activity: p(
        `SELECT s.id, s.user_id AS userId, s.created_at AS createdAt, ${newest} AS newest
         FROM ${t.sessions} s WHERE s.id > ? ORDER BY s.id LIMIT ?`,
      ),
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

    this.rewriteTx = db.transaction((id: string, params: SqliteEventParams[], expectedVersion: number): boolean => {
      if (st.version.get(id) === undefined) throw new InvalidArgumentError(`Session not found: ${id}`);
      for (const e of params) {
        if (st.eventExists.get(id, e.id) === undefined) throw new InvalidArgumentError(`Event not found: ${e.id}`);
      }
      if (st.casVersion.run(id, expectedVersion).changes === 0) return false;
      for (const e of params) st.rewrite.run(e);
      return true;
    });

    this.purgeTx = db.transaction((id: string, c: ArchivePurgeCriteria): string[] => {
      const boundary =
        c.keepLast === undefined ? undefined : (st.keepLastBoundary.pluck().get(id, c.keepLast) as number | undefined);
      if (boundary === undefined && c.before === undefined) return [];
      return st.purgeArchived.pluck().all({
        sessionId: id,
        maxSeq: boundary ?? -1,
        // NULL: `timestamp < NULL` is never true.
        before: c.before === undefined ? null : c.before.getTime(),
        limit: c.limit,
      }) as string[];
    });

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

  rewrite(id: string, params: SqliteEventParams[], expectedVersion: number): boolean {
    return this.rewriteTx.immediate(id, params, expectedVersion);
  }

  purgeArchived(id: string, criteria: ArchivePurgeCriteria): string[] {
    return this.purgeTx.immediate(id, criteria);
  }

  listActivity(cursor: string | null, limit: number): SessionActivityPage {
    const rows = this.st.activity.all(cursor ?? '', limit + 1) as Array<{
      id: string;
      userId: string;
      createdAt: number;
      newest: number | null;
    }>;
    const page = rows.slice(0, limit);
    return {
      sessions: page.map((r) => ({ id: r.id, userId: r.userId, lastActiveAt: lastActivity(new Date(r.createdAt), r.newest) })),
      cursor: rows.length > limit ? page[page.length - 1]!.id : null,
    };
  }

  /** Moves the WAL's page images (which still hold deleted bytes) into the database file and truncates it. */
  checkpoint(): { busy: boolean } {
    const [row] = this.db.pragma('wal_checkpoint(TRUNCATE)') as Array<{ busy: number }>;
    return { busy: (row?.busy ?? 0) !== 0 };
  }
}

/**
 * Makes the full-text index forget the words of deleted and rewritten rows. Since schema version 5 the
 * index is told a deleted row's words, and FTS5's secure-delete mode removes them from the index pages at
 * delete time: this turns the mode on once (a setting stored in the file, so every connection's deletes
 * use it), with one 'optimize' for what deletes before it left behind; afterwards it only reads the
 * setting. An index still in the version-2 form (contentless_delete: deletes by rowid, FTS5 never learns
 * the words) keeps them until its segments are merged, so it can only be rewritten whole ('optimize');
 * `rewriteLegacy: false` leaves such an index alone (at open, before anything was deleted).
 */
export function forgetDeletedWords(
  db: Database.Database,
  fts: string,
  rewriteLegacy = true,
): 'secure-delete' | 'optimized' | 'no-index' | 'legacy' {
  const before = fullTextState(db, fts);
  if (before === 'missing') return 'no-index';
  if (before === 'secure') return 'secure-delete';
  if (before === 'rowid-deletes' && !rewriteLegacy) return 'legacy';
  return db
    .transaction((): 'secure-delete' | 'optimized' | 'no-index' | 'legacy' => {
      // Again under the write lock: another process may have done it meanwhile.
      const state = fullTextState(db, fts);
      if (state === 'missing') return 'no-index';
      if (state === 'secure') return 'secure-delete';
      if (state === 'insecure') db.prepare(`INSERT INTO ${fts} (${fts}, rank) VALUES ('secure-delete', 1)`).run();
      db.prepare(`INSERT INTO ${fts} (${fts}) VALUES ('optimize')`).run();
      return state === 'insecure' ? 'secure-delete' : 'optimized';
    })
    .immediate();
}

/** The index's form: absent, version 2's rowid-only deletes, or version 5's with secure-delete on or off. */
function fullTextState(db: Database.Database, fts: string): 'missing' | 'rowid-deletes' | 'secure' | 'insecure' {
  const ddl: unknown = db.prepare(`SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?`).pluck().get(fts);
  if (typeof ddl !== 'string') return 'missing';
  if (/contentless_delete\s*=\s*1/i.test(ddl)) return 'rowid-deletes';
  const on: unknown = db.prepare(`SELECT v FROM ${fts}_config WHERE k = 'secure-delete'`).pluck().get();
  return Number(on) === 1 ? 'secure' : 'insecure';
}
