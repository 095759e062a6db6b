import type { EventFilter } from '../../filter/EventFilter.js';
import { termNeedsJs } from '../../repository/storedText.js';

/** Name of the SQL function the repository registers as JavaScript's `String.prototype.toLowerCase`. */
export const JS_LOWER_FUNCTION = 'session_compaction_js_lower';

export const EVENT_COLUMNS =
  'session_id AS sessionId, id, timestamp, message_type AS messageType, text, data, synthetic, archived, branch, metadata';

/** EVENT_COLUMNS of the events table aliased `e` (statements that join it). */
export const EVENT_COLUMNS_OF_E = EVENT_COLUMNS.split(', ')
  .map((c) => `e.${c}`)
  .join(', ');

export interface SqliteEventQuery {
  /** Built from fixed fragments and the validated table name only, so it doubles as the statement-cache key. */
  sql: string;
  params: Array<string | number>;
  /** lastN is evaluated newest-first in SQL; the rows come back reversed. */
  reverse: boolean;
  /**
   * Text criteria SQL cannot evaluate exactly: a RegExp, or a keyword holding a character the store keeps
   * encoded (NUL, U+FDD0, a lone surrogate — which besides matches half of a surrogate pair in JS; see
   * storedText.ts). When set, lastN/paging run in JS after it.
   */
  textTest: ((text: string) => boolean) | undefined;
}

/**
 * Translates every criterion SQLite can evaluate exactly as `EventFilter.matches` does. Keywords use a
 * literal substring test on the JS-lowercased text: SQLite's own LOWER()/LIKE fold ASCII only, while the
 * in-memory repository folds Unicode (É→é, KELVIN SIGN→k), and `instr` has no wildcards to escape and no
 * LIKE pattern length limit. Returns null when paging starts beyond any possible row.
 */
export function buildEventQuery(table: string, sessionId: string, filter: EventFilter): SqliteEventQuery | null {
  const where: string[] = ['session_id = ?'];
  const params: Array<string | number> = [sessionId];
  if (filter.excludeArchived) where.push('archived = 0');
  if (filter.excludeSynthetic) where.push('synthetic = 0');
  if (filter.from !== undefined) {
    where.push('timestamp >= ?');
    params.push(filter.from.getTime());
  }
  if (filter.to !== undefined) {
    where.push('timestamp <= ?');
    params.push(filter.to.getTime());
  }
  if (filter.messageTypes !== undefined) {
    where.push(`message_type IN (${filter.messageTypes.map(() => '?').join(', ')})`);
    params.push(...filter.messageTypes);
  }
  const terms = [...(filter.keyword === undefined ? [] : [filter.keyword]), ...(filter.keywords ?? [])];
  const keywordsInJs = terms.some(termNeedsJs);
  let textTest: ((text: string) => boolean) | undefined;
  if (keywordsInJs) {
    textTest = (text) => filter.matchesText(text);
  } else if (filter.pattern !== undefined) {
    const pattern = filter.pattern;
    textTest = (text) => pattern.test(text);
  }
  const contains = `instr(${JS_LOWER_FUNCTION}(text), ?) > 0`;
  if (filter.keyword !== undefined && !keywordsInJs) {
    where.push(contains);
    params.push(filter.keyword);
  }
  if (filter.keywords !== undefined && !keywordsInJs) {
    const joiner = filter.matchMode === 'all' ? ' AND ' : ' OR ';
    where.push(`(${filter.keywords.map(() => contains).join(joiner)})`);
    params.push(...filter.keywords);
  }
  if (textTest !== undefined) where.push('text IS NOT NULL');
  if (filter.branch !== undefined) {
    // Prefix test by substring, not LIKE: branch names may contain % and _.
    where.push("(branch IS NULL OR branch = ? OR substr(?, 1, length(branch) + 1) = branch || '.')");
    params.push(filter.branch, filter.branch);
  }

  let tail = 'ORDER BY seq';
  let reverse = false;
  if (textTest === undefined) {
    if (filter.lastN !== undefined) {
      tail = 'ORDER BY seq DESC LIMIT ?';
      params.push(sqlLimit(filter.lastN));
      reverse = true;
    } else if (filter.pageSize !== undefined) {
      const offset = (filter.page ?? 0) * filter.pageSize;
      if (!Number.isSafeInteger(offset)) return null;
      tail = 'ORDER BY seq LIMIT ? OFFSET ?';
      params.push(sqlLimit(filter.pageSize), offset);
    }
  }
  return {
    sql: `SELECT ${EVENT_COLUMNS} FROM ${table} WHERE ${where.join(' AND ')} ${tail}`,
    params,
    reverse,
    textTest,
  };
}

/** A negative LIMIT means "no limit" in SQLite; a number beyond 2^53 would bind as REAL and be rejected. */
function sqlLimit(n: number): number {
  return Number.isSafeInteger(n) ? n : -1;
}

/**
 * The neighbourhoods of a list of events, by position, in two statements. This one reads their bounds from the
 * indexes alone: each event's `seq` from the unique (session_id, id) index, and from the (session_id, seq) index
 * the seq `@radius` events before it (`lo`) and `@radius + 1` after it (`hi`, the last one only telling whether
 * the neighbourhood touches the next one). `@ids` is a JSON array; rows: `anchor` (the event's seq), `lo`, `hi`.
 * The caller merges overlapping bounds, then reads the rows with buildRangeRowsQuery, so an event in several
 * neighbourhoods (about a third of the rows for recall's hits) is read once.
 * A statement per event (three range scans each) cost ~3× as much: with ~70 hits, each statement's own overhead in
 * better-sqlite3 outweighed its rows. `by: 'seq'` takes the events' seqs (`@seqs`, each one of the session's)
 * instead of their ids.
 */
export function buildNeighbourBoundsQuery(table: string, by: 'id' | 'seq' = 'id'): string {
  // By seq (`@seqs`, the session's own, as a search that just ranked them knows them): no lookup of the ids.
  const anchors =
    by === 'id'
      ? `SELECT x.seq AS anchor FROM json_each(@ids) j CROSS JOIN ${table} x WHERE x.session_id = @sessionId AND x.id = j.value`
      : 'SELECT j.value AS anchor FROM json_each(@seqs) j';
  return `WITH a AS MATERIALIZED (
      ${anchors}
    )
    SELECT anchor,
      coalesce((SELECT min(seq) FROM (SELECT seq FROM ${table} WHERE session_id = @sessionId AND seq < a.anchor
        ORDER BY seq DESC LIMIT @radius)), a.anchor) AS lo,
      (SELECT max(seq) FROM (SELECT seq FROM ${table} WHERE session_id = @sessionId AND seq >= a.anchor
        ORDER BY seq LIMIT @radius + 2)) AS hi
    FROM a`;
}

/**
 * The session's events in the seq ranges `@ranges` (a JSON array of [lo, hi] pairs): one range scan each. No
 * ORDER BY (a sort of the wide rows): disjoint ranges given in order come out in log order; the caller checks.
 */
export function buildRangeRowsQuery(table: string): string {
  return `SELECT e.seq, ${EVENT_COLUMNS_OF_E} FROM json_each(@ranges) r CROSS JOIN ${table} e
    WHERE e.session_id = @sessionId AND e.seq BETWEEN json_extract(r.value, '$[0]') AND json_extract(r.value, '$[1]')`;
}
