import type pg from 'pg';
import { lastActivity, type ArchivePurgeCriteria, type SessionActivityPage } from '../../repository/RetentionRepository.js';
import type { PostgresTables } from './schema.js';

/** Anything that runs a query: the pool (one statement, its own transaction) or a client inside one. */
type Queryable = Pick<pg.ClientBase, 'query'>;

/** The timestamp of session `s`'s newest event in log order (NULL without events), as a subquery. */
export function newestEventTimestamp(t: PostgresTables): string {
  return `(SELECT e."timestamp" FROM ${t.events} e WHERE e.session_id = s.id ORDER BY e.seq DESC LIMIT 1)`;
}

/**
 * The retention statements of PostgresSessionRepository: sessions with their last activity, page by page,
 * and the purge of old archived events.
 */
export class PostgresRetention {
  private readonly sql;

  constructor(t: PostgresTables) {
    this.sql = {
      purgeArchived: `WITH boundary AS (
          SELECT seq FROM ${t.events} WHERE $2::bigint IS NOT NULL AND session_id = $1 AND archived
          ORDER BY seq DESC OFFSET $2 LIMIT 1),
        doomed AS (
          SELECT seq FROM ${t.events}
          WHERE session_id = $1 AND archived AND NOT synthetic
            AND (seq <= coalesce((SELECT seq FROM boundary), -1) OR "timestamp" < $3)
          ORDER BY seq LIMIT $4)
        DELETE FROM ${t.events} WHERE seq IN (SELECT seq FROM doomed) RETURNING id`,
      activity: `SELECT s.id, s.user_id, s.created_at, ${newestEventTimestamp(t)} AS newest
        FROM ${t.sessions} s WHERE s.id > $1 ORDER BY s.id LIMIT $2`,
    };
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
