import type { PostgresTables } from './schema.js';

/**
 * Statements of the optional bulk SPI methods (appendEvents, listSessionIds). The events are passed as
 * parallel arrays through `unnest`, so a batch of any size is one statement with a fixed parameter count.
 */
export function bulkStatements(t: PostgresTables) {
  return {
    lockSession: `SELECT 1 FROM ${t.sessions} WHERE id = $1 FOR UPDATE`,
    // Identity values follow the ORDER BY, so the batch keeps its order in the log; a known id is skipped.
    appendMany: `INSERT INTO ${t.events}
        (session_id, id, message_type, text, text_lc, data, synthetic, archived, branch, metadata, "timestamp")
      SELECT $1, u.id, u.message_type, u.text, u.text_lc, u.data, u.synthetic, u.archived, u.branch, u.metadata, u.ts
      FROM unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::jsonb[], $7::boolean[], $8::boolean[], $9::text[],
        $10::jsonb[], $11::timestamptz[]) WITH ORDINALITY
        AS u(id, message_type, text, text_lc, data, synthetic, archived, branch, metadata, ts, ord)
      ORDER BY u.ord
      ON CONFLICT (session_id, id) DO NOTHING`,
    bumpVersionBy: `UPDATE ${t.sessions} SET event_version = event_version + $2 WHERE id = $1`,
    firstIds: `SELECT id FROM ${t.sessions} ORDER BY id LIMIT $1`,
    idsAfter: `SELECT id FROM ${t.sessions} WHERE id > $1 ORDER BY id LIMIT $2`,
  };
}
