import type pg from 'pg';
import { InvalidArgumentError } from '../../errors.js';
import type { PostgresTables } from './schema.js';

/** A client inside the repository's transaction. */
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

/** The in-place rewrite of events (redaction, regenerated summaries) for PostgresSessionRepository. */
export class PostgresEventRewrites {
  private readonly sql;

  constructor(t: PostgresTables) {
    this.sql = {
      sessionExists: `SELECT 1 FROM ${t.sessions} WHERE id = $1`,
      claimVersion: `UPDATE ${t.sessions} SET event_version = event_version + 1 WHERE id = $1 AND event_version = $2`,
      // In place: seq and the archived flag stay, so each event keeps its position and its side of the cut.
      rewrite: `UPDATE ${t.events} AS e SET message_type = u.message_type, text = u.text, text_lc = u.text_lc,
          data = u.data, synthetic = u.synthetic, branch = u.branch, metadata = u.metadata, "timestamp" = u.ts
        FROM unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::jsonb[], $7::boolean[], $8::text[],
          $9::jsonb[], $10::timestamptz[]) AS u(id, message_type, text, text_lc, data, synthetic, branch, metadata, ts)
        WHERE e.session_id = $1 AND e.id = u.id
        RETURNING e.id`,
    };
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
}
