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
 * How many hits per requested one a search scored from the postings completes with the words it found past their
 * bound (see buildSearchQuery). Measured at 100,000 events (LoCoMo cycled, limit 22), the share of the texts of the
 * best 8 of the search that visits every match: 68.5 % completing 4 × the limit; with an earlier version of the
 * step, 60.0 % without completing, 69.0 % with 4 ×, 70.0 % with 10 × (docs/recall.md).
 */
export const COMPLETED_PER_HIT = 4;

/** How a session's search may read the postings table, by what the schema has (see buildSearchQuery). */
export interface PostingsSearch {
  /** At most this many postings per query word (POSTINGS_PER_WORD). */
  perWord: number;
  /**
   * The postings hold exactly the events a main-line search returns (SEARCHABLE_POSTINGS_SCHEMA_VERSION):
   * archived, on no branch, no shadow prompt. Hits are then scored from the postings alone.
   */
  searchableOnly: boolean;
}

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
 *    found through the GIN index, and so are a branch's. In one session on the main line (`postings`, once the
 *    postings table exists) they are the `candidates`: for each word of the query's lexemes, its first
 *    `perWord` postings in the session by (document length, seq), read from the postings index alone, and with
 *    `includeActive` the active window's matching events (a few dozen, read through the window index). For one word with binary term
 *    frequency BM25 falls as the length grows, so these are the word's best events; a search then visits at
 *    most that many events per word however long the session (the GIN path visited every event naming the
 *    word: 13,000 of 100,000 for a speaker's name). A word in no more events than the bound yields every
 *    event naming it, so the candidates, scores and order are exactly the GIN path's; above the bound a long
 *    event that matches only such common words can be missed. The scope's conditions are then applied to
 *    the candidates alone; once the postings hold only searchable events (`searchableOnly`), no condition is
 *    left to apply, so the hits are the postings themselves and no event row is read before the ranking
 *    (a word then counts for an event among its first `perWord` postings; see 3). The any-word
 *    query is `plainto_tsquery` (AND) with its canonical operators rewritten to OR: its text form quotes every
 *    lexeme and lexemes hold no spaces, so only operators are rewritten. Only seq, length and word are kept,
 *    never the tsvector: at 100,000 events a question's candidates' tsvectors outgrew the default work_mem
 *    and spilled to temporary files.
 * 3. BM25 over the candidates: binary term frequency (conversation events are short), document length =
 *    distinct lexemes, and the collection statistics (N, document frequency, average length) taken from the
 *    candidates themselves. That needs no extra pass over the session, and no other session or user
 *    influences a score. Scored from the postings, the best COMPLETED_PER_HIT × limit hits are completed with
 *    the words past their bound that they hold (one primary-key probe each) and ranked again.
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
  postings?: PostingsSearch,
): SearchQuery {
  const params: unknown[] = [sessionId, words, stopWords];
  const bind: Bind = (value) => {
    params.push(value);
    return `$${params.length}`;
  };
  // A branch search goes through the GIN index: since SEARCHABLE_POSTINGS_SCHEMA_VERSION branched events have no
  // postings (branches are short-lived side lines).
  const viaPostings = o.scope === 'session' && postings !== undefined && o.branch === null;
  const scored = viaPostings && postings.searchableOnly;
  const source = scored
    ? postingsHits(t, o, bind, postings.perWord)
    : eventHits(t, o, bind, viaPostings ? postings.perWord : undefined);
  const limit = bind(o.limit);
  const materialized = radius === undefined ? '' : 'MATERIALIZED ';
  const ranking = scored
    ? completedRanking(t, bind, limit, postings.perWord, materialized)
    : `ranked AS ${materialized}(
      SELECT h.seq, sum(${termScore('h.dl')}) AS score
      FROM hits h JOIN df d ON d.lexeme = h.lexeme, stats s GROUP BY h.seq
      ORDER BY score DESC, h.seq LIMIT ${limit}
    )`;
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
    ${source},
    df AS MATERIALIZED (
      SELECT lexeme, count(*)::float8 AS df FROM hits WHERE lexeme IS NOT NULL GROUP BY lexeme
    ),
    stats AS MATERIALIZED (
      SELECT count(*)::float8 AS n, coalesce(avg(dl), 1)::float8 AS avgdl FROM (SELECT DISTINCT seq, dl FROM hits) c
    ),
    ${ranking}`;
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
  // A hit of the session is the first row of its own neighbourhood: its kind 0 row leaves the event's columns null
  // (the client takes the event from there), so the wide row is neither sent nor parsed twice. A hit of another
  // session (a search across the user's sessions) has no neighbourhood here and comes whole.
  const r = bind(radius);
  const sql = `${ctes}
    SELECT 0 AS kind, r.score, NULL::int8 AS ord, NULL::int AS part, r.seq, ${eventColumns('o.')}
    FROM ranked r JOIN ${t.events} e ON e.seq = r.seq LEFT JOIN ${t.events} o ON o.seq = e.seq AND e.session_id <> $1
    UNION ALL
    SELECT 1, NULL::float8, h.ord, w.* FROM (
      SELECT r.seq, row_number() OVER (ORDER BY r.score DESC, r.seq) AS ord
      FROM ranked r JOIN ${t.events} hit ON hit.seq = r.seq WHERE hit.session_id = $1
    ) h
    CROSS JOIN LATERAL ${neighbourhoodOf(t.events, 'h.seq', `${r}::int`, true)} w`;
  return { sql, params };
}

/** Binds a value as the statement's next parameter and returns its placeholder. */
type Bind = (value: unknown) => string;

// Shadow prompts (the synthetic user message opening a summary) say nothing about the conversation.
const NOT_SHADOW = "NOT (e.synthetic AND e.message_type = 'user')";

/**
 * The lexemes the server's parser makes of each query word (`w.lexeme`): a hyphenated word's parts beside it, as
 * the any-word query holds them.
 */
const TERM_PARTS = "terms, unnest(tsvector_to_array(to_tsvector('simple'::regconfig, terms.lexeme))) AS w(lexeme)";

/**
 * The bound: word `w.lexeme`'s first `m` (a placeholder) postings in session `$1` by (document length, seq), read from
 * the postings index alone: for one word with binary term frequency, its best events.
 */
function firstPostings(t: PostgresTables, m: string): string {
  return `(
        SELECT p.seq, p.dl FROM ${t.eventTerms} p WHERE p.session_id = $1 AND p.lexeme = w.lexeme
        ORDER BY p.dl, p.seq LIMIT ${m}::int8
      )`;
}

/** That session `$1` exists (and belongs to `user`, a placeholder, when given). */
function sessionExists(t: PostgresTables, user: string | undefined): string {
  return `EXISTS (SELECT 1 FROM ${t.sessions} s WHERE s.id = $1${user === undefined ? '' : ` AND s.user_id = ${user}`})`;
}

/**
 * One BM25 term over `df` d and `stats` s for a document of length `dl` (binary term frequency). Float8 throughout:
 * a bigint plus a numeric literal would be numeric arithmetic, an eighth of the statement at 100,000 events; its
 * operands (integers, halves, quarters) are exact in both types.
 */
function termScore(dl: string): string {
  return `ln(1 + (s.n - d.df + 0.5) / (d.df + 0.5)) * ${K1 + 1} / (1 + ${K1} * (${1 - B} + ${B} * ${dl}::float8 / greatest(s.avgdl, 1)))`;
}

/**
 * The `hits` of a session's main-line search scored from the postings alone: they hold exactly the archived events
 * this search may return, so no event row is read before the ranking. A query word matches an event with a posting
 * for it among the word's first `perWord`. The lexemes the any-word query adds (the parts of a hyphenated word,
 * stop words among them) find events too, counted in N and the average length but matching no word (a null
 * lexeme), as on the GIN path.
 */
function postingsHits(t: PostgresTables, o: ResolvedEventSearch, bind: Bind, perWord: number): string {
  const m = bind(perWord);
  const exists = sessionExists(t, o.userId === undefined ? undefined : bind(o.userId));
  const active = `
      UNION ALL
      SELECT e.seq, length(e.text_tsv), t.lexeme FROM ${t.events} e LEFT JOIN terms t ON e.text_tsv @@ t.tq
      WHERE e.session_id = $1 AND e.archived = FALSE AND e.text_tsv @@ (SELECT query FROM q) AND e.branch IS NULL
        AND ${NOT_SHADOW} AND ${exists}`;
  return `hits AS MATERIALIZED (
      SELECT p.seq, p.dl, CASE WHEN w.term THEN w.lexeme END AS lexeme FROM (
        SELECT lexeme, bool_or(term) AS term FROM (
          SELECT lexeme, TRUE AS term FROM terms
          UNION ALL
          SELECT w.lexeme, FALSE FROM ${TERM_PARTS}
        ) l GROUP BY lexeme
      ) w
      CROSS JOIN LATERAL ${firstPostings(t, m)} p
      WHERE ${exists}${o.includeActive ? active : ''}
    )`;
}

/**
 * The `hits` read from the events (and `candidates` before them with `perWord`: the postings as candidates, the
 * filters applied to their events); see buildSearchQuery.
 */
function eventHits(t: PostgresTables, o: ResolvedEventSearch, bind: Bind, perWord: number | undefined): string {
  // One sub-select: the query is computed once (an init plan) and usable as the GIN index condition.
  // A session's search reads its candidates from the postings (see above): the GIN condition is then implied.
  const where = perWord !== undefined ? [NOT_SHADOW] : ['e.text_tsv @@ (SELECT query FROM q)', NOT_SHADOW];
  if (o.userId === undefined) {
    where.push(sessionExists(t, undefined));
  } else {
    const user = bind(o.userId);
    where.push(sessionExists(t, user));
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
  const hits = (from: string) => `hits AS MATERIALIZED (
      SELECT e.seq, length(e.text_tsv) AS dl, t.lexeme
      FROM ${from} LEFT JOIN terms t ON e.text_tsv @@ t.tq
      WHERE ${where.join(' AND ')}
    )`;
  if (perWord === undefined) return hits(`${t.events} e`);
  const m = bind(perWord);
  const active = `
      UNION
      SELECT a.seq FROM ${t.events} a
      WHERE a.session_id = $1 AND a.archived = FALSE AND coalesce(a.text_tsv @@ (SELECT query FROM q), FALSE)`;
  return `candidates AS MATERIALIZED (
      SELECT DISTINCT p.seq FROM (
        SELECT DISTINCT w.lexeme FROM ${TERM_PARTS}
      ) w
      CROSS JOIN LATERAL ${firstPostings(t, m)} p${o.includeActive ? active : ''}
    ),
    ${hits(`candidates c JOIN ${t.events} e ON e.seq = c.seq`)}`;
}

/**
 * `ranked` for hits scored from the postings. A hit's word may sit past that word's first `perWord` postings and was
 * not counted: the best hits by what was counted (COMPLETED_PER_HIT times the limit) are completed with a
 * primary-key probe for each such word they were not found with (all of the key is known: session, word, length,
 * seq), then ranked again. What a probe finds is added to the score counted, so a score nothing was added to is
 * summed as on the other paths.
 */
function completedRanking(t: PostgresTables, bind: Bind, limit: string, perWord: number, materialized: string): string {
  const m = bind(perWord);
  const k = bind(COMPLETED_PER_HIT);
  return `cut AS MATERIALIZED (
      SELECT lexeme FROM df WHERE df >= ${m}::float8
    ),
    partial AS MATERIALIZED (
      SELECT h.seq, min(h.dl) AS dl, sum(${termScore('h.dl')}) AS score
      FROM hits h JOIN df d ON d.lexeme = h.lexeme, stats s GROUP BY h.seq
      ORDER BY score DESC, h.seq LIMIT ${limit} * ${k}::int8
    ),
    extra AS MATERIALIZED (
      SELECT x.seq, x.dl, x.lexeme FROM (
        SELECT r.seq, r.dl, c.lexeme FROM partial r CROSS JOIN cut c
        EXCEPT
        SELECT h.seq, h.dl, h.lexeme FROM hits h JOIN partial r ON r.seq = h.seq
      ) x
      WHERE EXISTS (
        SELECT 1 FROM ${t.eventTerms} p WHERE p.session_id = $1 AND p.lexeme = x.lexeme AND p.dl = x.dl AND p.seq = x.seq)
    ),
    bonus AS MATERIALIZED (
      SELECT x.seq, sum(${termScore('x.dl')}) AS score FROM extra x JOIN df d ON d.lexeme = x.lexeme, stats s GROUP BY x.seq
    ),
    ranked AS ${materialized}(
      SELECT r.seq, r.score + coalesce(b.score, 0) AS score
      FROM partial r LEFT JOIN bonus b ON b.seq = r.seq
      ORDER BY score DESC, r.seq LIMIT ${limit}
    )`;
}
