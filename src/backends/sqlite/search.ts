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
 * How many of the full-text index's best matches the first attempt ranks, per hit asked for: enough that the
 * join's rules (session, branch, shadow prompts) rarely leave fewer than `limit` in a store of one busy session.
 */
export const SEARCH_WINDOW_FACTOR = 4;
/** How much wider each further attempt is; the last attempt has no window at all. */
export const SEARCH_WINDOW_GROWTH = 16;
/** Attempts with a window before the unbounded one. */
export const SEARCH_WINDOWED_ATTEMPTS = 2;

/**
 * The statement reading a search's `SeqRange` (@sessionId, or @userId for a search across the user's sessions):
 * each end through the events' (session_id, seq) index, one probe per session.
 */
export function buildSeqRangeQuery(t: SqliteTables, scope: 'session' | 'user'): string {
  const ends = (id: string) =>
    `(SELECT seq FROM ${t.events} WHERE session_id = ${id} ORDER BY seq LIMIT 1) AS lo,
     (SELECT seq FROM ${t.events} WHERE session_id = ${id} ORDER BY seq DESC LIMIT 1) AS hi`;
  if (scope === 'session') return `SELECT ${ends('@sessionId')}`;
  return `SELECT min(lo) AS lo, max(hi) AS hi FROM (SELECT ${ends('s.id')} FROM ${t.sessions} s WHERE s.user_id = @userId)`;
}

/**
 * The first and last `seq` of the events a search may return (the session's, or the user's sessions'): the
 * index's rowids are the events' seqs, so the rows between them hold every possible hit.
 */
export interface SeqRange {
  lo: number;
  hi: number;
}

/**
 * The ranked search: FTS5 ranks the matching rows between the first and last seq the search may return (`range`;
 * other sessions' rows there included, never those outside) by `bm25()` alone, the best `window` of them
 * (null: all) are joined to their events, and the join keeps those the options allow. Ranking rowids first keeps
 * the per-match work to FTS5's own: the join (a row lookup each) and the sort of whole rows are paid for the
 * window only, not for every match in the store — the difference between a turn that grows with the archive and
 * one that does not. `bm25()` is lower for better matches; it is negated so that a higher score is better, as
 * on every backend; ties go to the older event, in the window and after the join alike, so the windowed answer
 * is the unbounded one whenever the window yields `limit` rows (see SqliteSessionRepository.searchEvents).
 */
export function buildSqliteSearch(
  t: SqliteTables,
  sessionId: string,
  terms: readonly string[],
  o: ResolvedEventSearch,
  window: number | null = null,
  range: SeqRange | null = null,
): SqliteSearchQuery {
  const params: Record<string, string | number> = { match: ftsMatchExpression(terms), sessionId, limit: o.limit };
  // Shadow prompts (the synthetic user message opening a summary) say nothing about the conversation.
  const where = ["NOT (e.synthetic = 1 AND e.message_type = 'user')"];
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
  let ranked = `SELECT rowid AS seq, bm25(${t.fts}) AS rank FROM ${t.fts} WHERE ${t.fts} MATCH @match`;
  if (range !== null) {
    // FTS5 reads the doclists only between these rowids: another session's rows outside them are never ranked.
    ranked += ' AND rowid BETWEEN @lo AND @hi';
    params.lo = range.lo;
    params.hi = range.hi;
  }
  if (window !== null) {
    ranked += ` ORDER BY rank, rowid LIMIT @window`;
    params.window = window;
  }
  // CROSS JOIN fixes the order (SQLite's planner never reorders it): the ranked rowids drive, each looks up its
  // row by primary key. Left to itself the planner prefers scanning the session's events through its index.
  const sql = `SELECT ${COLUMNS}, -m.rank AS score
    FROM (${ranked}) m CROSS JOIN ${t.events} e ON e.seq = m.seq
    WHERE ${where.join(' AND ')}
    ORDER BY m.rank, e.seq
    LIMIT @limit`;
  return { sql, params };
}
