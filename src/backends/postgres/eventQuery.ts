import type { EventFilter } from '../../filter/EventFilter.js';
import { escapeLike } from '../../repository/eventCodec.js';
import { termNeedsJs } from '../../repository/storedText.js';

/**
 * The event's time as whole milliseconds since the epoch (int8, read as a string): the client then builds no
 * Date per row through the driver's timestamptz text parser (about 5 % of a recall read's client CPU, measured
 * in benchmarks/assemble-split.ts). `date_trunc` drops the microseconds as that parser did; the cast rounds
 * the exact (numeric) or near-exact (float8, before PostgreSQL 14) product to the integer it is.
 */
export function timestampMs(alias: string): string {
  return `(extract(epoch FROM date_trunc('milliseconds', ${alias}"timestamp")) * 1000)::int8 AS timestamp_ms`;
}

/**
 * An event's columns in the order the repository decodes them from rows read as arrays (`rowMode: 'array'`:
 * the driver then builds no object per row, 15–20 % of a neighbourhood read's client CPU, measured in the same
 * run). The session's id comes last, so that a read that bound it (the neighbourhood) leaves it out.
 */
export function eventColumns(alias: string = '', withSession: boolean = true): string {
  const a = alias;
  return `${a}id, ${a}message_type, ${a}text, ${a}data::text AS data, ${a}synthetic, ${a}archived, ${a}branch,
  ${a}metadata::text AS metadata, ${timestampMs(a)}${withSession ? `, ${a}session_id` : ''}`;
}

export const EVENT_COLUMNS = eventColumns();

const MAX_BIGINT = 2n ** 63n - 1n;

/** A limit beyond bigint (a huge but integral lastN or pageSize) means "all of them": capped, bound as text. */
const bigintLimit = (n: number): string => (BigInt(n) > MAX_BIGINT ? MAX_BIGINT : BigInt(n)).toString();

export interface EventQuery {
  sql: string;
  params: unknown[];
  /** lastN is read newest-first (an index scan that stops after N rows); the caller restores log order. */
  reversed: boolean;
  /** The store cannot evaluate the text criteria: the caller applies them, then lastN/paging itself. */
  windowInJs: boolean;
}

/**
 * The SQL for `findEvents`: every criterion the store can evaluate is a bound parameter in the WHERE clause;
 * only the table name (from the validated prefix) is interpolated. `ESCAPE E'\\'` does not depend on
 * `standard_conforming_strings`.
 */
export function buildEventQuery(table: string, sessionId: string, filter: EventFilter): EventQuery {
  const params: unknown[] = [sessionId];
  const bind = (value: unknown): string => {
    params.push(value);
    return `$${params.length}`;
  };
  const where = ['session_id = $1'];
  if (filter.excludeArchived) where.push('archived = FALSE');
  if (filter.excludeSynthetic) where.push('synthetic = FALSE');
  if (filter.from !== undefined) where.push(`"timestamp" >= ${bind(filter.from)}`);
  if (filter.to !== undefined) where.push(`"timestamp" <= ${bind(filter.to)}`);
  if (filter.messageTypes !== undefined) where.push(`message_type = ANY(${bind([...filter.messageTypes])}::text[])`);
  // NUL and lone surrogates are stored encoded (see storedText.ts), and a lone surrogate matches half of an
  // emoji in JavaScript: keywords holding one are evaluated in JS over the decoded text, like a pattern.
  const textInJs = filter.pattern !== undefined || [filter.keyword ?? '', ...(filter.keywords ?? [])].some(termNeedsJs);
  // Keywords are already lower-cased by EventFilter with the same toLowerCase() that produced text_lc.
  const like = (keyword: string) => `text_lc LIKE ${bind('%' + escapeLike(keyword) + '%')} ESCAPE E'\\\\'`;
  if (textInJs) where.push('text IS NOT NULL');
  else if (filter.keyword !== undefined) where.push(like(filter.keyword));
  if (!textInJs && filter.keywords !== undefined) {
    where.push(`(${filter.keywords.map(like).join(filter.matchMode === 'all' ? ' AND ' : ' OR ')})`);
  }
  if (filter.branch !== undefined) {
    // Prefix test without LIKE, so '%' or '_' in a stored branch name is never a wildcard.
    const b = bind(filter.branch);
    where.push(`(branch IS NULL OR branch = ${b} OR left(${b}, length(branch) + 1) = branch || '.')`);
  }
  let sql = `SELECT ${EVENT_COLUMNS} FROM ${table} WHERE ${where.join(' AND ')}`;
  const windowInJs = textInJs;
  let reversed = false;
  if (!windowInJs && filter.lastN !== undefined) {
    sql += ` ORDER BY seq DESC LIMIT ${bind(bigintLimit(filter.lastN))}::bigint`;
    reversed = true;
  } else if (!windowInJs && filter.pageSize !== undefined) {
    // The offset can exceed 2^53: computed exactly, capped at bigint's maximum, bound as text.
    const offset = BigInt(filter.page ?? 0) * BigInt(filter.pageSize);
    const capped = offset > MAX_BIGINT ? MAX_BIGINT : offset;
    sql += ` ORDER BY seq LIMIT ${bind(bigintLimit(filter.pageSize))}::bigint OFFSET ${bind(capped.toString())}::bigint`;
  } else {
    sql += ' ORDER BY seq';
  }
  return { sql, params, reversed, windowInJs };
}

/**
 * The neighbourhoods of several events in one statement, read by position: for each id of `$2` (in the
 * session `$1`), up to `$3` events before it (part 0) and the event itself with up to `$3 + 1` after it (part 1;
 * the last one only tells whether the neighbourhood touches the next one). Each half is a range scan of the
 * (session_id, seq) index, so the cost does not grow with the log. Columns: ord, part, seq, then `eventColumns`
 * without the session's id (it is `$1`).
 *
 * Neighbourhoods of near hits overlap (about a quarter of the rows at 10,000 events are repeats), but sending
 * each event once cost the server more than it saved the client: a variant that returned the layout and the
 * distinct events as separate rows took 2.8–3.0 ms instead of 2.2 ms per read (client CPU 1.9 vs 2.1 ms).
 * The client decodes each event once instead (PostgresSessionRepository.findEventNeighbours).
 */
export function buildNeighbourQuery(table: string): string {
  return `SELECT h.ord, w.* FROM unnest($2::text[]) WITH ORDINALITY AS h(id, ord)
    JOIN ${table} hit ON hit.session_id = $1 AND hit.id = h.id
    CROSS JOIN LATERAL ${neighbourhoodOf(table, 'hit.seq', '$3::int', false)} w`;
}

/**
 * The neighbourhood of the event at `seq` in the session `$1` (a LATERAL subquery): part 0 up to `radius` events
 * before it, part 1 the event and up to `radius + 1` after it; columns part, seq, then `eventColumns`.
 */
export function neighbourhoodOf(table: string, seq: string, radius: string, withSession: boolean): string {
  return `(
      (SELECT 0 AS part, e.seq, ${eventColumns('e.', withSession)} FROM ${table} e
        WHERE e.session_id = $1 AND e.seq < ${seq} ORDER BY e.seq DESC LIMIT ${radius})
      UNION ALL
      (SELECT 1 AS part, e.seq, ${eventColumns('e.', withSession)} FROM ${table} e
        WHERE e.session_id = $1 AND e.seq >= ${seq} ORDER BY e.seq LIMIT ${radius} + 2)
    )`;
}
