// Where one `ContextAssembler.assemble` at 10,000 events spends its time on PostgreSQL, SQLite and Redis: every
// repository call timed (wall, and how many per assemble: the round trips), the retrieval (for Redis the
// in-process BM25 search, repository reads excluded), and the rest of the assembly in this process. Same session
// and request as benchmarks/recall-scaling.ts (`--parts assemble`): LoCoMo turns and questions, budget 4,000
// tokens (500 reserved), the question pending.
//   RECORDED_DIR=… node --conditions=session-compaction-source --import tsx benchmarks/assemble-split.ts \
//        [--backends postgres,sqlite,redis] [--events 10000] [--queries 200]
import { writeFileSync } from 'node:fs';
import { Session as Inspector } from 'node:inspector/promises';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import pg from 'pg';
import {
  ContextAssembler,
  DefaultSessionService,
  Messages,
  PostgresSessionRepository,
  RedisSessionRepository,
  RepositoryRetriever,
  SqliteSessionRepository,
  createDefaultLogger,
  type SessionRepository,
  type Retriever,
} from 'session-compaction';
import type { BatchAppendRepository } from 'session-compaction/spi';
import { arg } from './support/args.js';
import { dropPostgresStore } from './support/postgres.js';
import { deleteRedisPrefix } from './support/redis.js';
import { chatCorpus } from './support/chatCorpus.js';
import { fillArchive } from './support/fillArchive.js';

const EVENTS = Number(arg('events', '10000'));
const QUERIES = Number(arg('queries', '200'));
const BACKENDS = arg('backends', 'postgres,redis').split(',');
/** Writes a CPU profile of the measured assembles only (not the load) to `<profile>-<backend>.cpuprofile`. */
const PROFILE = arg('profile', '');
const PG_URL = process.env.PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const WINDOW = 20;
const logger = createDefaultLogger({ silent: true });
const { source, turns, questions } = chatCorpus(
  process.env.LOCOMO ?? path.resolve(process.env.RECORDED_DIR ?? '.', 'locomo/locomo10.json'),
);
type Repo = SessionRepository & BatchAppendRepository;

/** Per assemble: wall ms and calls of each timed step. */
type Sample = Map<string, { ms: number; calls: number }>;
let current: Sample | null = null;
const record = (step: string, ms: number) => {
  if (current === null) return;
  const s = current.get(step) ?? { ms: 0, calls: 0 };
  s.ms += ms;
  s.calls++;
  current.set(step, s);
};

/** The repository with every promise-returning call timed under `store.<method>`. */
function timedRepository<T extends object>(target: T): T {
  return new Proxy(target, {
    get(t, prop) {
      const value = Reflect.get(t, prop, t) as unknown;
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        const start = performance.now();
        const out = (value as (...a: unknown[]) => unknown).apply(t, args);
        if (out instanceof Promise) return out.finally(() => record(`store.${String(prop)}`, performance.now() - start));
        return out;
      };
    },
  });
}

function timedRetriever(r: Retriever): Retriever {
  const timed: Retriever = {
    retrieve: async (request) => {
      const start = performance.now();
      try {
        return await r.retrieve(request);
      } finally {
        record('retriever.retrieve (incl. its store calls)', performance.now() - start);
      }
    },
    findEventNeighbours: async (sessionId, ids, radius) => {
      const start = performance.now();
      try {
        return await r.findEventNeighbours!(sessionId, ids, radius);
      } finally {
        record('retriever.findEventNeighbours (incl. its store calls)', performance.now() - start);
      }
    },
  };
  // Reads started ahead are timed as the store calls they make (ContextAssembler overlaps them with the window read).
  const prepare = r.prepare;
  if (prepare !== undefined) timed.prepare = (sessionId) => prepare.call(r, sessionId);
  const withNeighbours = r.retrieveWithNeighbours;
  if (withNeighbours !== undefined) {
    timed.retrieveWithNeighbours = async (request, radius) => {
      const start = performance.now();
      try {
        return await withNeighbours.call(r, request, radius);
      } finally {
        record('retriever.retrieveWithNeighbours (incl. its store calls)', performance.now() - start);
      }
    };
  }
  return timed;
}

const quantile = (sorted: readonly number[], q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
const f = (n: number) => (n < 10 ? n.toFixed(2) : n.toFixed(1));

async function measure(name: string, repository: Repo, afterLoad: () => Promise<void>): Promise<string[]> {
  const timed = timedRepository(repository);
  const service = new DefaultSessionService(timed, { logger });
  const retriever = new RepositoryRetriever({ repository: timed, sessionService: service });
  const assembler = new ContextAssembler({ sessionService: service, retriever: timedRetriever(retriever) });
  const id = `split-${randomBytes(3).toString('hex')}`;
  await fillArchive(new DefaultSessionService(repository, { logger }), repository, id, EVENTS - WINDOW, WINDOW, turns);
  await afterLoad();
  const ask = (q: string) =>
    assembler.assemble({ sessionId: id, maxTokens: 4_000, reserveTokens: 500, pending: [Messages.user(q)] });
  // Warm-up with questions the measured ones never ask (as recall-scaling.ts: with 10, the first measured
  // assembles still ran code being compiled).
  for (const q of questions.slice(-100)) await ask(q);
  const samples: Sample[] = [];
  const totals: number[] = [];
  const cpus: number[] = [];
  const inspector = PROFILE === '' ? null : new Inspector();
  if (inspector !== null) {
    inspector.connect();
    await inspector.post('Profiler.enable');
    await inspector.post('Profiler.setSamplingInterval', { interval: 100 });
    await inspector.post('Profiler.start');
  }
  for (let i = 0; i < QUERIES; i++) {
    current = new Map();
    const c = process.cpuUsage();
    const t = performance.now();
    await ask(questions[(i + 10) % questions.length]!);
    const total = performance.now() - t;
    const used = process.cpuUsage(c);
    cpus.push((used.user + used.system) / 1000);
    totals.push(total);
    samples.push(current);
    current = null;
  }
  if (inspector !== null) {
    const { profile } = await inspector.post('Profiler.stop');
    writeFileSync(`${PROFILE}-${name}.cpuprofile`, JSON.stringify(profile));
    inspector.disconnect();
  }
  const steps = new Set(samples.flatMap((s) => [...s.keys()]));
  const rows = [
    `### ${name}`,
    '',
    '| step | calls per assemble | p50 (ms) | p95 (ms) | mean (ms) |',
    '|---|---:|---:|---:|---:|',
  ];
  const row = (step: string, values: number[], calls: number) => {
    const sorted = [...values].sort((a, b) => a - b);
    const mean = values.reduce((a, b) => a + b, 0) / values.length;
    rows.push(`| ${step} | ${calls.toFixed(1)} | ${f(quantile(sorted, 0.5))} | ${f(quantile(sorted, 0.95))} | ${f(mean)} |`);
  };
  for (const step of [...steps].sort()) {
    row(
      step,
      samples.map((s) => s.get(step)?.ms ?? 0),
      samples.reduce((n, s) => n + (s.get(step)?.calls ?? 0), 0) / samples.length,
    );
  }
  row('assemble (whole)', totals, 1);
  row('assemble CPU of this process', cpus, 1);
  const storeCalls = samples.reduce(
    (n, s) => n + [...s].filter(([k]) => k.startsWith('store.')).reduce((m, [, v]) => m + v.calls, 0),
    0,
  );
  rows.push('', `Repository calls per assemble: ${(storeCalls / samples.length).toFixed(1)}.`, '');
  return rows;
}

const out: string[] = [
  `Load average (1 min) at the start: ${os.loadavg()[0]!.toFixed(2)} on ${os.cpus().length} cores; ${EVENTS} events, ${QUERIES} queries; text: ${source}.`,
  '',
];
for (const name of BACKENDS) {
  const p = `bench_${randomBytes(4).toString('hex')}`;
  if (name === 'postgres') {
    const pool = new pg.Pool({ connectionString: PG_URL, max: 4 });
    const repository = new PostgresSessionRepository({ pool, prefix: p, logger });
    try {
      out.push(
        ...(await measure(name, repository, async () => {
          await pool.query(`VACUUM (ANALYZE) ${p}_events`);
          await pool.query(`VACUUM (ANALYZE) ${p}_sessions`);
          // The postings of the session search (schema version 12), which autovacuum would reach as it reaches the events.
          await pool.query(`VACUUM (ANALYZE) ${p}_event_terms`);
        })),
      );
    } finally {
      await repository.close();
      await dropPostgresStore(pool, p).catch(() => undefined);
      await pool.end();
    }
  } else if (name === 'sqlite') {
    const repository = new SqliteSessionRepository({ path: ':memory:', logger });
    try {
      out.push(...(await measure(name, repository, async () => {})));
    } finally {
      await repository.close();
    }
  } else if (name === 'redis') {
    const client = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1 });
    await client.connect();
    const repository = new RedisSessionRepository({ client, prefix: p, logger });
    try {
      out.push(...(await measure(name, repository, async () => {})));
    } finally {
      await deleteRedisPrefix(client, p);
      await repository.close();
      client.disconnect();
    }
  }
}
out.push(`Load average (1 min) at the end: ${os.loadavg()[0]!.toFixed(2)}.`);
console.log(out.join('\n'));
process.exit(0);
