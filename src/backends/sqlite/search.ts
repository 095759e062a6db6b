import type { ResolvedEventSearch } from '../../repository/eventSearch.js';
import type { SqliteTables } from './schema.js';

const COLUMNS =
  'e.session_id AS sessionId, e.id, e.timestamp, e.message_type AS messageType, e.text, e.data, e.synthetic, e.archived, e.branch, e.metadata';

export interface SqliteSearchQuery {
  /** Fixed fragments and validated table names only: also the statement-cache key. */
  sql: string;
  params: Record<string, string | number>;
}

/**
 * An FTS5 MATCH expression in which every term is a quoted string joined by OR: FTS5 reads nothing inside
 * double quotes as syntax (NEAR, AND, `*`, `^`, `:` are text), and terms hold word characters only anyway.
 */
export function ftsMatchExpression(terms: readonly string[]): string {
  return terms.map((t) => `"${t.replace(/"/g, '""')}"`).join(' OR ');
}

/**
 * The ranked search: FTS5 finds the matching rows of every session, the join keeps those the options allow.
 * `bm25()` is lower for better matches; it is negated so that a higher score is better, as on every backend.
 */
export function buildSqliteSearch(
  t: SqliteTables,
  sessionId: string,
  terms: readonly string[],
  o: ResolvedEventSearch,
): SqliteSearchQuery {
  const params: Record<string, string | number> = { match: ftsMatchExpression(terms), sessionId, limit: o.limit };
  // Shadow prompts (the synthetic user message opening a summary) say nothing about the conversation.
  const where = [`${t.fts} MATCH @match`, "NOT (e.synthetic = 1 AND e.message_type = 'user')"];
  if (o.scope === 'user') {
    where.push(`e.session_id IN (SELECT id FROM ${t.sessions} WHERE user_id = @userId)`);
    params.userId = o.userId!;
    // Only this session's window is in the prompt already; other sessions are searched whole.
    if (!o.includeActive) where.push('(e.archived = 1 OR e.session_id <> @sessionId)');
  } else {
    where.push('e.session_id = @sessionId');
    if (!o.includeActive) where.push('e.archived = 1');
  }
  if (o.branch === null) {
    where.push('e.branch IS NULL');
  } else {
    // Prefix test by substring, not LIKE: branch names may contain % and _.
    where.push("(e.branch IS NULL OR e.branch = @branch OR substr(@branch, 1, length(e.branch) + 1) = e.branch || '.')");
    params.branch = o.branch;
  }
  const sql = `SELECT ${COLUMNS}, -bm25(${t.fts}) AS score
    FROM ${t.fts} JOIN ${t.events} e ON e.seq = ${t.fts}.rowid
    WHERE ${where.join(' AND ')}
    ORDER BY bm25(${t.fts}), e.seq
    LIMIT @limit`;
  return { sql, params };
}
