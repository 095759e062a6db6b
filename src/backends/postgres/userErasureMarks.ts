import type pg from 'pg';
import type { PostgresTables } from './schema.js';

/** Anything that runs a query: the pool (one statement, its own transaction) or a client inside one. */
type Queryable = Pick<pg.ClientBase, 'query'>;

/**
 * The marks of user erasures in progress (UserErasureRepository), in a table of their own keyed by the owner
 * hash: no session id can name a mark, and no mark blocks a session id (they used to share the tombstones
 * table, where a session id spelled like a mark's key collided with it). The eraser takes the mark's advisory
 * lock exclusively, writers of new sessions shared: a writer either commits before the mark (and the sweep
 * finds its session) or waits for it and sees it. The locks' first key is the marks table's name, so they
 * never meet the per-session-id locks of the tombstones.
 */
export class PostgresUserErasureMarks {
  private readonly sql;

  constructor(t: PostgresTables) {
    this.sql = {
      lockExclusive: `SELECT pg_advisory_xact_lock(hashtext('${t.userErasures}'), hashtext($1))`,
      lockShared: `SELECT pg_advisory_xact_lock_shared(hashtext('${t.userErasures}'), hashtext($1))`,
      // Marks left by erasures that crashed block nothing once expired; they go with the next mark.
      dropExpired: `DELETE FROM ${t.userErasures} WHERE expires_at <= now()`,
      mark: `INSERT INTO ${t.userErasures} (owner_hash, marked_at, expires_at) VALUES ($1, now(), $2)
        ON CONFLICT (owner_hash) DO UPDATE SET marked_at = EXCLUDED.marked_at, expires_at = EXCLUDED.expires_at`,
      unmark: `DELETE FROM ${t.userErasures} WHERE owner_hash = $1`,
      marked: `SELECT 1 FROM ${t.userErasures} WHERE owner_hash = $1 AND expires_at > now()`,
    };
  }

  /** Inside a transaction: sets the mark under its exclusive lock. */
  async mark(client: Queryable, hash: string, until: Date): Promise<void> {
    await client.query(this.sql.lockExclusive, [hash]);
    await client.query(this.sql.dropExpired);
    await client.query(this.sql.mark, [hash, until]);
  }

  async unmark(db: Queryable, hash: string): Promise<void> {
    await db.query(this.sql.unmark, [hash]);
  }

  /** Inside the writer's transaction: takes the mark's shared lock (held to the commit), then reads it. */
  async marked(client: Queryable, hash: string): Promise<boolean> {
    await client.query(this.sql.lockShared, [hash]);
    return ((await client.query(this.sql.marked, [hash])).rowCount ?? 0) > 0;
  }
}
