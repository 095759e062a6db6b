import type Database from 'better-sqlite3';
import { InvalidArgumentError } from '../../errors.js';
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

/**
 * The in-place rewrite of events (redaction, regenerated summaries) for SqliteSessionRepository: one
 * IMMEDIATE transaction, CAS on the session's version.
 */
export class SqliteEventRewrites {
  private readonly rewriteTx;

  constructor(db: Database.Database, t: SqliteTables) {
    const p = (sql: string) => db.prepare(sql);
    const st = {
      version: p(`SELECT event_version AS version FROM ${t.sessions} WHERE id = ?`),
      casVersion: p(`UPDATE ${t.sessions} SET event_version = event_version + 1 WHERE id = ? AND event_version = ?`),
      eventExists: p(`SELECT 1 FROM ${t.events} WHERE session_id = ? AND id = ?`),
      // In place: seq and the archived flag stay, so the event keeps its position and its side of the cut.
      rewrite: p(
        `UPDATE ${t.events} SET timestamp = @timestamp, message_type = @messageType, text = @text, data = @data,
           synthetic = @synthetic, branch = @branch, metadata = @metadata
         WHERE session_id = @sessionId AND id = @id`,
      ),
    };

    this.rewriteTx = db.transaction((id: string, params: SqliteEventParams[], expectedVersion: number): boolean => {
      if (st.version.get(id) === undefined) throw new InvalidArgumentError(`Session not found: ${id}`);
      // The version first: a stale rewrite loses its compare-and-set even when its events are gone by now.
      // A missing event after the claim throws, which rolls the claim back.
      if (st.casVersion.run(id, expectedVersion).changes === 0) return false;
      for (const e of params) {
        if (st.eventExists.get(id, e.id) === undefined) throw new InvalidArgumentError(`Event not found: ${e.id}`);
      }
      for (const e of params) st.rewrite.run(e);
      return true;
    });
  }

  rewrite(id: string, params: SqliteEventParams[], expectedVersion: number): boolean {
    return this.rewriteTx.immediate(id, params, expectedVersion);
  }
}
