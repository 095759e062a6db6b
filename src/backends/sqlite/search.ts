import type { ResolvedEventSearch } from '../../repository/eventSearch.js';
import { EVENT_COLUMNS_OF_E as COLUMNS } from './eventQuery.js';
import type { SqliteTables } from './schema.js';

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
 * A word of the query found in more of the index rows a session's search ranks than this is common: the search then
 * ranks only the rows that also hold one of its rarer words (see SearchBound). Exact results while no query word is
 * in more of them, as PostgreSQL's POSTINGS_PER_WORD.
 */
export const RARE_WORD_EVENTS = 500;
/** When every word of the query is common: how many of the session's most recent matching events are ranked. */
export const RECENT_MATCHES = 1_000;
/**
 * A session's search is bounded only when the session holds more events than this: below it the probes and the
 * bounded statement cost more than they save. `benchmarks/sqlite-search-bound.ts` (LoCoMo, 40 hits): at 10,000
 * events the unbounded statement took 1.73 ms p50 and the bounded one 2.93 ms with its probes, at 100,000 12.4
 * against 7.44 ms.
 */
export const BOUNDED_SEARCH_EVENTS = 20_000;

/** Counts up to @cap of session @sessionId's events through its (session_id, seq) index: tells a large session. */
export function buildSessionSizeProbe(t: SqliteTables): string {
  return `SELECT count(*) AS n FROM (SELECT 1 FROM ${t.events} WHERE session_id = @sessionId LIMIT @cap)`;
}

/** Decimals a bounded score keeps (`bm25()` scores are tens at most). */
export const SCORE_DECIMALS = 9;

/**
 * How a session's search is bounded when a query word is common (RARE_WORD_EVENTS): FTS5's `bm25()` costs about a
 * microsecond per matching row (a size lookup each), and a speaker's name matches half of a long conversation.
 * - `rare`: the rows holding one of these words are ranked, each by `bm25()` over every word of the query, so a
 *   ranked event's score is the unbounded search's (to within rounding). `bm25()` sums one term per phrase of the
 *   expression, and a phrase absent from a row adds exactly zero: a row holding a common word too is scored by
 *   `(rare) AND (common)` (each word once), a row holding none by `rare` alone. Both rounded to 1e-9, as the
 *   sums run in another order than the unbounded search's. When they give fewer hits than asked for, the session's
 *   RECENT_MATCHES most recent matches join them (see SqliteSessionRepository.searchEvents): an event holding only
 *   words found almost everywhere scores next to nothing, but it is still a hit the unbounded search would return.
 * - `recent`: no word is rare; the session's `recent` most recent matching events are ranked.
 */
export type SearchBound = { rare: readonly string[] } | { recent: number };

/**
 * Counts up to @cap of the index rows between @lo and @hi whose words match @match: enough to tell a rare word from
 * a common one while reading at most @cap of its matches. The rows are those the search ranks (the session's own
 * in a file of one session, every session's written meanwhile in a shared one), as `bm25()` counts a word's rows
 * in the whole file: telling rows apart by session would cost a row lookup per match, as much as ranking them.
 */
export function buildWordProbe(t: SqliteTables): string {
  return `SELECT count(*) AS n FROM (SELECT 1 FROM ${t.fts} WHERE ${t.fts} MATCH @match AND rowid BETWEEN @lo AND @hi LIMIT @cap)`;
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
 * `bound` (a session's search with a common word) narrows the rows ranked; see SearchBound.
 */
export function buildSqliteSearch(
  t: SqliteTables,
  sessionId: string,
  terms: readonly string[],
  o: ResolvedEventSearch,
  window: number | null = null,
  range: SeqRange | null = null,
  bound: SearchBound | null = null,
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
  const inRange = range === null ? '' : ' AND f.rowid BETWEEN @lo AND @hi';
  if (range !== null) {
    // FTS5 reads the doclists only between these rowids: another session's rows outside them are never ranked.
    params.lo = range.lo;
    params.hi = range.hi;
  }
  if (bound !== null && 'recent' in bound) {
    // The newest matches first, straight from FTS5's rowid order; `bm25()` runs only for the rows the join keeps,
    // and the scan stops at the bound.
    params.recent = bound.recent;
    const sql = `SELECT ${COLUMNS}, e.seq AS seq, k.score AS score FROM (
      SELECT seq, score FROM (SELECT f.rowid AS seq, -bm25(${t.fts}) AS score
        FROM ${t.fts} f CROSS JOIN ${t.events} e ON e.seq = f.rowid
        WHERE ${t.fts} MATCH @match${inRange} AND ${where.join(' AND ')}
        ORDER BY f.rowid DESC LIMIT @recent)
      ORDER BY score DESC, seq LIMIT @limit
    ) k CROSS JOIN ${t.events} e ON e.seq = k.seq
    ORDER BY k.score DESC, k.seq`;
    return { sql, params };
  }
  let ranked: string;
  let prefix = '';
  if (bound !== null) {
    // The rows holding a rare word, and those of them holding a common one too; each is scanned once. `bm25()`
    // reads the whole doclist of every phrase for its statistics: scoring `(rare) AND (all)` and taking `rare` off
    // again, as before, read the rare words' three times (2.4 ms against 1.6 ms per search at 100,000 LoCoMo
    // events, docs/recall.md).
    const rare = ftsMatchExpression(bound.rare);
    const common = ftsMatchExpression(terms.filter((term) => !bound.rare.includes(term)));
    params.rare = rare;
    params.withCommon = `(${rare}) AND (${common})`;
    const scored = (match: string) =>
      `SELECT f.rowid AS seq, bm25(${t.fts}) AS rank FROM ${t.fts} f WHERE ${t.fts} MATCH ${match}${inRange}`;
    // `r` drives the join row by row (the LEFT JOIN keeps it outer); `c` is materialised and looked up through a
    // transient index. Materialising `r` as well cost ~0.05 ms of ~1.0 per statement at 100,000 events.
    prefix = `WITH r AS NOT MATERIALIZED (${scored('@rare')}), c AS MATERIALIZED (${scored('@withCommon')}) `;
    // Rounded: two events the unbounded search scores equal must tie here too (and go in log order), whatever
    // another order of the sum leaves in the last bits.
    // Sorted before the join, and kept a subquery (LIMIT -1 is no limit, but a subquery with one is never flattened
    // into the join): the join then walks the ranked seqs best first and stops at `limit` kept rows, a row lookup
    // for each of those instead of for every row ranked (~320 at 100,000 LoCoMo events; 1.24 → 1.05 ms a statement).
    ranked = `SELECT r.seq AS seq, round(coalesce(c.rank, r.rank), ${SCORE_DECIMALS}) AS rank FROM r LEFT JOIN c ON c.seq = r.seq ORDER BY rank, seq LIMIT -1`;
    delete params.match;
  } else {
    ranked = `SELECT f.rowid AS seq, bm25(${t.fts}) AS rank FROM ${t.fts} f WHERE ${t.fts} MATCH @match${inRange}`;
  }
  if (window !== null) {
    ranked += ` ORDER BY rank, seq LIMIT @window`;
    params.window = window;
  }
  // CROSS JOIN fixes the order (SQLite's planner never reorders it): the ranked rowids drive, each looks up its
  // row by primary key. Left to itself the planner prefers scanning the session's events through its index.
  // The seqs are sorted with their ranks alone and the wide rows joined again for the answer: sorting whole rows
  // cost ~0.2 ms of a bounded statement's ~1.9 at 100,000 events (~320 rows ranked; CHANGELOG, issue 27).
  const sql = `${prefix}SELECT ${COLUMNS}, e.seq AS seq, -k.rank AS score FROM (
      SELECT m.seq AS seq, m.rank AS rank FROM (${ranked}) m CROSS JOIN ${t.events} e ON e.seq = m.seq
      WHERE ${where.join(' AND ')}
      ORDER BY m.rank, m.seq
      LIMIT @limit
    ) k CROSS JOIN ${t.events} e ON e.seq = k.seq
    ORDER BY k.rank, k.seq`;
  return { sql, params };
}
