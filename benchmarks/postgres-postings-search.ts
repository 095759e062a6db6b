// What PostgreSQL's session search scored from the postings alone (schema migration 13) costs and changes, side by
// side with the two statements before it, on the same session in the same run: the candidate statement (migration
// 12: the postings as candidates, each candidate's event row read to filter and match it) and the GIN statement
// that visits every event matching a word (the exact BM25 over the session's matches). For each archive size a
// session is loaded the way a conversation gets there (`fillArchive`), then every question is asked of the three
// statements, the order of the first two alternating: wall time of each (the statement with its neighbourhoods,
// as a turn reads it), and the share of the GIN statement's best hits (their texts: the store cycles LoCoMo's
// turns, so one text has many events) that each bounded statement returns.
//
//   RECORDED_DIR=… node --conditions=session-compaction-source --import tsx benchmarks/postgres-postings-search.ts \
//        [--sizes 10000,100000] [--queries 200] [--limit 22] [--radius 1]
//
// PostgreSQL from PG_URL (skipped with a message when unreachable). Text: LoCoMo turns and questions
// ($RECORDED_DIR or $LOCOMO), else a seeded synthetic chat. Writes docs/benchmarks/postgres-postings-search.md
// and prints it.
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { createHash, randomBytes } from 'node:crypto';
import pg from 'pg';
import { DefaultSessionService, PostgresSessionRepository, createDefaultLogger } from 'session-compaction';
import { buildSearchQuery, POSTINGS_PER_WORD, type PostingsSearch } from '../src/backends/postgres/search.js';
import { postgresTables } from '../src/backends/postgres/schema.js';
import { resolveEventSearchOptions, searchWords } from '../src/repository/eventSearch.js';
import { arg } from './support/args.js';
import { chatCorpus } from './support/chatCorpus.js';
import { fillArchive } from './support/fillArchive.js';
import { dropPostgresStore } from './support/postgres.js';

const SIZES = arg('sizes', '10000,100000').split(',').map(Number);
const QUERIES = Number(arg('queries', '200'));
const LIMIT = Number(arg('limit', '22'));
const RADIUS = Number(arg('radius', '1'));
const PG_URL = process.env.PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const logger = createDefaultLogger({ silent: true });
const { source, turns, questions } = chatCorpus(
  process.env.LOCOMO ?? path.resolve(process.env.RECORDED_DIR ?? '.', 'locomo/locomo10.json'),
);

/** The three statements: how each reads the postings (undefined: it does not). */
const STATEMENTS: Record<'scored' | 'candidate' | 'gin', PostingsSearch | undefined> = {
  scored: { perWord: POSTINGS_PER_WORD, searchableOnly: true },
  candidate: { perWord: POSTINGS_PER_WORD, searchableOnly: false },
  gin: undefined,
};
type Statement = keyof typeof STATEMENTS;

const quantile = (sorted: readonly number[], q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
const ms = (n: number) => (n < 10 ? n.toFixed(2) : n.toFixed(1));
const pct = (n: number) => `${(100 * n).toFixed(1)} %`;
const mean = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);

/** The share of the distinct texts among `exact`'s best `k` that `other`'s best `k` hold too. */
function sharedTexts(other: readonly string[], exact: readonly string[], k: number): number {
  const want = new Set(exact.slice(0, k));
  if (want.size === 0) return 1;
  const got = new Set(other.slice(0, k));
  return [...want].filter((text) => got.has(text)).length / want.size;
}

interface SizeRow {
  size: number;
  times: Record<Statement, number[]>;
  /** Per question, the share of the GIN statement's best 8 and best `LIMIT` texts found. */
  best8: Record<'scored' | 'candidate', number[]>;
  all: Record<'scored' | 'candidate', number[]>;
}

async function measureSize(pool: pg.Pool, size: number): Promise<SizeRow> {
  const prefix = `bench_${randomBytes(4).toString('hex')}`;
  const tables = postgresTables(prefix);
  const repository = new PostgresSessionRepository({ pool, prefix, logger });
  try {
    process.stderr.write(`loading ${size.toLocaleString('en')} archived events…\n`);
    await fillArchive(new DefaultSessionService(repository, { logger }), repository, 's', size - 20, 20, turns);
    // As autovacuum would after such a load: the window reads and the postings' index-only scans need it.
    for (const table of [tables.events, tables.sessions, tables.eventTerms]) await pool.query(`VACUUM (ANALYZE) ${table}`);
    const options = resolveEventSearchOptions({ limit: LIMIT, includeActive: true });
    /** The texts of the hits, best first (ties in log order, as the repository orders them). */
    const search = async (statement: Statement, question: string): Promise<string[]> => {
      const q = buildSearchQuery(tables, 's', searchWords(question), 'english_stem', options, RADIUS, STATEMENTS[statement]);
      // Prepared, as the repository prepares its reads (preparedStatements).
      const name = `pps_${createHash('sha256').update(q.sql).digest('hex').slice(0, 24)}`;
      const { rows } = await pool.query<unknown[]>({ name, text: q.sql, values: q.params, rowMode: 'array' });
      // Columns: kind, score, ord, part, seq, then the event's (id, type, text, …); kind 0 rows are the hits.
      return rows
        .filter((row) => Number(row[0]) === 0)
        .sort((a, b) => Number(b[1]) - Number(a[1]) || Number(a[4]) - Number(b[4]))
        .map((row) => String(row[7]));
    };
    const asked = questions.slice(0, QUERIES);
    for (const q of questions.slice(-50)) for (const s of Object.keys(STATEMENTS) as Statement[]) await search(s, q);
    const row: SizeRow = {
      size,
      times: { scored: [], candidate: [], gin: [] },
      best8: { scored: [], candidate: [] },
      all: { scored: [], candidate: [] },
    };
    for (const [i, q] of asked.entries()) {
      if (i % 50 === 0) process.stderr.write(`  ${size.toLocaleString('en')} events: question ${i + 1} of ${asked.length}\n`);
      const order: Statement[] = i % 2 === 0 ? ['scored', 'candidate', 'gin'] : ['candidate', 'scored', 'gin'];
      const hits = {} as Record<Statement, string[]>;
      for (const s of order) {
        const start = performance.now();
        hits[s] = await search(s, q);
        row.times[s].push(performance.now() - start);
      }
      for (const s of ['scored', 'candidate'] as const) {
        row.best8[s].push(sharedTexts(hits[s], hits.gin, 8));
        row.all[s].push(sharedTexts(hits[s], hits.gin, LIMIT));
      }
    }
    for (const times of Object.values(row.times)) times.sort((a, b) => a - b);
    return row;
  } finally {
    await dropPostgresStore(pool, prefix);
  }
}

const pool = new pg.Pool({ connectionString: PG_URL, max: 2 });
try {
  await pool.query('SELECT 1');
} catch {
  await pool.end();
  process.stderr.write('PostgreSQL unreachable: skipped\n');
  process.exit(0);
}
const load = os.loadavg()[0]!;
const rows: SizeRow[] = [];
try {
  for (const size of SIZES) rows.push(await measureSize(pool, size));
} finally {
  await pool.end();
}
const time = (xs: readonly number[]) => `${ms(quantile(xs, 0.5))} / ${ms(quantile(xs, 0.95))}`;
const out =
  [
    '# PostgreSQL: a session search scored from the postings',
    '',
    `Generated by \`benchmarks/postgres-postings-search.ts\` on ${os.cpus().length} × ${os.cpus()[0]?.model.split(' ').slice(0, 2).join(' ') ?? 'CPU'}, Node ${process.version}, ${new Date().toISOString().slice(0, 10)}. Text: ${source}.`,
    `Load average (1 min) at the start: ${load.toFixed(2)} (the machine is shared: figures are wall times).`,
    '',
    `${Math.min(QUERIES, questions.length)} questions per size, limit ${LIMIT}, radius ${RADIUS}, the question's words searched with the active window`,
    "(`includeActive`), as a turn asks. Each statement's time is the statement with its neighbourhoods, p50 / p95 ms.",
    "The shares are of the texts among the GIN statement's best hits (the exact BM25 over every match) that the",
    "bounded statement's best hits hold, averaged over the questions.",
    '',
    `| archived events | scored from the postings (ms) | candidate statement (ms) | GIN, every match (ms) | best 8: scored | best 8: candidate | all ${LIMIT}: scored | all ${LIMIT}: candidate |`,
    '|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...rows.map(
      (r) =>
        `| ${r.size.toLocaleString('en')} | ${time(r.times.scored)} | ${time(r.times.candidate)} | ${time(r.times.gin)} | ${pct(mean(r.best8.scored))} | ${pct(mean(r.best8.candidate))} | ${pct(mean(r.all.scored))} | ${pct(mean(r.all.candidate))} |`,
    ),
  ].join('\n') + '\n';
const dir = path.resolve('docs/benchmarks');
mkdirSync(dir, { recursive: true });
writeFileSync(path.join(dir, 'postgres-postings-search.md'), out);
process.stdout.write(out);
