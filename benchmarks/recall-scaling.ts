// Does a chat turn with recall cost the same at 100,000 archived events as at 1,000? SessionMemory turns (with
// and without recall) on every backend at two archive sizes, `ContextAssembler.assemble` at 10,000 events, and
// in-process retrieval at 100,000 events side by side with flexsearch on the same texts — all in one run.
//
//   node --import tsx benchmarks/recall-scaling.ts [--small 1000] [--large 100000] [--turns 60]
//        [--backends memory,sqlite,postgres,redis] [--assemble 10000] [--queries 200] [--parts turns,assemble,flexsearch]
//        [--runs 1]
//
// A turn: the user's question is appended, the prompt assembled (recall: RepositoryRetriever — SQLite FTS5 and
// PostgreSQL full-text push-down, in-process BM25 for memory and Redis), a model that answers at once (no
// network: the library's own cost only), the reply appended, and a sliding window of 20 events compacted after
// every turn (so each turn also archives, and the in-process index follows a compaction every turn). Text:
// LoCoMo turns and questions ($RECORDED_DIR or $LOCOMO), else a seeded synthetic chat. The first turns after
// loading (the cold index build) are left out; p50/p95 over the rest. Each archive size has a store of its own and
// the two sizes' turns alternate one by one, so a change in the shared machine's speed weighs on both alike.
// `--runs N` measures the turns N times, each on stores of its own: runs of the same code differ by more than one
// run's own turns say (docs/recall.md), so a ratio near its target is read from the median run and the spread.
// PostgreSQL and Redis from PG_URL / REDIS_URL; an unreachable one is skipped. Writes docs/benchmarks/recall-scaling.md and prints it.
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import pg from 'pg';
import { Index as FlexIndex } from 'flexsearch';
import {
  Bm25Retriever,
  ContextAssembler,
  DefaultSessionService,
  InMemorySessionRepository,
  Messages,
  PostgresSessionRepository,
  RedisSessionRepository,
  RepositoryRetriever,
  SqliteSessionRepository,
  createDefaultLogger,
  type SessionRepository,
} from 'session-compaction';
import type { BatchAppendRepository } from 'session-compaction/spi';
import { arg } from './support/args.js';
import { dropPostgresStore } from './support/postgres.js';
import { deleteRedisPrefix } from './support/redis.js';
import { chatCorpus } from './support/chatCorpus.js';
import { fillArchive } from './support/fillArchive.js';
import { turnMemory } from './support/turnMemory.js';

const SMALL = Number(arg('small', '1000'));
const LARGE = Number(arg('large', '100000'));
const TURNS = Number(arg('turns', '60'));
const WARMUP = 5;
const ASSEMBLE_EVENTS = Number(arg('assemble', '10000'));
const QUERIES = Number(arg('queries', '200'));
const BACKENDS = arg('backends', 'memory,sqlite,postgres,redis').split(',');
const PARTS = new Set(arg('parts', 'turns,assemble,flexsearch').split(','));
const RUNS = Number(arg('runs', '1'));
if (!Number.isInteger(RUNS) || RUNS < 1) throw new Error(`--runs must be a positive integer, got ${arg('runs', '1')}`);
const PG_URL = process.env.PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const LOCOMO = process.env.LOCOMO ?? path.resolve(process.env.RECORDED_DIR ?? '.', 'locomo/locomo10.json');
const WINDOW = 20;
const logger = createDefaultLogger({ silent: true });

const { source, turns, questions } = chatCorpus(LOCOMO);
const quantile = (sorted: readonly number[], q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
const ms = (n: number) => (Number.isNaN(n) ? '—' : n < 10 ? n.toFixed(2) : n.toFixed(1));
const prefix = () => `bench_${randomBytes(4).toString('hex')}`;

type Repo = SessionRepository & BatchAppendRepository;
interface Backend {
  name: string;
  repository: Repo;
  close: () => Promise<void>;
  /**
   * What the store's own maintenance does after a bulk load, run before measuring. PostgreSQL: `VACUUM (ANALYZE)`
   * — loading 100,000 archived events in compacted batches leaves about 700,000 dead entries in the active-window
   * index (each compaction archives in place and re-inserts its retained window), and the window statements'
   * bitmap scans walk them all until a vacuum removes them. Autovacuum would, on its own schedule (not inside a
   * measurement), and never on a server that runs with it off, as this machine's does.
   */
  afterLoad?: () => Promise<void>;
}

async function backend(name: string): Promise<Backend | null> {
  switch (name) {
    case 'memory':
      return { name, repository: new InMemorySessionRepository(), close: async () => {} };
    case 'sqlite': {
      const repository = new SqliteSessionRepository({ path: ':memory:', logger });
      return { name, repository, close: () => repository.close() };
    }
    case 'postgres': {
      const pool = new pg.Pool({ connectionString: PG_URL, max: 4 });
      try {
        await pool.query('SELECT 1');
      } catch {
        await pool.end();
        console.error('PostgreSQL unreachable: skipped');
        return null;
      }
      const p = prefix();
      const repository = new PostgresSessionRepository({ pool, prefix: p, logger });
      return {
        name,
        repository,
        close: async () => {
          await repository.close();
          await dropPostgresStore(pool, p).catch(() => undefined);
          await pool.end();
        },
        afterLoad: async () => {
          await pool.query(`VACUUM (ANALYZE) ${p}_events`);
          await pool.query(`VACUUM (ANALYZE) ${p}_sessions`);
          // The postings of the session search (schema version 12), which autovacuum would reach as it reaches the events.
          await pool.query(`VACUUM (ANALYZE) ${p}_event_terms`);
        },
      };
    }
    case 'redis': {
      const client = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1 });
      try {
        await client.connect();
      } catch {
        client.disconnect();
        console.error('Redis unreachable: skipped');
        return null;
      }
      const p = prefix();
      const repository = new RedisSessionRepository({ client, prefix: p, logger });
      return {
        name,
        repository,
        close: async () => {
          await deleteRedisPrefix(client, p);
          await repository.close();
          client.disconnect();
        },
      };
    }
    default:
      throw new Error(`unknown backend ${name}`);
  }
}

interface Timing {
  p50: number;
  p95: number;
  /** CPU time of this process (user + system): what the call costs here, without waiting for a core. */
  cpu50: number;
  /** Wall time of the store's search statements in the call (`searchEvents`, `searchEventsWithNeighbours`), p50. */
  search50: number;
  /** Wall time of the call without its search statements, p50: what the issue says may not grow with the archive. */
  rest50: number;
  /** Every call's wall time, in call order (call i of each contender was measured next to the others' call i). */
  walls: number[];
}

/** Wall milliseconds spent in the repository's search methods so far (see timeSearches). */
let searchClock = 0;

/**
 * Times the store's own search: the part of a turn with recall that may grow with the corpus (issue 27's
 * acceptance), so the rest of the turn can be read on its own.
 */
function timeSearches(repository: Repo): void {
  const target = repository as unknown as Record<string, unknown>;
  for (const name of ['searchEvents', 'searchEventsWithNeighbours']) {
    const original = target[name];
    if (typeof original !== 'function') continue;
    target[name] = async (...args: unknown[]) => {
      const t = performance.now();
      try {
        return await (original as (...a: unknown[]) => Promise<unknown>).apply(repository, args);
      } finally {
        searchClock += performance.now() - t;
      }
    };
  }
}

interface TurnRow {
  backend: string;
  size: number;
  withRecall: Timing;
  without: Timing;
  firstTurn: number;
}

/** Wall and CPU milliseconds of each call. */
async function timed(calls: number, run: (i: number) => Promise<unknown>): Promise<Timing> {
  return (await timedSideBySide(calls, [run]))[0]!;
}

/**
 * Each contender's call `i` in turn, the order reversed every other round, so that a change in the machine's
 * speed during the run (it is shared) weighs on every contender alike and a ratio between them stays honest.
 */
async function timedSideBySide(calls: number, runs: ReadonlyArray<(i: number) => Promise<unknown>>): Promise<Timing[]> {
  const samples = runs.map(() => ({ wall: [] as number[], cpu: [] as number[], search: [] as number[], rest: [] as number[] }));
  for (let i = 0; i < calls; i++) {
    const order = runs.map((_, k) => k);
    if (i % 2 === 1) order.reverse();
    for (const k of order) {
      const c = process.cpuUsage();
      const s = searchClock;
      const t = performance.now();
      await runs[k]!(i);
      const w = performance.now() - t;
      const used = process.cpuUsage(c);
      const x = samples[k]!;
      x.wall.push(w);
      x.search.push(searchClock - s);
      x.rest.push(w - (searchClock - s));
      x.cpu.push((used.user + used.system) / 1000);
    }
  }
  return samples.map(({ wall, cpu, search, rest }) => {
    const walls = [...wall];
    for (const list of [wall, cpu, search, rest]) list.sort((a, b) => a - b);
    return {
      walls,
      p50: quantile(wall, 0.5),
      p95: quantile(wall, 0.95),
      cpu50: quantile(cpu, 0.5),
      search50: quantile(search, 0.5),
      rest50: quantile(rest, 0.5),
    };
  });
}

/** Resamples drawn for a ratio's interval (see ratioInterval). */
const RESAMPLES = 2_000;

/**
 * The 95 % interval of p50(large) ÷ p50(small) by the bootstrap: turns drawn with replacement, each turn's two
 * sizes together (they ran next to each other), RESAMPLES times, from a fixed seed. It says how far the same run
 * could have landed from its ratio by chance, so a ratio near a target is read as near it.
 */
function ratioInterval(small: readonly number[], large: readonly number[]): [number, number] {
  let seed = 0x2f6b1d3;
  // mulberry32: a small seeded generator, so the interval is the same for the same samples.
  const random = () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
  const n = Math.min(small.length, large.length);
  const ratios: number[] = [];
  const a = new Array<number>(n);
  const b = new Array<number>(n);
  for (let r = 0; r < RESAMPLES; r++) {
    for (let i = 0; i < n; i++) {
      const k = Math.floor(random() * n);
      a[i] = small[k]!;
      b[i] = large[k]!;
    }
    a.sort((x, y) => x - y);
    b.sort((x, y) => x - y);
    ratios.push(quantile(b, 0.5) / quantile(a, 0.5));
  }
  ratios.sort((x, y) => x - y);
  return [quantile(ratios, 0.025), quantile(ratios, 0.975)];
}

/**
 * The same turns on a store of SMALL and one of LARGE archived events, side by side: each size has a store of its
 * own, and their turns alternate one by one, so that both sizes are measured under the same load.
 */
async function measureTurns(small: Backend, large: Backend): Promise<TurnRow[]> {
  const sides = [
    { b: small, size: SMALL },
    { b: large, size: LARGE },
  ].map(({ b, size }) => {
    const service = new DefaultSessionService(b.repository, { logger });
    const retriever = new RepositoryRetriever({ repository: b.repository, sessionService: service });
    const memories = {
      withRecall: turnMemory(service, logger, WINDOW, { retriever }),
      without: turnMemory(service, logger, WINDOW),
    };
    return { b, size, service, retriever, memories, id: '', row: { backend: b.name, size } as Partial<TurnRow> };
  });
  // The sessions without recall are written after those with it are measured: a session's own turns then come
  // last in its store, as they would in a deployment.
  for (const key of ['withRecall', 'without'] as const) {
    for (const side of sides) {
      side.id = `turns-${key}-${side.size}-${randomBytes(3).toString('hex')}`;
      await fillArchive(side.service, side.b.repository, side.id, side.size, WINDOW, turns);
      await side.b.afterLoad?.();
    }
    const turn = (side: (typeof sides)[number], i: number) =>
      side.memories[key].call({
        sessionId: side.id,
        userId: 'bench',
        messages: [{ role: 'user', content: questions[i % questions.length]! }],
      });
    for (const side of sides) {
      const t = performance.now();
      await turn(side, 0);
      if (key === 'withRecall') side.row.firstTurn = performance.now() - t;
    }
    for (let i = 1; i < WARMUP; i++) for (const side of sides) await turn(side, i);
    const timings = await timedSideBySide(
      TURNS,
      sides.map((side) => (i: number) => turn(side, i + WARMUP)),
    );
    sides.forEach((side, k) => (side.row[key] = timings[k]));
  }
  for (const side of sides) (side.retriever as unknown as { fallback?: Bm25Retriever }).fallback?.close?.();
  return sides.map((side) => side.row as TurnRow);
}

/**
 * Assembles run before the measured ones, with questions the measured ones never ask. With 10, the first 20
 * measured assembles still ran code being compiled (in-process: 5.6 ms on average against 1.8 ms p50, which put
 * p95 at 7.2 ms instead of 2.9 ms); the measured questions still find their events cold.
 */
const ASSEMBLE_WARM_UP = 100;

/** The warm-up questions: the last ASSEMBLE_WARM_UP of the list, which the measured ones do not reach. */
function assembleWarmUp(): string[] {
  return questions.length >= QUERIES + 10 + ASSEMBLE_WARM_UP
    ? questions.slice(questions.length - ASSEMBLE_WARM_UP)
    : Array.from({ length: ASSEMBLE_WARM_UP }, (_, i) => questions[i % questions.length]!);
}

interface AssembleRow extends Timing {
  backend: string;
  retriever: string;
}

async function measureAssemble(b: Backend): Promise<AssembleRow> {
  const service = new DefaultSessionService(b.repository, { logger });
  const retriever = new RepositoryRetriever({ repository: b.repository, sessionService: service });
  const assembler = new ContextAssembler({ sessionService: service, retriever });
  const id = `assemble-${randomBytes(3).toString('hex')}`;
  await fillArchive(service, b.repository, id, ASSEMBLE_EVENTS - WINDOW, WINDOW, turns);
  await b.afterLoad?.();
  const ask = (q: string) =>
    assembler.assemble({ sessionId: id, maxTokens: 4_000, reserveTokens: 500, pending: [Messages.user(q)] });
  for (const q of assembleWarmUp()) await ask(q);
  const timing = await timed(QUERIES, (i) => ask(questions[(i + 10) % questions.length]!));
  return { backend: b.name, retriever: retriever.pushesDown ? 'push-down' : 'in-process BM25', ...timing };
}

interface SearchRow extends Timing {
  contender: string;
  build: number;
}

/** Bm25Retriever and flexsearch over the same 100,000 texts, the same queries, limit 20. */
async function measureFlexsearch(): Promise<SearchRow[]> {
  const repository = new InMemorySessionRepository();
  const service = new DefaultSessionService(repository, { logger });
  await fillArchive(service, repository, 'flex', LARGE - WINDOW, WINDOW, turns);
  const log = await service.getEvents('flex');
  const rows: SearchRow[] = [];
  const run = async (contender: string, build: () => Promise<(q: string) => Promise<unknown>>) => {
    const t = performance.now();
    const search = await build();
    const built = performance.now() - t;
    for (const q of questions.slice(0, 20)) await search(q);
    rows.push({ contender, build: built, ...(await timed(QUERIES, (i) => search(questions[(i + 20) % questions.length]!))) });
  };
  await run('Bm25Retriever (InvertedIndex, BM25+ top-k)', async () => {
    const retriever = new Bm25Retriever({ sessionService: service });
    await retriever.retrieve({ sessionId: 'flex', query: 'warm up' });
    return (q) => retriever.retrieve({ sessionId: 'flex', query: q, limit: 20 });
  });
  const flex = new FlexIndex();
  let hits = 0;
  await run('flexsearch Index (default options; every word must match)', async () => {
    log.forEach((e, i) => {
      if (e.text !== null) flex.add(i, e.text);
    });
    return async (q) => (hits += flex.search(q, { limit: 20 }).length);
  });
  const strict = hits;
  hits = 0;
  // `suggest`: documents matching only some of the words are returned too, as BM25's OR does.
  await run(
    'flexsearch Index, `suggest: true` (any word may match)',
    async () => async (q) => (hits += flex.search(q, { limit: 20, suggest: true }).length),
  );
  console.error(
    `flexsearch hits per query: ${(strict / (QUERIES + 20)).toFixed(1)} strict, ${(hits / (QUERIES + 20)).toFixed(1)} with suggest`,
  );
  return rows;
}

/** One run's turns of one backend, both sizes, and its ratio (wall p50 with recall, large ÷ small). */
interface TurnRun {
  backend: string;
  rows: TurnRow[];
  ratio: number;
}

const loadAtStart = os.loadavg()[0]!;
const turnRuns: TurnRun[] = [];
const assembleRows: AssembleRow[] = [];
let searchRows: SearchRow[] = [];
async function measureTurnRun(name: string): Promise<void> {
  const small = await backend(name);
  const large = small === null ? null : await backend(name);
  try {
    if (small === null || large === null) return;
    timeSearches(small.repository);
    timeSearches(large.repository);
    const rows = await measureTurns(small, large);
    const [s, l] = [SMALL, LARGE].map((size) => rows.find((r) => r.size === size)!);
    turnRuns.push({ backend: name, rows, ratio: l!.withRecall.p50 / s!.withRecall.p50 });
  } finally {
    await small?.close();
    await large?.close();
  }
}
// Runs after the first go round every backend again, so that each backend's runs spread over the whole measurement.
for (let run = 0; run < RUNS; run++) {
  for (const name of BACKENDS) {
    if (PARTS.has('turns')) await measureTurnRun(name);
    if (RUNS > 1) console.error(`${name} turns: run ${run + 1} of ${RUNS} done`);
  }
}
/** A backend's runs, lowest ratio first. */
const runsOf = (name: string) => turnRuns.filter((r) => r.backend === name).sort((a, b) => a.ratio - b.ratio);
/** Per backend, the run whose ratio is the median of its runs (the lower middle one of an even count). */
const medianRuns = BACKENDS.flatMap((name) => {
  const runs = runsOf(name);
  return runs.length === 0 ? [] : [runs[Math.floor((runs.length - 1) / 2)]!];
});
const turnRows: TurnRow[] = medianRuns.flatMap((r) => r.rows);
for (const name of BACKENDS) {
  if (PARTS.has('assemble')) {
    const b = await backend(name);
    if (b !== null) {
      timeSearches(b.repository);
      try {
        assembleRows.push(await measureAssemble(b));
      } finally {
        await b.close();
      }
    }
  }
  console.error(`${name} done`);
}
if (PARTS.has('flexsearch')) searchRows = await measureFlexsearch();

const lines: string[] = [
  '# Recall at any archive size',
  '',
  `Generated by \`node --import tsx benchmarks/recall-scaling.ts\` on ${os.cpus().length} × ${os.cpus()[0]?.model.trim()}, Node ${process.version}, ${new Date().toISOString().slice(0, 10)}. Text: ${source}.`,
  `Load average (1 min) at the start: ${loadAtStart.toFixed(1)} on ${os.cpus().length} cores (the machine is shared: figures are wall times).`,
  'PostgreSQL: `VACUUM (ANALYZE)` of the events, sessions and postings tables after each load, before measuring.',
  '',
];
if (turnRows.length > 0) {
  lines.push(
    '## A SessionMemory turn, 1,000 vs 100,000 archived events',
    '',
    `${TURNS} turns after ${WARMUP} left out (the first builds the in-process index); a model that answers at once; a 20-event`,
    "sliding window compacted after every turn. Each size has a store of its own, and the two sizes' turns alternate",
    'one by one (the order reversed every other turn), so both are measured under the same load.',
    'Recall: `RepositoryRetriever` (push-down on SQLite and PostgreSQL,',
    'in-process BM25 on memory and Redis), default settings (40 hits, 2 neighbours).',
    `The ratio's interval: turns resampled with replacement (both sizes of a turn together), ${RESAMPLES.toLocaleString('en-US')} times; 95 % of`,
    "the resampled ratios fall in it. It is how far this run's ratio could have landed by chance, not the spread between runs.",
    ...(RUNS > 1
      ? [
          `Measured ${RUNS} times, each run on stores of its own; the tables show, per backend, the run whose ratio is the`,
          'median of its runs, and the last table every run.',
        ]
      : []),
    '',
    '| backend | archived | with recall p50 (ms) | p95 (ms) | CPU p50 (ms) | without recall p50 (ms) | p95 (ms) | CPU p50 (ms) | first turn with recall (ms) |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|',
  );
  for (const r of turnRows) {
    lines.push(
      `| ${r.backend} | ${r.size.toLocaleString('en-US')} | ${ms(r.withRecall.p50)} | ${ms(r.withRecall.p95)} | ${ms(r.withRecall.cpu50)} | ${ms(r.without.p50)} | ${ms(r.without.p95)} | ${ms(r.without.cpu50)} | ${ms(r.firstTurn)} |`,
    );
  }
  lines.push(
    '',
    '| backend | with recall: large ÷ small (wall p50) | its 95 % interval (bootstrap) | (CPU p50) | its search p50, small → large (ms) | the rest of the turn: large ÷ small (wall p50) | without recall: large ÷ small (wall p50) | (CPU p50) |',
    '|---|---:|---:|---:|---:|---:|---:|---:|',
  );
  for (const name of BACKENDS) {
    const small = turnRows.find((r) => r.backend === name && r.size === SMALL);
    const large = turnRows.find((r) => r.backend === name && r.size === LARGE);
    if (small === undefined || large === undefined) continue;
    // The in-process retrievers rank in JS: no store search to time apart.
    const pushedDown = small.withRecall.search50 > 0 || large.withRecall.search50 > 0;
    const [lo, hi] = ratioInterval(small.withRecall.walls, large.withRecall.walls);
    lines.push(
      `| ${name} | ${(large.withRecall.p50 / small.withRecall.p50).toFixed(2)}× | ${lo.toFixed(2)}–${hi.toFixed(2)}× | ${(large.withRecall.cpu50 / small.withRecall.cpu50).toFixed(2)}× | ${pushedDown ? `${ms(small.withRecall.search50)} → ${ms(large.withRecall.search50)}` : '— (in process, part of the rest)'} | ${(large.withRecall.rest50 / small.withRecall.rest50).toFixed(2)}× | ${(large.without.p50 / small.without.p50).toFixed(2)}× | ${(large.without.cpu50 / small.without.cpu50).toFixed(2)}× |`,
    );
  }
  lines.push('');
  if (RUNS > 1) {
    lines.push(
      `| backend | with recall: large ÷ small (wall p50), each of the ${RUNS} runs in order | median (the lower middle of an even count) | range |`,
      '|---|---|---:|---:|',
    );
    for (const name of BACKENDS) {
      const sorted = runsOf(name).map((r) => r.ratio);
      if (sorted.length === 0) continue;
      const inOrder = turnRuns.filter((r) => r.backend === name).map((r) => `${r.ratio.toFixed(2)}×`);
      // The median run's ratio: the same run the tables above show.
      const mid = sorted[Math.floor((sorted.length - 1) / 2)]!;
      lines.push(
        `| ${name} | ${inOrder.join(', ')} | ${mid.toFixed(2)}× | ${sorted[0]!.toFixed(2)}–${sorted[sorted.length - 1]!.toFixed(2)}× |`,
      );
    }
    lines.push('');
  }
}
if (assembleRows.length > 0) {
  lines.push(
    `## \`ContextAssembler.assemble\` at ${ASSEMBLE_EVENTS.toLocaleString('en-US')} events`,
    '',
    `${QUERIES} questions after ${ASSEMBLE_WARM_UP} warm-up ones (other questions: the measured ones meet their events cold), budget 4,000`,
    'tokens (500 reserved), the question pending.',
    '',
    '| backend | retrieval | p50 (ms) | p95 (ms) | CPU p50 (ms) |',
    '|---|---|---:|---:|---:|',
    ...assembleRows.map((r) => `| ${r.backend} | ${r.retriever} | ${ms(r.p50)} | ${ms(r.p95)} | ${ms(r.cpu50)} |`),
    '',
  );
}
if (searchRows.length > 0) {
  lines.push(
    `## In-process retrieval at ${LARGE.toLocaleString('en-US')} events, side by side with flexsearch`,
    '',
    `The same texts and ${QUERIES} questions (after 20 warm-up ones), 20 hits. Bm25Retriever's time is a whole`,
    '`retrieve` (session lookup, version check, ranking, the archived events returned); flexsearch is its bare',
    'index search returning ids (no ranking by BM25, no access rules).',
    '',
    '| contender | index build (ms) | p50 (ms) | p95 (ms) | CPU p50 (ms) |',
    '|---|---:|---:|---:|---:|',
    ...searchRows.map((r) => `| ${r.contender} | ${ms(r.build)} | ${ms(r.p50)} | ${ms(r.p95)} | ${ms(r.cpu50)} |`),
    '',
  );
}
const out = lines.join('\n');
const dir = path.resolve('docs/benchmarks');
if (!existsSync(dir)) mkdirSync(dir, { recursive: true });
writeFileSync(path.join(dir, 'recall-scaling.md'), out + '\n');
console.log(out);
process.exit(0);
