import type Database from 'better-sqlite3';
import { lastActivity, type ArchivePurgeCriteria, type SessionActivityPage } from '../../repository/RetentionRepository.js';
import type { SqliteTables } from './schema.js';

/** The timestamp of session `s`'s newest event in log order (NULL without events), as a subquery. */
export function newestEventTimestamp(t: SqliteTables): string {
  return `(SELECT e.timestamp FROM ${t.events} e WHERE e.session_id = s.id ORDER BY e.seq DESC LIMIT 1)`;
}

/**
 * The retention statements of SqliteSessionRepository: sessions with their last activity, page by page, and
 * the purge of old archived events (one IMMEDIATE transaction per batch).
 */
export class SqliteRetention {
  private readonly st;
  private readonly purgeTx;

  constructor(db: Database.Database, t: SqliteTables) {
    const p = (sql: string) => db.prepare(sql);
    this.st = {
      keepLastBoundary: p(`SELECT seq FROM ${t.events} WHERE session_id = ? AND archived = 1 ORDER BY seq DESC LIMIT 1 OFFSET ?`),
      purgeArchived: p(
        `DELETE FROM ${t.events} WHERE seq IN (
           SELECT seq FROM ${t.events}
           WHERE session_id = @sessionId AND archived = 1 AND synthetic = 0 AND (seq <= @maxSeq OR timestamp < @before)
           ORDER BY seq LIMIT @limit)
         RETURNING id`,
      ),
      activity: p(
        `SELECT s.id, s.user_id AS userId, s.created_at AS createdAt, ${newestEventTimestamp(t)} AS newest
         FROM ${t.sessions} s WHERE s.id > ? ORDER BY s.id LIMIT ?`,
      ),
    };
    const st = this.st;

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
}
