import type Database from 'better-sqlite3';
import type { SqliteTables } from './schema.js';

/**
 * The marks of user erasures in progress (UserErasureRepository), in a table of their own keyed by the owner
 * hash: no session id can name a mark, and no mark blocks a session id (they used to share the tombstones
 * table, where a session id spelled like a mark's key collided with it). Every method runs inside the caller's
 * transaction or is one statement.
 */
export class SqliteUserErasureMarks {
  private readonly st;

  constructor(db: Database.Database, t: SqliteTables) {
    const p = (sql: string) => db.prepare(sql);
    this.st = {
      mark: p(
        `INSERT INTO ${t.userErasures} (owner_hash, marked_at, expires_at) VALUES (?, ?, ?)
         ON CONFLICT (owner_hash) DO UPDATE SET marked_at = excluded.marked_at, expires_at = excluded.expires_at`,
      ),
      // Marks left by erasures that crashed block nothing once expired; they go with the next mark.
      dropExpired: p(`DELETE FROM ${t.userErasures} WHERE expires_at <= ?`),
      unmark: p(`DELETE FROM ${t.userErasures} WHERE owner_hash = ?`),
      marked: p(`SELECT 1 FROM ${t.userErasures} WHERE owner_hash = ? AND expires_at > ?`),
    };
  }

  mark(hash: string, until: Date): void {
    const now = Date.now();
    this.st.dropExpired.run(now);
    this.st.mark.run(hash, now, until.getTime());
  }

  unmark(hash: string): void {
    this.st.unmark.run(hash);
  }

  /** Inside the caller's transaction: whether the owner's erasure is in progress. */
  marked(hash: string): boolean {
    return this.st.marked.get(hash, Date.now()) !== undefined;
  }
}
