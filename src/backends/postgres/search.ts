import type { ResolvedEventSearch } from '../../repository/eventSearch.js';
import { eventColumns, neighbourhoodOf } from './eventQuery.js';
import type { PostgresTables } from './schema.js';

export interface SearchQuery {
  sql: string;
  params: unknown[];
}

/** BM25's usual constants: term-frequency saturation and document-length normalisation. */
const K1 = 1.2;
const B = 0.75;

/**
 * How many postings of each query word a session's search reads at most (see buildSearchQuery): exact ranking
 * while no query word is in more events of the session, a bounded cost per word beyond (docs/recall.md).
 */
export const POSTINGS_PER_WORD = 500;

/**
 * The ranked search in one statement, every user value a bound parameter ($1 session, $2 query words,
 * $3 stop-word dictionary or null):
 *
 * 1. `words`: the query's lexemes, by the server's own parser (`to_tsvector('simple')`), so the query is
 *    never read as search syntax. Stop words of the dictionary (its `ts_lexize` returns no lexeme) are
 *    dropped unless nothing else is left: `ts_rank_cd`-style ranking has no inverse document frequency, and
 *    "what", "did", "the" would otherwise decide the order and make every event a candidate.
 * 2. `hits`: events matching any remaining word, restricted to the scope, one row per word each matches (a
 *    row with no word when it matches only through the any-word query). Across a user's sessions they are
 *    found through the GIN index. In one session (`postingsPerWord`, once the postings table exists) they are
 *    the `candidates`: for each word of the query's lexemes, its first `postingsPerWord` postings in the
 *    session by (document length, seq), read from the postings index alone (archived events only), and with
 *    `includeActive` the active window's matching events (a few dozen, read through the window index). For one word with binary term
 *    frequency BM25 falls as the length grows, so these are the word's best events; a search then visits at
 *    most that many events per word however long the session (the GIN path visited every event naming the
 *    word: 13,000 of 100,000 for a speaker's name). A word in no more events than the bound yields every
 *    event naming it, so the candidates, scores and order are exactly the GIN path's; above the bound a long
 *    event that matches only such common words can be missed. The scope's conditions are then applied to
 *    the candidates alone. The any-word
 *    query is `plainto_tsquery` (AND) with its canonical operators rewritten to OR: its text form quotes every
 *    lexeme and lexemes hold no spaces, so only operators are rewritten. Only seq, length and word are kept,
 *    never the tsvector: at 100,000 events a question's candidates' tsvectors outgrew the default work_mem
 *    and spilled to temporary files.
 * 3. BM25 over the candidates: binary term frequency (conversation events are short), document length =
 *    distinct lexemes, and the collection statistics (N, document frequency, average length) taken from the
 *    candidates themselves. That needs no extra pass over the session, and no other session or user
 *    influences a score.
 *
 * With `radius`, the same statement also reads the neighbourhoods of the hits in the session, as
 * findEventNeighbours does (PostgresSessionRepository.searchEventsWithNeighbours).
 */
export function buildSearchQuery(
  t: PostgresTables,
  sessionId: string,
  words: string,
  stopWords: string | null,
  o: ResolvedEventSearch,
  radius?: number,
  postingsPerWord?: number,
): SearchQuery {
  const params: unknown[] = [sessionId, words, stopWords];
  const bind = (value: unknown): string => {
    params.push(value);
    return `$${params.length}`;
  };
  // Shadow prompts (the synthetic user message opening a summary) say nothing about the conversation.
  // One sub-select: the query is computed once (an init plan) and usable as the GIN index condition.
  const viaPostings = o.scope === 'session' && postingsPerWord !== undefined;
  // A session's search reads its candidates from the postings (see above): the GIN condition is then implied.
  const where = viaPostings
    ? ["NOT (e.synthetic AND e.message_type = 'user')"]
    : ['e.text_tsv @@ (SELECT query FROM q)', "NOT (e.synthetic AND e.message_type = 'user')"];
  if (o.userId === undefined) {
    where.push(`EXISTS (SELECT 1 FROM ${t.sessions} s WHERE s.id = $1)`);
  } else {
    const user = bind(o.userId);
    where.push(`EXISTS (SELECT 1 FROM ${t.sessions} s WHERE s.id = $1 AND s.user_id = ${user})`);
    if (o.scope === 'user') where.push(`e.session_id IN (SELECT id FROM ${t.sessions} WHERE user_id = ${user})`);
  }
  if (o.scope === 'session') {
    where.push('e.session_id = $1');
    if (!o.includeActive) where.push('e.archived = TRUE');
  } else if (!o.includeActive) {
    // Only this session's window is in the prompt already; other sessions are searched whole.
    where.push('(e.archived = TRUE OR e.session_id <> $1)');
  }
  if (o.branch === null) {
    where.push('e.branch IS NULL');
  } else {
    // Prefix test without LIKE, so '%' or '_' in a stored branch name is never a wildcard.
    const b = bind(o.branch);
    where.push(`(e.branch IS NULL OR e.branch = ${b} OR left(${b}, length(e.branch) + 1) = e.branch || '.')`);
  }
  const limit = bind(o.limit);
  let candidates = '';
  let from = `${t.events} e`;
  if (viaPostings) {
    const m = bind(postingsPerWord);
    candidates = `candidates AS MATERIALIZED (
      SELECT DISTINCT p.seq FROM (
        SELECT DISTINCT w.lexeme FROM terms, unnest(tsvector_to_array(to_tsvector('simple'::regconfig, terms.lexeme))) AS w(lexeme)
      ) w
      CROSS JOIN LATERAL (
        SELECT p.seq FROM ${t.eventTerms} p WHERE p.session_id = $1 AND p.lexeme = w.lexeme ORDER BY p.dl, p.seq LIMIT ${m}::int8
      ) p${
        o.includeActive
          ? `
      UNION
      SELECT a.seq FROM ${t.events} a
      WHERE a.session_id = $1 AND a.archived = FALSE AND coalesce(a.text_tsv @@ (SELECT query FROM q), FALSE)`
          : ''
      }
    ),
    `;
    from = `candidates c JOIN ${t.events} e ON e.seq = c.seq`;
  }
  // The score is float8 throughout: a bigint plus a numeric literal would be numeric arithmetic, an eighth of the
  // statement at 100,000 events; its operands (integers, halves, quarters) are exact in both types.
  const ctes = `WITH words AS MATERIALIZED (
      SELECT DISTINCT lexeme, coalesce(ts_lexize($3::regdictionary, lexeme) = '{}'::text[], FALSE) AS stop
      FROM unnest(to_tsvector('simple'::regconfig, $2::text))
    ),
    terms AS MATERIALIZED (
      SELECT lexeme, plainto_tsquery('simple'::regconfig, lexeme) AS tq FROM words
      WHERE NOT stop OR NOT EXISTS (SELECT 1 FROM words WHERE NOT stop)
    ),
    q AS MATERIALIZED (
      SELECT regexp_replace(plainto_tsquery('simple'::regconfig, string_agg(lexeme, ' '))::text,
        ' (&|<->|<[0-9]+>) ', ' | ', 'g')::tsquery AS query
      FROM terms
    ),
    ${candidates}hits AS MATERIALIZED (
      SELECT e.seq, length(e.text_tsv) AS dl, t.lexeme
      FROM ${from} LEFT JOIN terms t ON e.text_tsv @@ t.tq
      WHERE ${where.join(' AND ')}
    ),
    df AS MATERIALIZED (
      SELECT lexeme, count(*)::float8 AS df FROM hits WHERE lexeme IS NOT NULL GROUP BY lexeme
    ),
    stats AS MATERIALIZED (
      SELECT count(*)::float8 AS n, coalesce(avg(dl), 1)::float8 AS avgdl FROM (SELECT DISTINCT seq, dl FROM hits) c
    ),
    ranked AS ${radius === undefined ? '' : 'MATERIALIZED '}(
      SELECT h.seq, sum(ln(1 + (s.n - d.df + 0.5) / (d.df + 0.5))
        * ${K1 + 1} / (1 + ${K1} * (${1 - B} + ${B} * h.dl::float8 / greatest(s.avgdl, 1)))) AS score
      FROM hits h JOIN df d ON d.lexeme = h.lexeme, stats s GROUP BY h.seq
      ORDER BY score DESC, h.seq LIMIT ${limit}
    )`;
  if (radius === undefined) {
    const sql = `${ctes}
    SELECT ${eventColumns('e.')}, r.score
    FROM ranked r JOIN ${t.events} e ON e.seq = r.seq
    ORDER BY r.score DESC, r.seq`;
    return { sql, params };
  }
  // With the neighbourhoods of the hits in the session (`$1`), read as findEventNeighbours reads them, in the
  // same statement: kind 0 rows are the hits (score set), kind 1 rows the neighbourhoods (ord: the hit's rank).
  // Unordered: sorting the wide rows cost the server more than ordering the hits costs the client.
  const r = bind(radius);
  const sql = `${ctes}
    SELECT 0 AS kind, r.score, NULL::int8 AS ord, NULL::int AS part, r.seq, ${eventColumns('e.')}
    FROM ranked r JOIN ${t.events} e ON e.seq = r.seq
    UNION ALL
    SELECT 1, NULL::float8, h.ord, w.* FROM (
      SELECT r.seq, row_number() OVER (ORDER BY r.score DESC, r.seq) AS ord
      FROM ranked r JOIN ${t.events} hit ON hit.seq = r.seq WHERE hit.session_id = $1
    ) h
    CROSS JOIN LATERAL ${neighbourhoodOf(t.events, 'h.seq', `${r}::int`, true)} w`;
  return { sql, params };
}
