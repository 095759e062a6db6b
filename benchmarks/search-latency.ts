// Search latency and recall on a 10,000-event session: full-text search pushed down to SQLite FTS5 and
// PostgreSQL, next to the in-process BM25 retriever and the old keyword filter (findEvents with
// EventFilter keywords), in the same run on the same data.
//
//   npx tsx benchmarks/search-latency.ts [--events 10000] [--queries 300] [--locomo path/to/locomo10.json]
//
// Data: the LoCoMo conversations (needs the recorded data; default $RECORDED_DIR/locomo/locomo10.json
// or $LOCOMO). The big session holds their turns, repeated to --events, all archived but the last 20; the ten
// conversations are stored as further sessions of the same database, so the index is shared as in production.
// Queries: LoCoMo's questions (adversarial ones left out). Latency: per query, wall time of the call,
// p50/p95/max after 20 warm-up queries. Recall: each conversation searched with its own questions,
// "hit@10" = share of questions with an evidence turn among the first 10 hits.
// Writes docs/benchmarks/search-latency.md and prints it.
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import {
  Bm25Retriever,
  CompactionResult,
  DefaultSessionService,
  EventFilter,
  InMemorySessionRepository,
  PostgresSessionRepository,
  Session,
  SessionEvent,
  SqliteSessionRepository,
  createDefaultLogger,
  type Retriever,
  type SessionRepository,
  RepositoryRetriever,
} from 'session-compaction';
import { isBatchAppendRepository } from 'session-compaction/spi';
import { loadLocomo } from './src/loaders/loadLocomo.js';
import { toMessage } from './src/recorded/toMessage.js';
import type { RecordedSession } from './src/recorded/RecordedSession.js';
import { arg } from './support/args.js';
import { dropPostgresStore } from './support/postgres.js';

const EVENTS = Number(arg('events', '10000'));
const QUERIES = Number(arg('queries', '300'));
const LOCOMO = arg('locomo', process.env.LOCOMO ?? path.resolve(process.env.RECORDED_DIR ?? '.', 'locomo/locomo10.json'));
const PG_URL = process.env.PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const BIG = 'big-session';
const USER = 'bench-user';
const logger = createDefaultLogger({ silent: true });

if (!existsSync(LOCOMO)) {
  console.error(`LoCoMo data not found at ${LOCOMO} (pass --locomo or set LOCOMO)`);
  process.exit(1);
}
const conversations = loadLocomo(LOCOMO).sessions;
const probes = conversations.flatMap((s) =>
  (s.probes ?? [])
    .filter((p) => p.category !== 'adversarial' && p.evidenceEventIndexes.length > 0)
    .map((p) => ({ session: s.sessionId, question: p.question, evidence: new Set(p.evidenceEventIndexes.map((i) => `e${i}`)) })),
);
const questions = probes.slice(0, QUERIES).map((p) => p.question);
const turns = conversations.flatMap((s) => s.events);

async function load(repo: SessionRepository): Promise<void> {
  const service = new DefaultSessionService(repo, { logger });
  const write = async (id: string, events: RecordedSession['events'], count: number) => {
    await repo.save(Session.create({ id, userId: USER }));
    const batch: SessionEvent[] = [];
    for (let i = 0; i < count; i++) {
      batch.push(SessionEvent.create({ sessionId: id, id: `e${i}`, message: toMessage(events[i % events.length]!) }));
    }
    if (isBatchAppendRepository(repo)) await repo.appendEvents(id, batch);
    else for (const e of batch) await repo.appendEvent(e);
    // Everything but the last 20 events is archived: recall searches the archive.
    await service.compact(
      id,
      () => true,
      async (r) => new CompactionResult(r.events.slice(-20), r.events.slice(0, -20), 0),
    );
  };
  for (const s of conversations) await write(s.sessionId, s.events, s.events.length);
  await write(BIG, turns, EVENTS);
}

interface Row {
  contender: string;
  p50: number;
  p95: number;
  max: number;
  meanHits: number;
  first?: number;
  hitAt10?: number;
  /** CPU time of this process per query (in-process and SQLite: the search itself runs here). */
  cpuP50: number;
  cpuP95: number;
  /** PostgreSQL: mean CPU time of the server backend per query (from /proc; the search runs there). */
  serverCpuMean?: number;
}

/** CPU ms (user + system) of a PostgreSQL backend so far, read from /proc when the server runs on this machine. */
function backendCpuMs(pid: number): number | null {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    // utime and stime are fields 14 and 15 of stat, in clock ticks (100 per second on Linux).
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
  } catch {
    return null;
  }
}

const quantile = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;

async function measure(contender: string, run: (q: string) => Promise<number>, serverCpu?: () => number | null): Promise<Row> {
  const t0 = performance.now();
  await run(questions[0]!);
  const first = performance.now() - t0;
  for (const q of questions.slice(0, 20)) await run(q);
  const times: number[] = [];
  const cpu: number[] = [];
  let hits = 0;
  const serverStart = serverCpu?.() ?? null;
  for (const q of questions) {
    const c = process.cpuUsage();
    const t = performance.now();
    hits += await run(q);
    times.push(performance.now() - t);
    const used = process.cpuUsage(c);
    cpu.push((used.user + used.system) / 1000);
  }
  const serverEnd = serverCpu?.() ?? null;
  times.sort((a, b) => a - b);
  cpu.sort((a, b) => a - b);
  return {
    contender,
    p50: quantile(times, 0.5),
    p95: quantile(times, 0.95),
    max: times.at(-1)!,
    meanHits: hits / questions.length,
    first,
    cpuP50: quantile(cpu, 0.5),
    cpuP95: quantile(cpu, 0.95),
    ...(serverStart !== null && serverEnd !== null ? { serverCpuMean: (serverEnd - serverStart) / questions.length } : {}),
  };
}

async function recall(retriever: Retriever): Promise<number> {
  let found = 0;
  for (const p of probes) {
    const hits = await retriever.retrieve({ sessionId: p.session, query: p.question, limit: 10, includeActive: true });
    if (hits.some((h) => p.evidence.has(h.event.id))) found += 1;
  }
  return found / probes.length;
}

const keywordsOf = (q: string) => [...new Set(q.toLowerCase().match(/[\p{L}\p{N}]{3,}/gu) ?? [])];

async function contenders(
  name: string,
  repo: SessionRepository,
  rows: Row[],
  pushDown: boolean,
  afterLoad: () => Promise<unknown> = async () => undefined,
  serverCpu?: () => number | null,
): Promise<void> {
  await load(repo);
  await afterLoad();
  const service = new DefaultSessionService(repo, { logger });
  if (pushDown) {
    const retriever = new RepositoryRetriever({ repository: repo });
    const row = await measure(
      `${name}: push-down searchEvents`,
      async (q) => (await retriever.retrieve({ sessionId: BIG, query: q })).length,
      serverCpu,
    );
    row.hitAt10 = await recall(retriever);
    rows.push(row);
  } else {
    const retriever = new Bm25Retriever({ sessionService: service });
    const row = await measure(
      `${name}: in-process Bm25Retriever`,
      async (q) => (await retriever.retrieve({ sessionId: BIG, query: q })).length,
    );
    row.hitAt10 = await recall(retriever);
    rows.push(row);
  }
  rows.push(
    await measure(`${name}: keyword filter (findEvents, any word)`, async (q) => {
      const words = keywordsOf(q);
      if (words.length === 0) return 0;
      return (await repo.findEvents(BIG, EventFilter.of({ keywords: words, matchMode: 'any', excludeArchived: false }))).length;
    }),
  );
}

const loadAtStart = os.loadavg()[0]!;
const rows: Row[] = [];
const dir = mkdtempSync(path.join(os.tmpdir(), 'search-latency-'));
try {
  await contenders('in-memory', new InMemorySessionRepository(), rows, false);
  const sqlite = new SqliteSessionRepository({ path: path.join(dir, 'bench.db'), logger, synchronous: 'NORMAL' });
  await contenders('SQLite FTS5', sqlite, rows, true);
  await sqlite.close();
  // One connection, so every query runs in the same server backend and its CPU time can be read.
  const pool = new pg.Pool({ connectionString: PG_URL, max: 1, idleTimeoutMillis: 0 });
  const prefix = `bench_${randomBytes(4).toString('hex')}`;
  try {
    await pool.query('SELECT 1');
    const repo = new PostgresSessionRepository({ pool, prefix, logger });
    // What autovacuum does after a bulk load, before the measurement: statistics, so that the planner chooses the
    // GIN index, and a vacuum. The load's compaction rewrote every row (archived), which leaves as many dead tuples
    // and a long GIN pending list; until a vacuum, every search scans both (measured: twice the server CPU per query).
    const backend = (await pool.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
    await contenders(
      'PostgreSQL',
      repo,
      rows,
      true,
      () => pool.query(`VACUUM ANALYZE ${prefix}_events`),
      () => backendCpuMs(backend),
    );
  } catch (error) {
    console.error(`PostgreSQL skipped: ${(error as Error).message}`);
  } finally {
    await dropPostgresStore(pool, prefix);
    await pool.end();
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}

const ms = (n: number | undefined) => (n === undefined ? '—' : n.toFixed(2));
const table = [
  '| contender | p50 ms | p95 ms | max ms | first query ms | CPU p50 / p95 ms | server CPU ms/query | hits/query | hit@10 (LoCoMo) |',
  '|---|---:|---:|---:|---:|---:|---:|---:|---:|',
  ...rows.map(
    (r) =>
      `| ${r.contender} | ${ms(r.p50)} | ${ms(r.p95)} | ${ms(r.max)} | ${ms(r.first)} | ${ms(r.cpuP50)} / ${ms(r.cpuP95)} | ${ms(
        r.serverCpuMean,
      )} | ${r.meanHits.toFixed(0)} | ${r.hitAt10 === undefined ? '—' : r.hitAt10.toFixed(3)} |`,
  ),
].join('\n');
const report = `# Search latency: push-down vs in-process (${EVENTS.toLocaleString('en')}-event session)

Generated by \`npx tsx benchmarks/search-latency.ts --events ${EVENTS} --queries ${QUERIES}\` on ${os.cpus().length} × ${os.cpus()[0]?.model ?? 'CPU'}, Node ${process.version},
${new Date().toISOString().slice(0, 10)}, load average (1 min) at the start ${loadAtStart.toFixed(1)} on ${os.cpus().length} cores. ${questions.length} LoCoMo questions as queries against one session of ${EVENTS.toLocaleString('en')} events
(LoCoMo turns, all but the last 20 archived) stored next to the ten LoCoMo conversations; limit 20. "first query" includes
building the in-process index. "hits/query": events returned (the keyword filter returns every event holding any
word of three letters or more, unranked). hit@10: share of ${probes.length} LoCoMo questions (adversarial left out) whose
evidence turn is among the first 10 hits when each conversation is searched with its own questions. PostgreSQL is
measured after \`VACUUM ANALYZE\` (what autovacuum does after a bulk load): without statistics the planner may scan
the session's rows instead of the GIN index, and before a vacuum every search also scans the dead row versions and
the GIN pending list that the load's compaction left (it rewrites every archived row). Wall times are what a caller waits on this shared machine; "CPU" is the CPU
time of this process per query (where the in-process and SQLite searches run), "server CPU" the mean CPU time of the
PostgreSQL backend per query (read from \`/proc\` over all queries, 10 ms ticks): what a query costs without waiting
for a core.

${table}
`;
mkdirSync('docs/benchmarks', { recursive: true });
writeFileSync('docs/benchmarks/search-latency.md', report);
console.log(report);
